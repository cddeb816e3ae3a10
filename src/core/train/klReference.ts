/**
 * The optional KL penalty of the policy update (update.ts, config kl.coef > 0): the k3 estimate
 * of KL(pi_cur || pi_ref) to the frozen reference policy, and the reference log-probs it needs,
 * checked before any tensor exists (a member without them is an error, never the old log-probs in
 * their place). Not here: where the term joins the loss (update.ts microStep).
 * Tests: test/core/train/update.test.ts (the KL term against hand-computed k3, the missing
 * reference refused).
 */
import * as tf from '@tensorflow/tfjs';
import type { MemberSample } from './miniBatches';

/**
 * The k3 estimate of KL(pi_cur || pi_ref) per token, exp(d) - d - 1 with d = log pi_ref - log
 * pi_cur, over the mask, divided by the whole mini-batch's token count (a scalar, nats).
 */
export function klToReference(ref: tf.Tensor2D, logpCur: tf.Tensor2D, mask: tf.Tensor2D, klTokens: number): tf.Scalar {
  const d = tf.sub(ref, logpCur); // [M, T] log(ref / cur), nats
  const k3 = tf.mul(tf.sub(tf.sub(tf.exp(d), d), 1), mask); // [M, T]
  return tf.div(tf.sum(k3), klTokens) as tf.Scalar;
}

/** A member's reference log-probs; a KL penalty without them is an error (never the old log-probs in their place). */
export function referenceLogp(samples: readonly MemberSample[], source: number, klCoef: number): number[] {
  const s = samples[source];
  if (!s.refLogp) {
    throw new Error(
      `update: kl.coef is ${klCoef} but member sample ${source} (policy ${s.policyId}) has no reference log-probs (MemberSample.refLogp): the run's policies were built without a reference`,
    );
  }
  return s.refLogp;
}

/** Rows padded with zeros to width T, flattened (a plain Float32Array for tf.tensor2d). */
export function padRows(rows: readonly (readonly number[])[], T: number): Float32Array {
  const out = new Float32Array(rows.length * T);
  rows.forEach((r, i) => out.set(r, i * T));
  return out;
}
