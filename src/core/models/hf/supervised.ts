/**
 * Supervised fine-tuning of a Hugging Face model on (prompt, completion) id pairs: cross-entropy
 * on completion tokens only, Adam over every trainable weight, shuffled batches that fit the
 * context (`contextBatches`), a loss per epoch. The lab's warm start of its character folders
 * (train/warmstart.ts) runs it.
 *
 * Not here: making the pairs (the chat template renders the prompts: train/warmstart.ts).
 * Tests: test/core/models/hf/labFolder.test.ts (the loss falls on a lab folder),
 * test/core/models/contextBatches.test.ts.
 */
import * as tf from '@tensorflow/tfjs';
import { mixSeed, mulberry32, permutation } from '../random';
import { scoreHf, type HfScoredPair } from './logprobs';
import type { HfModel } from './model';

export interface SupervisedOptions {
  epochs: number;
  /** Rows per Adam step. */
  batchSize: number;
  learningRate: number;
  /** Shuffling seed. */
  seed: number;
  onEpoch?: (report: SupervisedEpoch) => void;
}

export interface SupervisedEpoch {
  epoch: number;
  /** Mean cross-entropy per completion token, nats. */
  loss: number;
  tokens: number;
}

/**
 * Consecutive batches of at most `size` rows whose padded length fits the context: the scorer
 * lays every row out as (longest prompt) + (longest completion) - 1 columns, so two rows that
 * each fit may not fit together; such a row starts the next batch.
 */
export function contextBatches(pairs: readonly HfScoredPair[], size: number, contextLength: number): HfScoredPair[][] {
  const out: HfScoredPair[][] = [];
  let cur: HfScoredPair[] = [];
  let maxPrompt = 0;
  let maxCompletion = 0;
  for (const p of pairs) {
    const mp = Math.max(maxPrompt, p.prompt.length);
    const mc = Math.max(maxCompletion, p.completion.length);
    if (cur.length > 0 && (cur.length >= size || mp + mc - 1 > contextLength)) {
      out.push(cur);
      cur = [];
      maxPrompt = 0;
      maxCompletion = 0;
    }
    cur.push(p);
    maxPrompt = Math.max(maxPrompt, p.prompt.length);
    maxCompletion = Math.max(maxCompletion, p.completion.length);
  }
  if (cur.length) out.push(cur);
  return out;
}

/** One Adam step on a batch over `vars`; returns the summed loss and the token count (one read-back, which waits for the device). */
export function supervisedStep(
  model: HfModel,
  batch: readonly HfScoredPair[],
  optimizer: tf.Optimizer,
  vars: tf.Variable[] = model.variables(),
): { lossSum: number; tokens: number } {
  let stats: tf.Tensor1D | null = null;
  const { value, grads } = tf.variableGrads(() => {
    const s = scoreHf(model, batch);
    const nll = tf.neg(tf.sum(s.logp));
    const tokens = tf.sum(s.mask);
    stats = tf.keep(tf.stack([nll, tokens]) as tf.Tensor1D);
    return tf.div(nll, tf.maximum(tokens, 1)) as tf.Scalar;
  }, vars);
  optimizer.applyGradients(grads);
  const out = (stats as unknown as tf.Tensor1D).dataSync(); // waits for the device
  tf.dispose([value, stats as unknown as tf.Tensor, ...Object.values(grads)]);
  return { lossSum: out[0], tokens: out[1] };
}

/** Trains `model` (loaded trainable) on `pairs`; a pair longer than the context is an error naming it. */
export function fitHfPairs(model: HfModel, pairs: readonly HfScoredPair[], o: SupervisedOptions): SupervisedEpoch[] {
  const ctx = model.config.maxPositions;
  pairs.forEach((p, i) => {
    if (p.prompt.length + p.completion.length - 1 > ctx)
      throw new Error(`supervised fine-tuning: pair ${i} needs ${p.prompt.length + p.completion.length - 1} positions, max_position_embeddings is ${ctx}`);
  });
  const vars = model.variables();
  if (vars.length === 0) throw new Error('supervised fine-tuning: the model has no trainable weights (load it with trainable: true)');
  const optimizer = tf.train.adam(o.learningRate);
  const reports: SupervisedEpoch[] = [];
  try {
    for (let epoch = 0; epoch < o.epochs; epoch++) {
      const order = permutation(pairs.length, mulberry32(mixSeed(o.seed, epoch)));
      let lossSum = 0;
      let tokens = 0;
      for (const batch of contextBatches(
        order.map((i) => pairs[i]),
        o.batchSize,
        ctx,
      )) {
        const r = supervisedStep(model, batch, optimizer, vars);
        lossSum += r.lossSum;
        tokens += r.tokens;
      }
      const report = { epoch, loss: lossSum / Math.max(1, tokens), tokens };
      reports.push(report);
      o.onEpoch?.(report);
    }
  } finally {
    optimizer.dispose();
  }
  return reports;
}
