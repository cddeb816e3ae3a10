/**
 * Batched generation with a Hugging Face model (model.ts): prompts left-padded to a common
 * length, each row's positions from 0 at its first real token and its pad keys masked, so a row
 * does not depend on its neighbours; then one token per step against a KV cache (`decode: 'kv'`,
 * default), or by re-running the whole forward pass every step (`decode: 'full'`: the slow,
 * obvious reference the KV path is tested and benchmarked against).
 *
 * Token choice as transformers' `generate` orders its warpers: temperature, then top-k, then
 * top-p (nucleus: the smallest set of the most probable tokens whose mass reaches topP), then a
 * draw; temperature 0 is greedy. Padded vocabulary rows (vocab_size > the tokenizer's tokens:
 * ids >= `validVocab`) are left out of the choice, like a top-k, so they are never sampled.
 *
 * Recorded behaviour log-prob: the UN-TEMPERED, unmasked log-softmax of each sampled token over
 * the whole head, whatever the temperature, top-k, top-p and padded rows, as the lab's small
 * sampler records (../sampler.ts explains why): it is what the trainer's teacher-forced scorer
 * (logprobs.ts) and transformers' log_softmax compute, so the three agree.
 *
 * Randomness: one seeded mulberry32 stream per row (mixSeed(seed, row)), so a row's sample
 * depends only on the seed, its index and its own logits. Not here: tokenizers and chat
 * templates (tokenizer.ts), stop strings (callers decode and cut).
 * Tests: test/core/models/hf/sampler.test.ts.
 */
import * as tf from '@tensorflow/tfjs';
import { DECODE_MODES, type DecodeMode } from '../sampler';
import { mixSeed, mulberry32, type Uniform } from '../random';
import { MASKED, type HfAdapterChoice, type HfKvCache, type HfModel } from './model';

export { DECODE_MODES, type DecodeMode };

/** end: a stop id was sampled (it is included); length: maxNewTokens or max_position_embeddings ran out. */
export const HF_STOP_REASONS = ['end', 'length'] as const;
export type HfStopReason = (typeof HF_STOP_REASONS)[number];

export interface HfSampleOptions {
  /** Most tokens generated per row (also capped by max_position_embeddings - longest prompt). >= 1. */
  maxNewTokens: number;
  /** Softmax temperature; 0 means greedy (argmax). Default 1. */
  temperature?: number;
  /** Nucleus sampling mass in (0, 1]; default 1 (off). */
  topP?: number;
  /** Keep only the k most probable tokens; 0 (default) is off. */
  topK?: number;
  /** Ids that end a row (generation_config's eos ids); the id is kept in the output. */
  stopIds?: readonly number[];
  /** Seed of the per-row random streams. */
  seed: number;
  /** Id used to left-pad prompts and to pad rows that stopped. Default 0. */
  padId?: number;
  /** Real tokens: ids >= validVocab (padded head rows) are never sampled. Default the model's `validVocab`. */
  validVocab?: number;
  /** KV cache (default) or full recomputation each step. */
  decode?: DecodeMode;
  /** The adapter to sample with: a name, null for the base alone, default as model.ts `HfAdapterChoice`. */
  adapter?: string | null;
}

export interface HfSampledRow {
  /** Generated ids (stop id included), no padding. */
  ids: number[];
  /** Behaviour log-prob of each generated id: un-tempered log-softmax over the whole head. */
  logp: number[]; // nats
  stopReason: HfStopReason;
}

/** Next-token logits of every row, advanced one token at a time. */
interface DecodeSession {
  logits: tf.Tensor2D; // [B, V]
  advance(tokens: number[]): void;
  dispose(): void;
}

type DecoderFactory = (model: HfModel, rows: number[][], padCounts: number[], adapter: HfAdapterChoice) => DecodeSession;

function disposeCache(c: HfKvCache): void {
  tf.dispose([...c.k.flat(), ...c.v.flat()]);
}

