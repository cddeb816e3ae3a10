/**
 * SRPO (paper section 4, eq. 3-7): one set ratio, one advantage and one clip per event.
 *
 *   L_e  = c(K_e) * sum_{j in S_e} l_{e,j}            c = 1/sqrt(K) | 1/K | 1 (setNorm)
 *   psi_e = clipped surrogate of exp(L_e) with A_e
 *   J    = sum_e w_e psi_e / sum_e w_e                 w = 1 | n_e | K_e (reduction)
 *
 * Beyond the paper: `lengthNorm` uses l_{e,j} / n_{e,j} (section 6 limitation), the sum and
 * mean set normalisations and the token/member reductions are the paper's Table 3 ablations.
 * With K = 1 everywhere this is sequence-level PPO-clip per response.
 */
import * as tf from '@tensorflow/tfjs';
import { clippedSurrogate } from '../surrogate';
import { memberLogRatios } from './logRatios';
import type { ObjectiveVariant } from './types';

export const srpo: ObjectiveVariant = {
  description: 'Setwise ratio per active set, scaled by c(K), one advantage and one clip per event',
  defaultGrouping: 'event',
  compute(x, config) {
    const l = memberLogRatios(x, config.lengthNorm); // [M]
    const perEventSum = tf.reshape(tf.matMul(x.membership, tf.reshape(l, [-1, 1])), [-1]); // [E]
    const setLogRatio = tf.mul(perEventSum, x.setScale) as tf.Tensor1D; // [E] nats
    const ones = tf.onesLike(setLogRatio);
    // Diagnostics over the whole mini-batch's events (a micro-batch's are its share: they add up).
    const s = clippedSurrogate(setLogRatio, x.eventAdvantage, ones, x.totals.events, config);
    const loss = tf.neg(tf.div(tf.sum(tf.mul(s.psi, x.eventWeight)), x.totals.eventWeight)) as tf.Scalar;
    return {
      loss,
      metrics: s.metrics,
      perEvent: {
        logRatio: s.logRatio as tf.Tensor1D,
        ratio: s.ratio as tf.Tensor1D,
        clippedLow: s.clippedLow as tf.Tensor1D,
        clippedHigh: s.clippedHigh as tf.Tensor1D,
      },
    };
  },
};
