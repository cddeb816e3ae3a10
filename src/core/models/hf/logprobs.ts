/**
 * Teacher-forced log-probs of prompt + completion pairs under a Hugging Face model (model.ts),
 * through the same forward code the trainer differentiates: rows are prompt_r ++ completion_r,
 * right-padded (causal attention never looks right, so right padding needs no mask and every
 * row's positions start at 0, as in the sampler's left-padded prefill). Differentiable with
 * respect to the model's trainable variables (call inside the trainer's gradient closure).
 *
 * The head and the log-softmax run only on the completion positions and in chunks of rows, so
 * that a chunk's logits stay under `HEAD_CHUNK_FLOATS` (16k tokens x 152k vocabulary would be
 * 2.5e9 floats at once). The log-softmax runs over every row of the head, padded vocabulary rows
 * included, as transformers' does; the sampler records the same quantity (it only leaves padded
 * rows out of its choice).
 * A target's log-prob is its logit (a row dot product with its head column) minus the row's
 * logsumexp, as one custom-gradient op per chunk (model.ts `targetLogprobs`, ./layers.ts
 * `headLogprob`) that keeps only the chunk's rows [n, d] for the backward and recomputes the
 * logits there: the tape holds no [n, V] block at all (autodiff of a log-softmax kept ~4 per
 * chunk for the whole backward). Entropy, on request, is a second such op.
 *
 * Not here: the old/new log-prob bookkeeping of SRPO (the trainer), sampling (sampler.ts).
 * Tests: test/core/models/hf/logprobs.test.ts (against the float64 reference's log-softmax),
 * sampler.test.ts (sampler log-probs equal these).
 */
import * as tf from '@tensorflow/tfjs';
import type { LoraDropout } from './loraDropout';
import { HEAD_CHUNK_FLOATS } from './memory';
import type { HfModel } from './model';

/** Largest logits block computed at once (rows x vocabulary), float32 values: 64 MB (memory.ts sizes the head's backward from it). */
export { HEAD_CHUNK_FLOATS };

export interface HfScoredPair {
  /** Prompt ids (>= 1 token). */
  prompt: readonly number[];
  /** Completion ids (may be empty: the row is then all mask 0). */
  completion: readonly number[];
}

export interface HfScoreOptions {
  /** Id written in padding columns (default 0; never read by a real token). */
  padId?: number;
  /** Pad the completion axis to at least this many columns. */
  minCompletionLength?: number;
  /** Also return the entropy of each next-token distribution (two more passes over the logits). Default false. */
  entropy?: boolean;
  /** Rows of the head per chunk (default: as many as fit HEAD_CHUNK_FLOATS). */
  chunkRows?: number;
  /** The adapter to score with: a name, null for the base alone (the KL reference), default as model.ts `HfAdapterChoice`. */
  adapter?: string | null;
  /** The update's LoRA dropout (./loraDropout.ts; rowKeys: one per pair). Only the update's gradient pass sets it. */
  dropout?: LoraDropout;
}

export type HfScores = {
  logp: tf.Tensor2D; // [B, Tc] nats; 0 where mask is 0
  entropy?: tf.Tensor2D; // [B, Tc] nats, of the next-token distribution at each completion position (with `entropy: true`)
  mask: tf.Tensor2D; // [B, Tc]: 1 on real completion tokens
};

