/**
 * Sequence-level PPO-clip per member response, the mean over members: `grpo_seq` uses the
 * summed member log-ratio l_{e,j}; `gspo` (GSPO, Zheng et al. 2025) the length-normalised
 * l_{e,j} / n_{e,j}. Members of one event share its advantage but are clipped separately, which
 * is exactly what SRPO replaces with one clip per set.
 */
import * as tf from '@tensorflow/tfjs';
import { clippedSurrogate } from '../surrogate';
import type { ObjectiveInputs } from '../tensors';
import type { ObjectiveConfig } from '../config';
import { memberLogRatios } from './logRatios';
import type { VariantOutput } from './types';

export function memberLevelObjective(x: ObjectiveInputs, config: ObjectiveConfig, lengthNormalised: boolean): VariantOutput {
  const l = memberLogRatios(x, lengthNormalised); // [M] nats
  const ones = tf.onesLike(l);
  const s = clippedSurrogate(l, x.memberAdvantage, ones, x.totals.members, config);
  const loss = tf.neg(tf.div(tf.sum(s.psi), x.totals.members)) as tf.Scalar;
  return { loss, metrics: s.metrics };
}
