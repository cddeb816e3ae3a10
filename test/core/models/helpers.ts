// Shared fixtures of the model tests: seeded random ids and the largest elementwise difference.
import { mulberry32 } from '../../../src/core/models/random';

/** Seeded ids in [lo, hi) (default: the character vocabulary's ordinary characters). */
export function randomIds(n: number, seed: number, lo = 12, hi = 108): number[] {
  const r = mulberry32(seed);
  return Array.from({ length: n }, () => lo + Math.floor(r() * (hi - lo)));
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}