/** Scores one batch; the caller owns (and disposes) the result. Tc = the longest completion. */
export function scoreHf(model: HfModel, pairs: readonly HfScoredPair[], options: HfScoreOptions = {}): HfScores {
  if (pairs.length === 0) throw new Error('scoreHf: empty batch');
  const padId = options.padId ?? 0;
  const V = model.config.vocabSize;
  const B = pairs.length;
  const Tc = Math.max(1, options.minCompletionLength ?? 0, ...pairs.map((p) => p.completion.length));
  pairs.forEach((p, r) => {
    if (p.prompt.length === 0) throw new Error(`scoreHf: row ${r} has an empty prompt`);
    for (const id of [...p.prompt, ...p.completion])
      if (!(Number.isInteger(id) && id >= 0 && id < V)) throw new Error(`scoreHf: row ${r} has id ${id} outside [0, ${V})`);
  });
  // Row r's Tc targets are predicted from columns prompt_r - 1 .. prompt_r + Tc - 2, so the model reads L columns.
  const L = Math.max(...pairs.map((p) => p.prompt.length)) + Tc - 1;
  if (L > model.config.maxPositions)
    throw new Error(`scoreHf: prompt + completion needs ${L} positions, max_position_embeddings is ${model.config.maxPositions}`);
  const ids = new Int32Array(B * L).fill(padId);
  const targets = new Int32Array(B * Tc).fill(padId);
  const mask = new Float32Array(B * Tc);
  pairs.forEach((p, r) => {
    const seq = [...p.prompt, ...p.completion];
    for (let c = 0; c < Math.min(L, seq.length); c++) ids[r * L + c] = seq[c];
    p.completion.forEach((tok, j) => {
      targets[r * Tc + j] = tok;
      mask[r * Tc + j] = 1;
    });
  });
  const d = model.config.hiddenSize;
  const M = B * Tc;
  const chunk = Math.max(1, Math.min(M, options.chunkRows ?? Math.floor(HEAD_CHUNK_FLOATS / V)));
  return tf.tidy(() => {
    const h = tf.reshape(model.hidden(tf.tensor2d(ids, [B, L], 'int32'), undefined, options.adapter, options.dropout), [B, L, d]); // [B, L, d]
    const win = tf.concat(
      pairs.map((p, r) => tf.slice(h, [r, p.prompt.length - 1, 0], [1, Tc, d])),
      0,
    ); // [B, Tc, d]
    const rows = tf.reshape(win, [M, d]) as tf.Tensor2D; // [B*Tc, d]
    const lps: tf.Tensor1D[] = [];
    const ents: tf.Tensor1D[] = []; // with options.entropy
    for (let i = 0; i < M; i += chunk) {
      const n = Math.min(chunk, M - i);
      // Own scope per chunk: its [n, V] blocks are freed at once (the ops save only the rows, with or without a tape).
      const { lp, ent } = tf.tidy(() => {
        const hc = n === M ? rows : (tf.slice(rows, [i, 0], [n, d]) as tf.Tensor2D); // [n, d]
        const lp = model.targetLogprobs(hc, tf.tensor1d(targets.subarray(i, i + n), 'int32')); // [n] nats
        // Entropy on request only (one more head product, and one more in the backward).
        return { lp, ent: options.entropy ? model.entropies(hc) : undefined }; // [n] nats
      });
      lps.push(lp);
      if (ent) ents.push(ent);
    }
    const m = tf.tensor2d(mask, [B, Tc]);
    return {
      logp: tf.mul(tf.reshape(tf.concat(lps), [B, Tc]), m) as tf.Tensor2D, // [B, Tc] nats
      ...(options.entropy ? { entropy: tf.mul(tf.reshape(tf.concat(ents), [B, Tc]), m) as tf.Tensor2D } : {}), // [B, Tc] nats
      mask: m,
    };
  });
}

/** Plain-array scores (old log-probs of a rollout batch); reads back, so call outside tf.tidy. */
export function scoreHfData(
  model: HfModel,
  pairs: readonly HfScoredPair[],
  options: HfScoreOptions = {},
): { logp: number[][]; entropy?: number[][]; mask: number[][] } {
  const s = scoreHf(model, pairs, options);
  const read = (t: tf.Tensor2D) => t.arraySync() as number[][]; // waits for the device
  const out = { logp: read(s.logp), mask: read(s.mask), ...(s.entropy ? { entropy: read(s.entropy) } : {}) };
  tf.dispose([s.logp, s.entropy, s.mask]);
  return out;
}

/** log p(ids[i] | ids[..i]) for i = 1..n-1: n-1 values for n ids (the CLI's `model logprobs`). */
export function sequenceLogprobs(model: HfModel, ids: readonly number[], options: Omit<HfScoreOptions, 'minCompletionLength'> = {}): number[] {
  if (ids.length < 2) return [];
  const s = scoreHfData(model, [{ prompt: ids.slice(0, 1), completion: ids.slice(1) }], options);
  return s.logp[0];
}
