/**
 * Teacher-forced log-probs of prompt + completion pairs under a Hugging Face model (model.ts),
 * through the same forward code the trainer differentiates: rows are prompt_r ++ completion_r,
 * prompts left-padded to the longest and completions right-padded, as the sampler's prefill lays
 * out its prompts (pad keys masked, positions from 0 at each row's first real token; causal
 * attention never looks right, so right padding needs no mask). Every row's completion window
 * then starts at the same column and one slice picks them all: a slice per row cost, in the
 * backward, a pad of the whole batch and an add per row (decision 072). Differentiable with
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
 * Rows in blocks (`checkpointedLogp`): a gradient pass over more rows than fit the model's
 * `tapeBudgetBytes` of tape (memory.ts's estimate for the backend; `update.tapeBudgetMB`, by default
 * the backend's) is one custom-gradient op over the trainable variables it reads:
 * its forward scores blocks of rows without a tape, its backward re-runs one block at a time under
 * a tape of its own and adds the gradients. Per-layer recomputation alone keeps every row's layer
 * inputs and re-runs a layer over all rows at once (~1.9 GB for a math-ablation pass of 48k chat
 * tokens on the 94.6k-parameter fixture); in blocks the pass holds one block's tape, so its peak
 * does not grow with the rows and grows linearly with the sequence length (attention is blocked
 * too: ./layers.ts `attendBlocked`).
 * Decision (issue 27): blocks apply whether or not `update.recompute` is on. A pass within the
 * budget keeps its whole tape (no extra forward); one over it costs one more forward instead of
 * growing with the rows (the math-ablation run reached 2.5 GB resident with recompute off).
 * The update avoids that forward where it can: it packs its micro-batches of whole events to fit
 * the budget (train/miniBatches.ts `tapeFits`, decision 074), so row blocks are left to a pass
 * whose single event is over it, and to callers outside the update.
 * `update.recompute` adds per-layer recomputation to passes within the budget. A budget of 0
 * never blocks (a large GPU; the vs-trl bench, for TRL's equal work).
 *
 * Not here: the old/new log-prob bookkeeping of SRPO (the trainer), sampling (sampler.ts).
 * Tests: test/core/models/hf/logprobs.test.ts (against the float64 reference's log-softmax),
 * sampler.test.ts (sampler log-probs equal these), scoreBlocks.test.ts (row blocks against the
 * plain pass, their peak bytes).
 */
import * as tf from '@tensorflow/tfjs';
import type { LoraDropout } from './loraDropout';
import { withOwnTape } from './layers';
import { HEAD_CHUNK_FLOATS, blockPlan } from './memory';
import { DEFAULT_ADAPTER, leftPadLayout, type HfModel } from './model';

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
  /** Tape budget of a gradient pass, bytes (default the model's `tapeBudgetBytes`; 0: never in blocks; see the header). */
  passBytes?: number;
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
  const P = L - Tc + 1; // the longest prompt: every row's window starts at column P - 1
  const ids = new Int32Array(B * L).fill(padId);
  const targets = new Int32Array(B * Tc).fill(padId);
  const mask = new Float32Array(B * Tc);
  const padCounts = pairs.map((p) => P - p.prompt.length);
  pairs.forEach((p, r) => {
    const seq = [...p.prompt, ...p.completion];
    for (let c = padCounts[r]; c < L; c++) ids[r * L + c] = seq[c - padCounts[r]];
    p.completion.forEach((tok, j) => {
      targets[r * Tc + j] = tok;
      mask[r * Tc + j] = 1;
    });
  });
  const batch: ScoreBatch = { ids, targets, mask, padCounts, B, L, Tc };
  const chunkRows = options.chunkRows;
  const vars = readVariables(model, options.adapter);
  // A gradient pass (trainable variables read) over the tape budget: in row blocks, with or
  // without per-layer recomputation (header). Entropy is only asked without a tape.
  const plan = vars.length > 0 && !options.entropy ? blockPlan(model.config, L, B, options.passBytes ?? model.tapeBudgetBytes, model.tapeProfile) : null;
  if (plan && plan.rows < B) {
    return tf.tidy(() => ({ logp: checkpointedLogp(model, batch, options, vars, plan), mask: tf.tensor2d(mask, [B, Tc]) }));
  }
  if (plan && !model.recompute) {
    // Every row fits one block only with per-layer recomputation: one pass with it (one more forward, not two).
    model.recompute = true;
    try {
      return scoreHf(model, pairs, { ...options, passBytes: 0 });
    } finally {
      model.recompute = false;
    }
  }
  return tf.tidy(() => {
    const { logp, entropy } = scoreBlock(model, batch, 0, B, options.adapter, options.dropout, options.entropy ?? false, chunkRows);
    return { logp, ...(entropy ? { entropy } : {}), mask: tf.tensor2d(mask, [B, Tc]) };
  });
}

/** A batch laid out for the model: ids [B, L] (prompts left-padded, completions right-padded), targets and mask [B, Tc]. */
interface ScoreBatch {
  ids: Int32Array; // [B*L]
  targets: Int32Array; // [B*Tc]
  mask: Float32Array; // [B*Tc]
  padCounts: number[]; // [B]: pads before row r's prompt
  B: number;
  L: number;
  Tc: number;
}

/**
 * Rows b0 .. b0+n-1 of the batch: log-probs [n, Tc] nats (0 where the mask is 0) and, with
 * `entropy`, the entropies [n, Tc]. Differentiable; the caller's tidy owns the results.
 */
