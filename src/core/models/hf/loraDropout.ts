/**
 * LoRA dropout as peft applies it (peft tuners/lora/layer.py, Linear.forward):
 *   y = x W + scale * (dropout(x) A^T) B^T
 * on the INPUT of each adapted linear, before A (the base product reads x unchanged), inverted:
 * a kept entry is multiplied by 1 / (1 - p), a dropped one is 0. Every adapted module draws its
 * own mask, as peft gives each LoRA linear its own nn.Dropout (q, k and v read the same rows and
 * still drop different entries).
 *
 * Only in the update's gradient pass (policies/hf.ts `score` with the update's noise; model.ts
 * `hidden(..., dropout)`): sampling, the old log-probs, the KL reference and evaluation run the
 * adapter without it, as peft does in eval mode. How the PPO ratio reads that: see policies/hf.ts
 * `score`.
 *
 * Seeded, not torch's generator (the law is the same, the draws are not): row b of a [B, T]
 * batch draws from one mulberry32 stream per (seed, rowKeys[b], target weight name), in the order
 * of the row's token positions from its first real token (a left-padded row's pad columns take
 * no draws and are dropped: nothing reads them), u < p dropping the entry. A row's mask on its own
 * tokens therefore does not depend on the rows it is batched with nor on how far the batch is
 * padded on either side: splitting a mini-batch into micro-batches draws the same
 * masks, and recomputing a layer in the backward (model.ts `recompute`) redraws the mask it used
 * forward. The update seeds it from (run seed, step, epoch) and keys rows by member
 * (train/update.ts), so an exact resume stays exact.
 *
 * Cost: the masks are drawn on the CPU (as tfjs's own tf.dropout does), B * T * in uniforms per
 * adapted module per layer per forward (twice with recomputation), and each is one [B*T, in]
 * float32 tensor that the tape keeps with the dropped input (two extra [B*T, in] blocks per
 * adapted module and layer, while dropout 0 keeps none).
 *
 * Not here: the adapters themselves (model.ts). Tests: test/core/models/hf/loraDropout.test.ts
 * (masks, the forward against a float64 reference with the same masks, gradients against finite
 * differences, recomputation), test/core/train/hfDropout.test.ts (the update, resume, export).
 */
import * as tf from '@tensorflow/tfjs';
import { fnv1a32, mulberry32 } from '../../util/random';
import { mixSeed } from '../random';

/** What one training forward drops: the rate and the draw. */
export interface LoraDropout {
  /** lora_dropout, in [0, 1); 0 changes nothing. */
  p: number;
  /** The gradient pass's seed (train/update.ts). */
  seed: number;
  /** One integer key per batch row (the member it scores): its mask depends on it, not on the row's place. */
  rowKeys: readonly number[];
}

/** The input transform of one adapted linear in one forward: rows x [B*T, in] -> dropout(x) [B*T, in]. */
export type LoraInputDropout = (x: tf.Tensor2D) => tf.Tensor2D;

/** Checks a rate: lora_dropout must be in [0, 1). */
export function checkDropoutRate(p: number, where: string): void {
  if (!(Number.isFinite(p) && p >= 0 && p < 1)) throw new Error(`${where}: lora dropout ${p} must be in [0, 1)`);
}

/**
 * The mask of `target` for a batch of rowKeys.length rows x T columns x `features` inputs, row-major
 * [B*T, features]: 0 (dropped) or 1 / (1 - p) (kept), as float32. `padCounts[b]`: left-padding
 * columns of row b (default none), which are 0 and take no draws. Deterministic in its arguments.
 */
export function loraDropoutMask(d: LoraDropout, target: string, T: number, features: number, padCounts?: readonly number[]): Float32Array {
  checkDropoutRate(d.p, `LoRA dropout of "${target}"`);
  const keep = Math.fround(1 / (1 - d.p));
  const perRow = T * features;
  const out = new Float32Array(d.rowKeys.length * perRow);
  const t = fnv1a32(target);
  d.rowKeys.forEach((key, b) => {
    const rand = mulberry32(mixSeed(d.seed, key, t));
    for (let i = b * perRow + (padCounts?.[b] ?? 0) * features, end = (b + 1) * perRow; i < end; i++) out[i] = rand() < d.p ? 0 : keep;
  });
  return out;
}

/**
 * The adapter with each factor pair's input dropout attached for one forward of B = rowKeys.length
 * rows x T columns (`padCounts`: left padding per row, as `loraDropoutMask`); the adapter itself
 * (no copy) when there is none to apply (no adapter, no dropout, p = 0: the path is then the plain
 * one, bit for bit).
 */
export function withLoraDropout<L extends { drop?: LoraInputDropout }>(
  adapter: ReadonlyMap<string, L> | null,
  d: LoraDropout | undefined,
  B: number,
  T: number,
  padCounts?: readonly number[],
): ReadonlyMap<string, L> | null {
  if (!adapter || !d || d.p === 0) return adapter;
  checkDropoutRate(d.p, 'LoRA dropout');
  if (d.rowKeys.length !== B) throw new Error(`LoRA dropout: ${d.rowKeys.length} row keys for a batch of ${B} rows`);
  const out = new Map<string, L>();
  for (const [target, factors] of adapter) {
    const drop: LoraInputDropout = (x) => {
      const [N, features] = x.shape;
      if (N !== B * T) throw new Error(`LoRA dropout of "${target}": ${N} rows, expected ${B} x ${T}`);
      return tf.mul(x, tf.tensor2d(loraDropoutMask(d, target, T, features, padCounts), [N, features])) as tf.Tensor2D; // [B*T, in]
    };
    out.set(target, { ...factors, drop });
  }
  return out;
}
