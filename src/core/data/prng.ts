/**
 * A seeded PRNG (mulberry32) for task generation and anything else that must be reproducible:
 * the same seed gives the same stream on every machine. Never Math.random.
 * String seeds are hashed with FNV-1a; the stream, the shuffle and the hash are util/random.ts's.
 * Tested through the generators' determinism tests.
 */

import { fnv1a32, mulberry32, shuffleInPlace } from '../util/random';

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [lo, hi], both inclusive. */
  int(lo: number, hi: number): number;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
  /** A shuffled copy (Fisher-Yates). */
  shuffle<T>(items: readonly T[]): T[];
  /** True with probability p. */
  chance(p: number): boolean;
}

/** FNV-1a 32-bit hash of a string, for string seeds. */
export function hashSeed(seed: string | number): number {
  return typeof seed === 'number' ? seed >>> 0 : fnv1a32(seed);
}

export function createRng(seed: string | number): Rng {
  const next = mulberry32(hashSeed(seed));
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));
  return {
    next,
    int,
    pick: (items) => {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[int(0, items.length - 1)];
    },
    shuffle: (items) => shuffleInPlace(items.slice(), next),
    chance: (p) => next() < p,
  };
}