function scoreBlock(
  model: HfModel,
  batch: ScoreBatch,
  b0: number,
  n: number,
  adapter: string | null | undefined,
  dropout: LoraDropout | undefined,
  entropy: boolean,
  chunkRows?: number,
): { logp: tf.Tensor2D; entropy?: tf.Tensor2D } {
  const { L, Tc } = batch;
  const d = model.config.hiddenSize;
  const V = model.config.vocabSize;
  const M = n * Tc;
  const chunk = Math.max(1, Math.min(M, chunkRows ?? Math.floor(HEAD_CHUNK_FLOATS / V)));
  const ids = tf.tensor2d(batch.ids.subarray(b0 * L, (b0 + n) * L), [n, L], 'int32');
  const drop = dropout && n !== batch.B ? { ...dropout, rowKeys: dropout.rowKeys.slice(b0, b0 + n) } : dropout; // a row's masks depend on its key only
  const h = tf.reshape(model.hidden(ids, leftPadLayout(batch.padCounts.slice(b0, b0 + n), L), adapter, drop), [n, L, d]); // [n, L, d]
  // Every row's window is columns L - Tc .. L - 1: the longest prompt's last token onwards (they predict the Tc targets).
  const rows = tf.reshape(tf.slice(h, [0, L - Tc, 0], [n, Tc, d]), [M, d]) as tf.Tensor2D; // [n*Tc, d]
  const targets = batch.targets.subarray(b0 * Tc, (b0 + n) * Tc);
  const lps: tf.Tensor1D[] = [];
  const ents: tf.Tensor1D[] = []; // with `entropy`
  for (let i = 0; i < M; i += chunk) {
    const m = Math.min(chunk, M - i);
    // Own scope per chunk: its [m, V] blocks are freed at once (the ops save only the rows, with or without a tape).
    const { lp, ent } = tf.tidy(() => {
      const hc = m === M ? rows : (tf.slice(rows, [i, 0], [m, d]) as tf.Tensor2D); // [m, d]
      const lp = model.targetLogprobs(hc, tf.tensor1d(targets.subarray(i, i + m), 'int32')); // [m] nats
      // Entropy on request only (one more head product, and one more in the backward).
      return { lp, ent: entropy ? model.entropies(hc) : undefined }; // [m] nats
    });
    lps.push(lp);
    if (ent) ents.push(ent);
  }
  const msk = tf.tensor2d(batch.mask.subarray(b0 * Tc, (b0 + n) * Tc), [n, Tc]);
  return {
    logp: tf.mul(tf.reshape(tf.concat(lps), [n, Tc]), msk) as tf.Tensor2D, // [n, Tc] nats
    ...(entropy ? { entropy: tf.mul(tf.reshape(tf.concat(ents), [n, Tc]), msk) as tf.Tensor2D } : {}), // [n, Tc] nats
  };
}

/**
 * The trainable variables a forward with `adapter` reads (model.ts `HfAdapterChoice`): the
 * trainable base weights (full fine-tuning) and the chosen adapter's factors.
 */
function readVariables(model: HfModel, adapter: string | null | undefined): tf.Variable[] {
  const base = [...model.params.values()].filter((v) => v.trainable);
  const name = adapter === undefined ? (model.adapterNames().includes(DEFAULT_ADAPTER) ? DEFAULT_ADAPTER : null) : adapter;
  return name === null ? base : [...base, ...model.adapterVariables(name).filter((v) => v.trainable)];
}

/**
 * log-probs [B, Tc] of the whole batch as one custom-gradient op over the trainable variables it
 * reads, computed in blocks of rows: the forward scores each block without a tape (nothing of it
 * is kept), the backward re-runs one block at a time under a tape of its own (./layers.ts
 * `withOwnTape`) and adds its variable gradients for that block's slice of dy. The tape of the
 * whole pass is then one block's, whatever the number of rows: activation checkpointing at the
 * scorer's level, one extra forward as per-layer recomputation costs. Gradients equal one pass's
 * up to float rounding (a sum over rows taken in blocks); a row's LoRA dropout masks depend on
 * its key only, so the re-run draws the same ones.
 */
function checkpointedLogp(
  model: HfModel,
  batch: ScoreBatch,
  options: HfScoreOptions,
  vars: tf.Variable[],
  plan: { rows: number; layerRecompute: boolean },
): tf.Tensor2D {
  const { B, Tc } = batch;
  const blocks: [number, number][] = [];
  for (let b0 = 0; b0 < B; b0 += plan.rows) blocks.push([b0, Math.min(plan.rows, B - b0)]);
  const run = (b0: number, n: number) => scoreBlock(model, batch, b0, n, options.adapter, options.dropout, false, options.chunkRows).logp; // [n, Tc]
  const op = tf.customGrad(() => {
    const parts = blocks.map(([b0, n]) => tf.tidy(() => run(b0, n)));
    return {
      value: parts.length === 1 ? parts[0] : tf.concat(parts, 0), // [B, Tc] nats
      gradFunc: (dy: tf.Tensor) => {
        const sums: tf.Tensor[] = [];
        const outer = model.recompute;
        model.recompute = plan.layerRecompute; // the block's own tape is small enough to keep every layer's, or one layer at a time
        try {
          for (const [b0, n] of blocks) {
            const gs = tf.tidy(() => {
              const dyc = tf.slice(dy, [b0, 0], [n, Tc]); // [n, Tc]
              const { grads } = withOwnTape(() => tf.engine().gradients(() => run(b0, n), vars, dyc, true));
              return grads.map((g, i) => g ?? tf.zerosLike(vars[i]));
            });
            gs.forEach((g, i) => {
              const prev = sums[i];
              sums[i] = prev ? tf.add(prev, g) : g;
              if (prev) tf.dispose([prev, g]);
            });
          }
        } finally {
          model.recompute = outer;
        }
        return sums;
      },
    };
  }) as (...inputs: tf.Tensor[]) => tf.Tensor2D;
  return op(...vars);
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