/** Variants of the decode loop; both give the same logits up to float rounding. */
export const HF_DECODERS = {
  kv: (model, rows, padCounts, adapter) => {
    const B = rows.length;
    const L = rows[0].length;
    const first = tf.tidy(() => model.prefill(tf.tensor2d(rows.flat(), [B, L], 'int32'), padCounts, adapter));
    let cache = first.cache;
    let t = L; // columns in the cache
    const session: DecodeSession = {
      logits: first.logits,
      advance(tokens) {
        const keyBias = new Float32Array(B * (t + 1)); // [B, t+1]: pad keys masked
        for (let r = 0; r < B; r++) keyBias.fill(MASKED, r * (t + 1), r * (t + 1) + padCounts[r]);
        const next = model.decodeStep(tokens, padCounts.map((p) => t - p), cache, keyBias, adapter);
        disposeCache(cache);
        session.logits.dispose();
        cache = next.cache;
        session.logits = next.logits;
        t++;
      },
      dispose() {
        disposeCache(cache);
        session.logits.dispose();
      },
    };
    return session;
  },
  full: (model, rows, padCounts, adapter) => {
    const seqs = rows.map((r) => [...r]);
    const run = () =>
      tf.tidy(() => {
        const out = model.prefill(tf.tensor2d(seqs.flat(), [seqs.length, seqs[0].length], 'int32'), padCounts, adapter);
        disposeCache(out.cache);
        return out.logits;
      });
    const session: DecodeSession = {
      logits: run(),
      advance(tokens) {
        tokens.forEach((tok, r) => seqs[r].push(tok));
        session.logits.dispose();
        session.logits = run();
      },
      dispose() {
        session.logits.dispose();
      },
    };
    return session;
  },
} satisfies Record<DecodeMode, DecoderFactory>;

/** Scratch weights of `pickToken`, reused across calls (one vocabulary-sized array, not one per row per step). */
let weights = new Float64Array(0);

/**
 * Picks one id from log-probs over the valid vocabulary: greedy at temperature 0; else
 * temperature, top-k (0: off), top-p (1: off), then a draw from the renormalised weights.
 */
export function pickToken(logp: ArrayLike<number>, temperature: number, topK: number, topP: number, rand: Uniform): number {
  const V = logp.length;
  if (temperature === 0) {
    let best = 0;
    for (let i = 1; i < V; i++) if (logp[i] > logp[best]) best = i;
    return best;
  }
  let max = -Infinity;
  for (let i = 0; i < V; i++) max = Math.max(max, logp[i]);
  if (topK === 0 && topP >= 1) {
    // Plain tempered softmax: one exp per token, no candidate list (the common case, once per row per step).
    const w = weights.length >= V ? weights : (weights = new Float64Array(V));
    let total = 0;
    for (let i = 0; i < V; i++) total += w[i] = Math.exp((logp[i] - max) / temperature);
    let u = rand() * total;
    for (let i = 0; i < V; i++) {
      u -= w[i];
      if (u < 0) return i;
    }
    return V - 1; // rounding: u landed on the total
  }
  // Candidates by descending probability. Tokens below 1e-15 of the most probable one are left out
  // before sorting (sorting a 152k vocabulary per row per step costs tens of ms): together they
  // weigh < V x 1e-15 of the total, so they could only enter a nucleus with topP > 1 - 1e-9, or be
  // drawn from a top-k with probability < 1e-10.
  const floor = max - 34.5 * temperature; // log(1e-15) = -34.5, in tempered units
  let order: number[] = [];
  for (let i = 0; i < V; i++) if (logp[i] >= floor) order.push(i);
  order.sort((a, b) => logp[b] - logp[a] || a - b);
  if (topK > 0) order = order.slice(0, Math.min(topK, V));
  const w = order.map((i) => Math.exp((logp[i] - max) / temperature));
  let total = w.reduce((a, b) => a + b, 0);
  if (topP < 1) {
    let kept = 0;
    let k = 0;
    while (k < w.length && kept < topP * total) kept += w[k++];
    k = Math.max(1, k);
    order = order.slice(0, k);
    total = w.slice(0, k).reduce((a, b) => a + b, 0);
  }
  let u = rand() * total;
  for (let j = 0; j < order.length; j++) {
    u -= w[j];
    if (u < 0) return order[j];
  }
  return order[order.length - 1]; // rounding: u landed on the total
}

