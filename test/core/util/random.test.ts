/**
 * The core's one seeded generator, shuffle and string hash: draws pinned to values computed
 * outside this code (a Python mulberry32, published FNV-1a test vectors), and the shared
 * shuffle against the two Fisher-Yates loops it replaced (data/prng.ts's via `int(0, i)`,
 * models/random.ts's `permutation`), so every seed keeps its draws.
 */
import { describe, expect, it } from 'vitest';
import { createRng, hashSeed } from '../../../src/core/data/prng';
import { permutation } from '../../../src/core/models/random';
import { fnv1a32, mulberry32, shuffleInPlace, type Uniform } from '../../../src/core/util/random';

describe('mulberry32', () => {
  it('first draws of seeds 1 and 12345 (pinned by an independent Python implementation)', () => {
    const a = mulberry32(1);
    expect([a(), a(), a()]).toEqual([0.6270739405881613, 0.002735721180215478, 0.5274470399599522]);
    const b = mulberry32(12345);
    expect([b(), b(), b()]).toEqual([0.9797282677609473, 0.3067522644996643, 0.484205421525985]);
  });
});

describe('fnv1a32', () => {
  it('published FNV-1a 32-bit vectors', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });
  it('hashSeed: numbers pass through as uint32, strings hash', () => {
    expect(hashSeed(-1)).toBe(0xffffffff);
    expect(hashSeed('foobar')).toBe(0xbf9cf968);
  });
});

/** The loop data/prng.ts had: j = int(0, i) = 0 + floor(u * (i - 0 + 1)), on a copy. */
function oldPrngShuffle<T>(items: readonly T[], next: Uniform): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = 0 + Math.floor(next() * (i - 0 + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

describe('shuffleInPlace: the same draws as the loops it replaced', () => {
  it('createRng(seed).shuffle equals the old prng loop on the same stream, for many seeds and lengths', () => {
    for (let seed = 0; seed < 50; seed++) {
      const items = Array.from({ length: seed % 17 }, (_, i) => `x${i}`);
      expect(createRng(`s${seed}`).shuffle(items)).toEqual(oldPrngShuffle(items, mulberry32(hashSeed(`s${seed}`))));
    }
  });
  it('equals models/random.ts permutation on 0..n-1, and returns its argument', () => {
    for (let seed = 0; seed < 50; seed++) {
      const n = (seed * 7) % 23;
      const idx = Array.from({ length: n }, (_, i) => i);
      const out = shuffleInPlace(idx, mulberry32(seed));
      expect(out).toBe(idx);
      expect(out).toEqual(permutation(n, mulberry32(seed)));
    }
  });
  it('a shuffle is a permutation, and not the identity for a long list', () => {
    const out = createRng(7).shuffle(Array.from({ length: 100 }, (_, i) => i));
    expect([...out].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(out).not.toEqual(Array.from({ length: 100 }, (_, i) => i));
  });
});
