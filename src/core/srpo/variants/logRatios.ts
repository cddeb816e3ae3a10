/**
 * Log-ratio building blocks shared by the variants (SRPO.md notation):
 *   d_{e,j,t} = m (log pi_cur - log pi_old)     masked token log-ratios   [M, T]
 *   l_{e,j}   = sum_t d_{e,j,t}                 member log-ratios         [M]
 * Sums stay in float32 log space; no product of per-token ratios is ever formed (point 3).
 */
import * as tf from '@tensorflow/tfjs';
import type { ObjectiveInputs } from '../tensors';

export function tokenLogRatios(x: ObjectiveInputs): tf.Tensor2D {
  return tf.mul(tf.sub(x.logpCur, x.logpOld), x.mask); // [M, T] nats
}

/** l_{e,j}, or l_{e,j} / max(n_{e,j}, 1) when lengthNormalised. */
export function memberLogRatios(x: ObjectiveInputs, lengthNormalised: boolean): tf.Tensor1D {
  const l = tf.sum(tokenLogRatios(x), 1) as tf.Tensor1D; // [M] nats
  return lengthNormalised ? tf.div(l, tf.maximum(x.memberLength, 1)) : l;
}
