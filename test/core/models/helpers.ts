// Shared fixtures of the model tests: a micro config (fast on wasm) and seeded random ids.
import { modelConfig, type ModelConfig } from '../../../src/core/models/config';
import { mulberry32 } from '../../../src/core/models/random';

/** d32 x 2 layers, 2 heads, context 64: runs in milliseconds on wasm. */
export function microConfig(overrides: Partial<ModelConfig> = {}): ModelConfig {
  return modelConfig('tiny', { dModel: 32, nLayers: 2, nHeads: 2, contextLength: 64, initStd: 0.1, ...overrides });
}

/** Seeded ids in [lo, hi). */
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
