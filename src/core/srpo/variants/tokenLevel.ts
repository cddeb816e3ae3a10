/**
 * Token-level PPO-clip as in verl's default (DAPO-style "token-mean" loss aggregation): a ratio
 * exp(d_t) per generated token, the member's advantage broadcast to its tokens, one clip per
 * token, the mean over every masked token of the mini-batch. Two registry entries share it:
 * `grpo_token` (trajectory grouping by default) and `drmas` (Dr. MAS: agent grouping, advantages
 * normalised per prompt and agent role; the grouping is chosen outside, groupings/).
 */
import * as tf from '@tensorflow/tfjs';
import { clippedSurrogate } from '../surrogate';
import type { ObjectiveInputs } from '../tensors';
import type { ObjectiveConfig } from '../config';
import { tokenLogRatios } from './logRatios';
import type { VariantOutput } from './types';

export function tokenLevelObjective(x: ObjectiveInputs, config: ObjectiveConfig): VariantOutput {
  const d = tokenLogRatios(x); // [M, T] nats
  const adv = tf.reshape(x.memberAdvantage, [-1, 1]); // [M, 1]
  const s = clippedSurrogate(d, adv, x.mask, x.totals.tokens, config);
  const loss = tf.neg(tf.div(tf.sum(tf.mul(s.psi, x.mask)), x.totals.tokens)) as tf.Scalar;
  return { loss, metrics: s.metrics };
}
