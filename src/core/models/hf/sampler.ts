/**
 * Batched generation with a Hugging Face model (model.ts): prompts left-padded to a common
 * length, each row's positions from 0 at its first real token and its pad keys masked, so a row
 * does not depend on its neighbours; then one token per step against a KV cache (`decode: 'kv'`,
 * default), or by re-running the whole forward pass every step (`decode: 'full'`: the slow,
 * obvious reference the KV path is tested and benchmarked against). A row that stopped leaves
 * the batch at the next step (its cache rows are dropped), so uneven lengths cost only the rows
 * still running.
 *
 * Token choice: ../devicePick.ts `TOKEN_PICKERS`, shared with the lab's sampler (transformers'
 * `generate` warper order: temperature, then top-k, then top-p, then a draw; temperature 0 is
 * greedy): by default on the backend, reading back one id and one log-prob per row per step; `host`
 * reads back the whole log-softmax and walks it with ../tokenPick.ts (the reference). Padded
 * vocabulary rows (vocab_size > the tokenizer's tokens: ids >= `validVocab`) are left out of the
 * choice, so they are never sampled. With `topLogprobs` N > 0 each generated id also gets the N
 * most probable real ids of that step and their log-probs (the same distribution as `logp`), in
 * the same read-back (the external endpoint's top_logprobs).
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
import { logSoftmaxRows, tokenPicker, type RowsPicker, type TokenPickerName, type TopAlternatives } from '../devicePick';
import { mixSeed, mulberry32 } from '../random';
import { pickToken } from '../tokenPick';
import { selectCacheRows } from './decode';
import { MASKED, type HfAdapterChoice, type HfKvCache, type HfModel } from './model';

/** kv: one cached step per token (the fast path); full: the whole sequence each step (the slow reference). */
export const DECODE_MODES = ['kv', 'full'] as const;
export type DecodeMode = (typeof DECODE_MODES)[number];

export { pickToken, logSoftmaxRows };

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
  /** Id used to left-pad prompts. Default 0. */
  padId?: number;
  /** Real tokens: ids >= validVocab (padded head rows) are never sampled. Default the model's `validVocab`. */
  validVocab?: number;
  /** KV cache (default) or full recomputation each step. */
  decode?: DecodeMode;
  /** The adapter to sample with: a name, null for the base alone, default as model.ts `HfAdapterChoice`. */
  adapter?: string | null;
  /** Where tokens are chosen (../devicePick.ts): 'device' (default), 'host' (the reference), or a picker (benches time one). */
  picker?: TokenPickerName | RowsPicker;
  /** List this many most probable alternatives per generated token (`top` of each row); 0 (default) lists none. */
  topLogprobs?: number;
}

export interface HfSampledRow {
  /** Generated ids (stop id included), no padding. */
  ids: number[];
  /** Behaviour log-prob of each generated id: un-tempered log-softmax over the whole head. */
  logp: number[]; // nats
  stopReason: HfStopReason;
  /** With topLogprobs > 0: per generated id, the most probable real ids of the same log-softmax, descending. */
  top?: TopAlternatives[];
}

/**
 * Next-token logits of the rows still running, advanced one token at a time. Rows that stopped
 * are dropped at the next `advance` (their cache rows too), so a step costs only the rows left.
 */
interface DecodeSession {
  logits: tf.Tensor2D; // [A, V]: one row per entry of `rows`
  rows: number[]; // the prompt index of each logits row, ascending
  /** tokens[i], running[i]: the token sampled for logits row i, and whether that row goes on. */
  advance(tokens: number[], running: boolean[]): void;
  dispose(): void;
}

/** Indices of the running entries. */
function kept(running: boolean[]): number[] {
  return running.flatMap((on, i) => (on ? [i] : []));
}

type DecoderFactory = (model: HfModel, rows: number[][], padCounts: number[], adapter: HfAdapterChoice) => DecodeSession;

function disposeCache(c: HfKvCache): void {
  tf.dispose([...c.k.flat(), ...c.v.flat()]);
}

