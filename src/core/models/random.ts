/**
 * Seeded pseudo-random numbers for the model code: parameter initialisation, sampling and data
 * shuffling. mulberry32 (a 32-bit state generator, good enough for sampling and init, not for
 * cryptography) plus Box-Muller normals. Never Math.random: a run is reproducible from its seed.
 *
 * Tested through test/core/models/hf/sampler.test.ts (seeded sampling reproducible) and
 * hf/labCache.test.ts, hf/labFolder.test.ts (a lab folder's initial weights: same seed, same
 * bytes; another seed, other weights).
 */

import { mulberry32, shuffleInPlace, type Uniform } from '../util/random';

export { mulberry32, type Uniform };

/** Mixes integers into one 32-bit seed (a stream per row, per parameter, per epoch). */
export function mixSeed(...parts: number[]): number {
  let h = 0x811c9dc5;
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0), 0x01000193) >>> 0;
    h = Math.imul(h ^ (h >>> 13), 0x5bd1e995) >>> 0;
    h ^= h >>> 15;
  }
  return h >>> 0;
}

/** n standard-normal float32 values scaled by std (Box-Muller on a mulberry32 stream). */
export function normalArray(n: number, std: number, seed: number): Float32Array {
  const rand = mulberry32(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    const u1 = 1 - rand(); // (0, 1]: log is finite
    const u2 = rand();
    const r = Math.sqrt(-2 * Math.log(u1)) * std;
    out[i] = r * Math.cos(2 * Math.PI * u2);
    if (i + 1 < n) out[i + 1] = r * Math.sin(2 * Math.PI * u2);
  }
  return out;
}

/** 0..n-1 shuffled by util/random.ts's Fisher-Yates. */
export function permutation(n: number, rand: Uniform): number[] {
  return shuffleInPlace(
    Array.from({ length: n }, (_, i) => i),
    rand,
  );
}
