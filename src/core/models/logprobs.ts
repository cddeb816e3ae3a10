/**
 * Teacher-forced log-probs and per-token entropy of given prompt + completion pairs, batched and
 * right-padded: row r is prompt_r ++ completion_r ++ pad, the model reads all but the last
 * column, and the completion's targets are picked out row by row. Differentiable (the policy
 * update takes gradients through `logp`), so call it inside the trainer's gradient closure.
 *
 * This is also the code that computes the old (behaviour) log-probs for SRPO (SRPO.md point 2:
 * same model code and precision as the update); the sampler records the same quantity (the
 * un-tempered log-softmax) and a test checks they agree to 1e-4.
 *
 * Log-softmax via tf.logSoftmax (max-subtracted, stable). Target log-probs are picked with a
 * one-hot product and a sum, not gather (no gather gradient on wasm).
 * Tests: test/core/models/logprobs.test.ts (against a slow per-row reference), sampler.test.ts.
 */
import * as tf from '@tensorflow/tfjs';
import type { Transformer } from './transformer';

export interface ScoredPair {
  /** Prompt token ids (>= 1 token, usually starting with `<bos>`). */
  prompt: readonly number[];
  /** Completion token ids (may be empty: then the row is all mask 0). */
  completion: readonly number[];
}

export type CompletionScores = {
  /** log pi(completion token | prefix), nats; 0 where mask is 0. */
  logp: tf.Tensor2D; // [B, Tc] nats
  /** Entropy of the next-token distribution at each completion position, nats. */
  entropy: tf.Tensor2D; // [B, Tc] nats
  /** 1 where the target was the model's argmax (token accuracy), else 0. */
  correct: tf.Tensor2D; // [B, Tc]
  /** 1 on real completion tokens, 0 on padding. */
  mask: tf.Tensor2D; // [B, Tc]
};

export interface ScoreOptions {
  /** Id written in padding columns (default 0, `<pad>`). */
  padId?: number;
  /** Pad the completion axis to at least this many columns (batches of equal shape). */
  minCompletionLength?: number;
}

/**
 * Scores one batch. Tc = max completion length. The caller owns (and disposes) the result; when
 * called under tf.tidy / a gradient closure, tidy handles it.
 */
export function scoreCompletions(model: Transformer, pairs: readonly ScoredPair[], options: ScoreOptions = {}): CompletionScores {
  if (pairs.length === 0) throw new Error('scoreCompletions: empty batch');
  const padId = options.padId ?? 0;
  const B = pairs.length;
  const Tc = Math.max(1, options.minCompletionLength ?? 0, ...pairs.map((p) => p.completion.length));
  pairs.forEach((p, r) => {
    if (p.prompt.length === 0) throw new Error(`scoreCompletions: row ${r} has an empty prompt`);
  });
  // Every row's window of Tc targets starts at its prompt's last token, so the padded length
  // is the longest prompt + Tc; the model reads L = that - 1 columns.
  const L = Math.max(...pairs.map((p) => p.prompt.length)) + Tc - 1;
  if (L > model.config.contextLength) {
    throw new Error(`scoreCompletions: prompt + completion needs ${L} positions, contextLength is ${model.config.contextLength}`);
  }
  const ids = new Int32Array(B * L).fill(padId);
  const targets = new Int32Array(B * L).fill(padId);
  const mask = new Float32Array(B * Tc);
  pairs.forEach((p, r) => {
    const seq = [...p.prompt, ...p.completion];
    for (let c = 0; c < Math.min(L, seq.length); c++) ids[r * L + c] = seq[c];
    for (let c = 0; c + 1 < seq.length; c++) targets[r * L + c] = seq[c + 1];
    for (let j = 0; j < p.completion.length; j++) mask[r * Tc + j] = 1;
  });
  const V = model.config.vocabSize;
  return tf.tidy(() => {
    const logits = model.forward(tf.tensor2d(ids, [B, L], 'int32')); // [B, L, V]
    const logsm = tf.logSoftmax(logits, -1); // [B, L, V] nats
    const onehot = tf.oneHot(tf.tensor2d(targets, [B, L], 'int32'), V).toFloat(); // [B, L, V]
    const tokLogp = tf.sum(tf.mul(logsm, onehot), -1) as tf.Tensor2D; // [B, L] nats
    const ent = tf.neg(tf.sum(tf.mul(tf.exp(logsm), logsm), -1)) as tf.Tensor2D; // [B, L] nats
    const isMax = tf.cast(tf.greaterEqual(tokLogp, tf.max(logsm, -1)), 'float32') as tf.Tensor2D; // [B, L]
    const window = (x: tf.Tensor2D) =>
      tf.concat(
        pairs.map((p, r) => tf.slice(x, [r, p.prompt.length - 1], [1, Tc])),
        0,
      ) as tf.Tensor2D; // [B, Tc]
    const m = tf.tensor2d(mask, [B, Tc]);
    return {
      logp: tf.mul(window(tokLogp), m) as tf.Tensor2D,
      entropy: tf.mul(window(ent), m) as tf.Tensor2D,
      correct: tf.mul(window(isMax), m) as tf.Tensor2D,
      mask: m,
    };
  });
}

/** Plain-array scores (old log-probs for a rollout batch); reads back, so call outside tf.tidy. */
export function scoreCompletionsData(
  model: Transformer,
  pairs: readonly ScoredPair[],
  options: ScoreOptions = {},
): { logp: number[][]; entropy: number[][]; mask: number[][] } {
  const s = scoreCompletions(model, pairs, options);
  const [logp, entropy, mask] = [s.logp, s.entropy, s.mask].map((t) => t.arraySync() as number[][]);
  for (const t of Object.values(s)) t.dispose();
  return { logp, entropy, mask };
}