/** Variants of the decode loop; both give the same logits up to float rounding. */
export const HF_DECODERS = {
  kv: (model, rows, padCounts, adapter) => {
    const L = rows[0].length;
    const first = tf.tidy(() => model.prefill(tf.tensor2d(rows.flat(), [rows.length, L], 'int32'), padCounts, adapter));
    let cache = first.cache;
    let pads = [...padCounts]; // of the running rows
    let t = L; // columns in the cache
    const session: DecodeSession = {
      logits: first.logits,
      rows: rows.map((_, r) => r),
      advance(all, running) {
        let tokens = all;
        if (running.some((on) => !on)) {
          const keep = kept(running);
          const fewer = selectCacheRows(cache, keep, model.config.numKvHeads);
          disposeCache(cache);
          cache = fewer;
          tokens = keep.map((i) => all[i]);
          pads = keep.map((i) => pads[i]);
          session.rows = keep.map((i) => session.rows[i]);
        }
        const B = tokens.length;
        const keyBias = new Float32Array(B * (t + 1)); // [B, t+1]: pad keys masked
        for (let r = 0; r < B; r++) keyBias.fill(MASKED, r * (t + 1), r * (t + 1) + pads[r]);
        const next = model.decodeStep(
          tokens,
          pads.map((p) => t - p),
          cache,
          keyBias,
          adapter,
        );
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
    let seqs = rows.map((r) => [...r]); // of the running rows
    let pads = [...padCounts];
    const run = () =>
      tf.tidy(() => {
        const out = model.prefill(tf.tensor2d(seqs.flat(), [seqs.length, seqs[0].length], 'int32'), pads, adapter);
        disposeCache(out.cache);
        return out.logits;
      });
    const session: DecodeSession = {
      logits: run(),
      rows: rows.map((_, r) => r),
      advance(tokens, running) {
        tokens.forEach((tok, i) => seqs[i].push(tok));
        const keep = kept(running);
        seqs = keep.map((i) => seqs[i]);
        pads = keep.map((i) => pads[i]);
        session.rows = keep.map((i) => session.rows[i]);
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

/** Generates completions for every prompt (token ids). Reads back once per step: the chosen ids and their log-probs. */
export function sampleHf(model: HfModel, prompts: readonly (readonly number[])[], options: HfSampleOptions): HfSampledRow[] {
  const B = prompts.length;
  if (B === 0) return [];
  const temperature = options.temperature ?? 1;
  const topP = options.topP ?? 1;
  const topK = options.topK ?? 0;
  const padId = options.padId ?? 0;
  const stopIds = new Set(options.stopIds ?? []);
  const validVocab = options.validVocab ?? model.validVocab;
  const topLogprobs = options.topLogprobs ?? 0;
  if (!(Number.isInteger(topLogprobs) && topLogprobs >= 0)) throw new Error(`sampleHf: topLogprobs ${topLogprobs} must be an integer >= 0`);
  if (!(temperature >= 0) || !(topP > 0 && topP <= 1) || !(Number.isInteger(topK) && topK >= 0)) {
    throw new Error(`sampleHf: temperature ${temperature} must be >= 0, topP ${topP} in (0, 1], topK ${topK} an integer >= 0`);
  }
  if (!Number.isInteger(options.maxNewTokens) || options.maxNewTokens < 1)
    throw new Error(`sampleHf: maxNewTokens ${options.maxNewTokens} must be an integer >= 1`);
  if (!(validVocab >= 1 && validVocab <= model.config.vocabSize))
    throw new Error(`sampleHf: validVocab ${validVocab} must be in [1, ${model.config.vocabSize}]`);
  prompts.forEach((p, r) => {
    if (p.length === 0) throw new Error(`sampleHf: prompt ${r} is empty`);
    for (const id of p)
      if (!(Number.isInteger(id) && id >= 0 && id < model.config.vocabSize))
        throw new Error(`sampleHf: prompt ${r} has id ${id} outside [0, ${model.config.vocabSize})`);
  });
  const L = Math.max(...prompts.map((p) => p.length));
  const maxNew = Math.min(options.maxNewTokens, model.config.maxPositions - L);
  if (maxNew < 1) throw new Error(`sampleHf: the longest prompt (${L} tokens) leaves no room in max_position_embeddings ${model.config.maxPositions}`);
  const padCounts = prompts.map((p) => L - p.length);
  const rows = prompts.map((p, r) => [...Array<number>(padCounts[r]).fill(padId), ...p]);
  const rands = prompts.map((_, r) => mulberry32(mixSeed(options.seed, r)));
  const out = prompts.map(() => ({ ids: [] as number[], logp: [] as number[], top: [] as TopAlternatives[], stopReason: null as HfStopReason | null }));

  if (options.adapter !== undefined && options.adapter !== null && !model.adapterNames().includes(options.adapter)) {
    throw new Error(`sampleHf: no adapter "${options.adapter}"; adapters: ${model.adapterNames().join(', ') || '(none)'}`);
  }
  const pick = typeof options.picker === 'function' ? options.picker : tokenPicker(options.picker ?? 'device');
  const settings = { temperature, topK, topP, validVocab, topLogprobs };
  const session = HF_DECODERS[options.decode ?? 'kv'](model, rows, padCounts, options.adapter);
  try {
    for (let step = 0; step < maxNew; step++) {
      const picks = pick(
        session.logits,
        session.rows.map((r) => rands[r]),
        settings,
      ); // reads back once; padded rows left out
      const next: number[] = [];
      const running: boolean[] = [];
      session.rows.forEach((r, i) => {
        const o = out[r];
        const tok = picks.ids[i];
        o.ids.push(tok);
        o.logp.push(picks.logp[i]);
        if (picks.top) o.top.push(picks.top[i]);
        next.push(tok);
        if (stopIds.has(tok)) o.stopReason = 'end';
        else if (step === maxNew - 1) o.stopReason = 'length';
        running.push(!o.stopReason);
      });
      if (out.every((o) => o.stopReason)) break;
      session.advance(next, running); // rows that stopped are dropped
    }
  } finally {
    session.dispose();
  }
  return out.map((o) => ({ ids: o.ids, logp: o.logp, stopReason: o.stopReason ?? 'length', ...(topLogprobs > 0 ? { top: o.top } : {}) }));
}
