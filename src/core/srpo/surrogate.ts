/**
 * The clipped surrogate shared by every variant, for any "ratio unit" (an event, a member or a
 * token), plus the ratio and clip diagnostics of those units. Pure tfjs, call inside tf.tidy.
 *
 *   Lc   = clamp(L, -20, 20)                       clamp before exp (SRPO.md point 3, as verl)
 *   rho  = exp(Lc)
 *   psi  = min(rho A, clip(rho, 1 - eps_low, 1 + eps_high) A)
 *   psi  = max(psi, c A) where A < 0               optional dual clip (verl, c = 3)
 *
 * Gradients: inside the clip range tf.minimum routes the gradient to rho A (ties go to the
 * first argument), outside it the clipped branch is chosen and clipByValue's gradient is 0, so
 * a clipped unit contributes exactly zero. Beyond the ±20 clamp the gradient is 0 as well.
 *
 * `weight` says which units count for the diagnostics (1 for events and members; the mask for
 * tokens) and `weightTotal` is their number (>= 1). A trainer that splits a mini-batch passes the
 * whole mini-batch's total, so a micro-batch's means are its share of the mini-batch's and add up
 * across micro-batches (`SURROGATE_METRIC_COMBINE`).
 */
import * as tf from '@tensorflow/tfjs';
import { LOG_RATIO_CLAMP, type ObjectiveConfig } from './config';

/**
 * How each diagnostic of a micro-batch combines into its mini-batch's (train/update.ts): the means
 * and the clamped count divide by the whole mini-batch's totals or none, so they add up; the
 * extremes take the extreme (absent in a micro-batch where no unit counts).
 */
export const SURROGATE_METRIC_COMBINE = {
  'clip/frac_low': 'sum',
  'clip/frac_high': 'sum',
  'clip/frac': 'sum',
  'clip/frac_dual': 'sum',
  'ratio/mean': 'sum',
  'ratio/min': 'min',
  'ratio/max': 'max',
  'ratio/log_abs_mean': 'sum',
  'ratio/clamped': 'sum',
  'kl/approx': 'sum',
} as const satisfies Record<string, MetricCombine>;

/** How a metric of several micro-batches becomes one (sum of shares, or the extreme). */
export type MetricCombine = 'sum' | 'min' | 'max';

export interface SurrogateOutput {
  psi: tf.Tensor; // same shape as L
  logRatio: tf.Tensor; // clamped L, nats
  ratio: tf.Tensor;
  clippedLow: tf.Tensor; // 1 where A < 0 and rho < 1 - eps_low
  clippedHigh: tf.Tensor; // 1 where A > 0 and rho > 1 + eps_high
  metrics: Record<string, tf.Scalar>;
}

export function clippedSurrogate(logRatio: tf.Tensor, advantage: tf.Tensor, weight: tf.Tensor, weightTotal: number, config: ObjectiveConfig): SurrogateOutput {
  const lo = 1 - config.clipLow;
  const hi = 1 + config.clipHigh;
  const lc = tf.clipByValue(logRatio, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);
  const ratio = tf.exp(lc);
  const unclipped = tf.mul(ratio, advantage);
  const clipped = tf.mul(tf.clipByValue(ratio, lo, hi), advantage);
  let psi = tf.minimum(unclipped, clipped);
  const zero = tf.zerosLike(advantage);
  const negative = tf.less(advantage, zero);
  const clippedLow = tf.cast(tf.logicalAnd(negative, tf.less(ratio, lo)), 'float32');
  const clippedHigh = tf.cast(tf.logicalAnd(tf.greater(advantage, zero), tf.greater(ratio, hi)), 'float32');

  const mean = (x: tf.Tensor): tf.Scalar => tf.div(tf.sum(tf.mul(x, weight)), weightTotal);
  const counted = tf.greater(weight, 0);
  const metrics: Record<string, tf.Scalar> = {
    'clip/frac_low': mean(clippedLow),
    'clip/frac_high': mean(clippedHigh),
    'clip/frac': mean(tf.add(clippedLow, clippedHigh)),
    'ratio/mean': mean(ratio),
    'ratio/min': tf.min(tf.where(counted, ratio, tf.fill(ratio.shape, Infinity))),
    'ratio/max': tf.max(tf.where(counted, ratio, tf.fill(ratio.shape, -Infinity))),
    'ratio/log_abs_mean': mean(tf.abs(lc)),
    'ratio/clamped': tf.sum(tf.mul(tf.cast(tf.greater(tf.abs(logRatio), LOG_RATIO_CLAMP), 'float32'), weight)),
    // k3 estimator of KL(old || cur) from the clamped log-ratio: (rho - 1) - log rho >= 0.
    'kl/approx': mean(tf.sub(tf.sub(ratio, 1), lc)),
  };
  if (config.dualClip !== null) {
    const floor = tf.mul(advantage, config.dualClip);
    const dualActive = tf.logicalAnd(negative, tf.less(psi, floor));
    metrics['clip/frac_dual'] = mean(tf.cast(dualActive, 'float32'));
    psi = tf.where(negative, tf.maximum(psi, floor), psi);
  }
  return { psi, logRatio: lc, ratio, clippedLow, clippedHigh, metrics };
}