/** Generates completions for every prompt (token ids). Reads back once per step (the sampled ids need the logits). */
export function sampleHf(model: HfModel, prompts: readonly (readonly number[])[], options: HfSampleOptions): HfSampledRow[] {
  const B = prompts.length;
  if (B === 0) return [];
  const temperature = options.temperature ?? 1;
  const topP = options.topP ?? 1;
  const topK = options.topK ?? 0;
  const padId = options.padId ?? 0;
  const stopIds = new Set(options.stopIds ?? []);
  const validVocab = options.validVocab ?? model.validVocab;
  if (!(temperature >= 0) || !(topP > 0 && topP <= 1) || !(Number.isInteger(topK) && topK >= 0)) {
    throw new Error(`sampleHf: temperature ${temperature} must be >= 0, topP ${topP} in (0, 1], topK ${topK} an integer >= 0`);
  }
  if (!Number.isInteger(options.maxNewTokens) || options.maxNewTokens < 1) throw new Error(`sampleHf: maxNewTokens ${options.maxNewTokens} must be an integer >= 1`);
  if (!(validVocab >= 1 && validVocab <= model.config.vocabSize)) throw new Error(`sampleHf: validVocab ${validVocab} must be in [1, ${model.config.vocabSize}]`);
  prompts.forEach((p, r) => {
    if (p.length === 0) throw new Error(`sampleHf: prompt ${r} is empty`);
    for (const id of p) if (!(Number.isInteger(id) && id >= 0 && id < model.config.vocabSize)) throw new Error(`sampleHf: prompt ${r} has id ${id} outside [0, ${model.config.vocabSize})`);
  });
  const L = Math.max(...prompts.map((p) => p.length));
  const maxNew = Math.min(options.maxNewTokens, model.config.maxPositions - L);
  if (maxNew < 1) throw new Error(`sampleHf: the longest prompt (${L} tokens) leaves no room in max_position_embeddings ${model.config.maxPositions}`);
  const padCounts = prompts.map((p) => L - p.length);
  const rows = prompts.map((p, r) => [...Array<number>(padCounts[r]).fill(padId), ...p]);
  const rands = prompts.map((_, r) => mulberry32(mixSeed(options.seed, r)));
  const out = prompts.map(() => ({ ids: [] as number[], logp: [] as number[], stopReason: null as HfStopReason | null }));

  if (options.adapter !== undefined && options.adapter !== null && !model.adapterNames().includes(options.adapter)) {
    throw new Error(`sampleHf: no adapter "${options.adapter}"; adapters: ${model.adapterNames().join(', ') || '(none)'}`);
  }
  const session = HF_DECODERS[options.decode ?? 'kv'](model, rows, padCounts, options.adapter);
  try {
    for (let step = 0; step < maxNew; step++) {
      const lsm = tf.tidy(() => tf.logSoftmax(session.logits, -1)); // [B, V] nats
      const V = lsm.shape[1];
      const all = lsm.dataSync() as Float32Array; // waits for the device
      lsm.dispose();
      const next: number[] = [];
      for (let r = 0; r < B; r++) {
        const o = out[r];
        if (o.stopReason) {
          next.push(padId);
          continue;
        }
        const lp = all.subarray(r * V, (r + 1) * V);
        const tok = pickToken(lp.subarray(0, validVocab), temperature, topK, topP, rands[r]); // padded rows left out
        o.ids.push(tok);
        o.logp.push(lp[tok]);
        next.push(tok);
        if (stopIds.has(tok)) o.stopReason = 'end';
        else if (step === maxNew - 1) o.stopReason = 'length';
      }
      if (out.every((o) => o.stopReason)) break;
      session.advance(next);
    }
  } finally {
    session.dispose();
  }
  return out.map((o) => ({ ids: o.ids, logp: o.logp, stopReason: o.stopReason ?? 'length' }));
}
