/**
 * The one seeded generator of the core: mulberry32 (32-bit state, period 2^32; good for
 * sampling, init, shuffles and task generation, not for cryptography), the one Fisher-Yates
 * shuffle on it, and the FNV-1a hash that turns a string into a seed. Never Math.random: a run
 * is reproducible from its seed. models/random.ts (seed mixing, normals, permutations),
 * data/prng.ts (string seeds, picks) and eval/expr.ts (sample points) build on it.
 * Tested by test/core/util/random.test.ts (pinned draws) and the generators' determinism tests.
 */

/** A stream of uniforms in [0, 1). */
export type Uniform = () => number;

export function mulberry32(seed: number): Uniform {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fisher-Yates (Durstenfeld) shuffle of `items` in place, j = floor(u * (i + 1)) from the last index down; returns `items`. */
export function shuffleInPlace<T>(items: T[], rand: Uniform): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

/** FNV-1a 32-bit hash of a string's UTF-16 code units (string seeds). */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
