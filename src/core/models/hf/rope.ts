/**
 * Rotary position embeddings of the Hugging Face family: the inverse frequencies (headDim / 2 of
 * them) and the factor applied to cos and sin, per scaling type, as transformers'
 * modeling_rope_utils.py computes them (`_compute_default_rope_parameters`, `_linear_scaling_`,
 * `_llama3_`, `_yarn_`), and the rotate-half rotation itself for the float64 reference.
 *
 * Differs from transformers only in precision: computed in float64 here, in float32 there
 * (relative differences ~1e-7; the tfjs path rounds to float32 when it builds its tables).
 * Pure: no tfjs, no I/O. Tests: test/core/models/hf/rope.test.ts (against values computed by
 * transformers 4.57 and 5.18, test/fixtures/hf/rope/).
 */
import type { RopeConfig, RopeType } from './types';

export interface RopeFrequencies {
  /** inv_freq_i for i < headDim / 2; the angle of pair i at position p is p * invFreq[i]. */
  invFreq: Float64Array;
  /** Multiplies both cos and sin (yarn's attention factor; 1 for the other types). */
  attentionScale: number;
}

/** theta^(-2i/d): the unscaled frequencies. */
function baseInvFreq(theta: number, dim: number): Float64Array {
  return Float64Array.from({ length: dim / 2 }, (_, i) => 1 / theta ** ((2 * i) / dim));
}

function need(rope: RopeConfig, key: keyof RopeConfig): number {
  const v = rope[key];
  if (typeof v !== 'number') throw new Error(`rope: ${rope.type} scaling needs "${key}"`);
  return v;
}

/** yarn's mscale: 0.1 * m * ln(s) + 1 for s > 1. */
function yarnMscale(scale: number, m = 1): number {
  return scale <= 1 ? 1 : 0.1 * m * Math.log(scale) + 1;
}

const ROPE_FREQUENCIES = {
  default: (rope, dim) => ({ invFreq: baseInvFreq(rope.theta, dim), attentionScale: 1 }),

  // Positions divided by `factor`, i.e. every frequency divided by it.
  linear: (rope, dim) => ({ invFreq: baseInvFreq(rope.theta, dim).map((f) => f / need(rope, 'factor')), attentionScale: 1 }),

  // Llama 3.1: wavelengths shorter than old/high_freq_factor kept, longer than old/low_freq_factor
  // divided by factor, a linear blend in between (smooth in old/wavelength).
  llama3: (rope, dim) => {
    const factor = need(rope, 'factor');
    const low = need(rope, 'lowFreqFactor');
    const high = need(rope, 'highFreqFactor');
    const old = need(rope, 'originalMaxPositions');
    const lowWavelen = old / low;
    const highWavelen = old / high;
    const invFreq = baseInvFreq(rope.theta, dim).map((f) => {
      const wavelen = (2 * Math.PI) / f;
      if (wavelen < highWavelen) return f;
      if (wavelen > lowWavelen) return f / factor;
      const smooth = (old / wavelen - low) / (high - low);
      return (1 - smooth) * (f / factor) + smooth * f;
    });
    return { invFreq, attentionScale: 1 };
  },

  // YaRN (Peng et al. 2023): interpolated (f / factor) below a correction range of dimensions,
  // extrapolated (f) above it, a linear ramp in between; cos and sin scaled by the attention factor.
  yarn: (rope, dim) => {
    const factor = need(rope, 'factor');
    const base = rope.theta;
    const original = need(rope, 'originalMaxPositions');
    const betaFast = rope.betaFast || 32; // transformers: `get("beta_fast") or 32`
    const betaSlow = rope.betaSlow || 1;
    let attentionScale = rope.attentionFactor;
    if (attentionScale == null) {
      attentionScale = rope.mscale && rope.mscaleAllDim ? yarnMscale(factor, rope.mscale) / yarnMscale(factor, rope.mscaleAllDim) : yarnMscale(factor);
    }
    const correctionDim = (rotations: number): number => (dim * Math.log(original / (rotations * 2 * Math.PI))) / (2 * Math.log(base));
    let low = correctionDim(betaFast);
    let high = correctionDim(betaSlow);
    if (rope.truncate ?? true) {
      low = Math.floor(low);
      high = Math.ceil(high);
    }
    low = Math.max(low, 0);
    high = Math.min(high, dim - 1);
    if (low === high) high += 0.001; // transformers: "prevent singularity"
    const invFreq = baseInvFreq(base, dim).map((f, i) => {
      const ramp = Math.min(1, Math.max(0, (i - low) / (high - low)));
      const extrapolation = 1 - ramp;
      return (f / factor) * (1 - extrapolation) + f * extrapolation;
    });
    return { invFreq, attentionScale };
  },
} satisfies Record<RopeType, (rope: RopeConfig, dim: number) => RopeFrequencies>;

/** The inverse frequencies and cos/sin factor of `rope` for heads of width `headDim` (even). */
export function ropeInvFreq(rope: RopeConfig, headDim: number): RopeFrequencies {
  if (!Number.isInteger(headDim) || headDim < 2 || headDim % 2 !== 0) throw new Error(`rope: head_dim ${headDim} must be a positive even integer`);
  const compute = ROPE_FREQUENCIES[rope.type];
  if (!compute) throw new Error(`rope: unknown type "${rope.type}" (supported: ${Object.keys(ROPE_FREQUENCIES).join(', ')})`);
  return compute(rope, headDim);
}

/**
 * Rotate-half RoPE of one head vector at `position`, in place (float64):
 * x' = x * cos + cat(-x2, x1) * sin with emb = cat(f, f), cos and sin times `attentionScale`.
 */
export function applyRope(x: Float64Array, offset: number, position: number, freq: RopeFrequencies): void {
  const half = freq.invFreq.length;
  for (let j = 0; j < half; j++) {
    const angle = position * freq.invFreq[j];
    const c = Math.cos(angle) * freq.attentionScale;
    const s = Math.sin(angle) * freq.attentionScale;
    const x1 = x[offset + j];
    const x2 = x[offset + j + half];
    x[offset + j] = x1 * c - x2 * s;
    x[offset + j + half] = x2 * c + x1 * s;
  }
}
