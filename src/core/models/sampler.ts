/**
 * Batched generation for prompts of different lengths. Prompts are left-padded to a common
 * length; each row's positions start at 0 at its first real token and pad keys are masked
 * (transformer.ts `prefill`), so a row's logits do not depend on its neighbours. Then one token
 * per step against a KV cache (`decode: 'kv'`, default), or by re-running the whole forward pass
 * every step (`decode: 'full'`: the slow, obvious reference the KV path is tested and benchmarked
 * against).
 *
 * Recorded behaviour log-prob (decision, SRPO.md point 2): for every generated token the sampler
 * records log pi(token | prefix) of the UN-TEMPERED model, log_softmax(logits), whatever the
 * temperature and top-p. That is the quantity the trainer's teacher-forced code (logprobs.ts)
 * computes, so old and new log-probs come from the same model function; at temperature 1
 * without top-p it is exactly the log-prob under the sampling distribution. With temperature or
 * top-p the tokens come from a different distribution q, and the ratio pi_new/pi_old is then not
 * an importance weight against q: that bias is accepted (as in verl and TRL), and the trainer
 * should still recompute old log-probs with logprobs.ts and may use these as a consistency check.
 *
 * Token choice: devicePick.ts `TOKEN_PICKERS` (shared with the Hugging Face sampler): by default
 * on the backend, one id and one log-prob read back per row per step; `host` reads back the
 * log-softmax and walks it with tokenPick.ts (the reference). With `topLogprobs` N > 0 each
 * generated token also gets the N most probable ids of that step (same read-back). Randomness: one seeded
 * mulberry32 stream per row (random.ts), so a row's sample depends only on the seed, its index
 * and its own logits. Not here: chat templates and role prompts (callers build prompt ids with
 * the tokenizer), batching across policies (policySet.ts).
 * Tests: test/core/models/sampler.test.ts.
 */
import * as tf from '@tensorflow/tfjs';
import type { CharTokenizer } from './tokenizer';
import { MASKED, type KVCache, type Transformer } from './transformer';
import { mixSeed, mulberry32, type Uniform } from './random';
import { tokenPicker, type TokenPickerName, type TopAlternatives } from './devicePick';
import { pickToken } from './tokenPick';

export const STOP_REASONS = ['end', 'stop', 'length'] as const;
/** end: the end token was sampled; stop: a stop string appeared; length: maxNewTokens or the context ran out. */
export type StopReason = (typeof STOP_REASONS)[number];

export const DECODE_MODES = ['kv', 'full'] as const;
export type DecodeMode = (typeof DECODE_MODES)[number];

export interface SampleOptions {
  /** Most tokens generated per row (also capped by contextLength - longest prompt). >= 1. */
  maxNewTokens: number;
  /** Softmax temperature; 0 means greedy (argmax). Default 1. */
  temperature?: number;
  /** Nucleus sampling: keep the smallest set of tokens whose probability reaches topP. (0, 1], default 1. */
  topP?: number;
  /** Token that ends a row (included in the output, mask 1). Default: the tokenizer's `<eos>`, else none. */
  endId?: number | null;
  /** Strings that end a row once its decoded completion contains one (needs `tokenizer`). */
  stopStrings?: readonly string[];
  /** Decodes completions for stop strings and `text`. */
  tokenizer?: CharTokenizer;
  /** Seed of the per-row random streams. */
  seed: number;
  /** Padding id for left-padding prompts and for the output after a row stops. Default 0. */
  padId?: number;
  /** KV cache (default) or full recomputation each step. */
  decode?: DecodeMode;
  /** Where tokens are chosen (devicePick.ts): 'device' (default) or 'host', the reference. */
  picker?: TokenPickerName;
  /** List this many most probable alternatives per generated token (`top` of each row); 0 (default) lists none. */
  topLogprobs?: number;
}

export interface SampledRow {
  /** Generated ids, padded with padId to the batch's width W. */
  tokens: number[]; // [W]
  /** Behaviour log-prob of each generated token (un-tempered log-softmax; 0 on padding). */
  logp: number[]; // [W] nats
  /** 1 on generated tokens, 0 on padding. */
  mask: number[]; // [W]
  /** Number of generated tokens. */
  length: number;
  stopReason: StopReason;
  /** Decoded completion (when a tokenizer was given), special tokens written by name. */
  text?: string;
  /** With topLogprobs > 0: per generated token (length entries, no padding), the most probable ids of the same log-softmax, descending. */
  top?: TopAlternatives[];
}

/** Next-token logits of every row, advanced one token at a time. */
interface DecodeSession {
  logits: tf.Tensor2D; // [B, V]
  advance(tokens: number[]): void;
  dispose(): void;
}

type DecoderFactory = (model: Transformer, rows: number[][], padCounts: number[]) => DecodeSession;

function disposeCache(c: KVCache): void {
  for (const t of [...c.kT, ...c.v]) t.dispose();
}

/** Variants of the decode loop; both give the same logits up to float rounding. */
export const DECODERS = {
  kv: (model, rows, padCounts) => {
    const B = rows.length;
    const L = rows[0].length;
    const first = tf.tidy(() => model.prefill(tf.tensor2d(rows.flat(), [B, L], 'int32'), padCounts));
    let cache = first.cache;
    let t = L; // columns in the cache
    const session: DecodeSession = {
      logits: first.logits,
      advance(tokens) {
        const keyBias = new Float32Array(B * (t + 1)); // [B, t+1]: pad keys masked
        for (let r = 0; r < B; r++) for (let c = 0; c < padCounts[r]; c++) keyBias[r * (t + 1) + c] = MASKED;
        const positions = padCounts.map((p) => t - p);
        const next = model.decodeStep(tokens, positions, cache, keyBias);
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
  full: (model, rows, padCounts) => {
    const seqs = rows.map((r) => [...r]);
    const run = () => tf.tidy(() => model.prefill(tf.tensor2d(seqs.flat(), [seqs.length, seqs[0].length], 'int32'), padCounts).logits);
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

/** Samples one id from log-probs at a temperature, with optional top-p; greedy when temperature is 0 (tokenPick.ts). */
export function sampleToken(logp: Float32Array | number[], temperature: number, topP: number, rand: Uniform): number {
  return pickToken(logp, temperature, 0, topP, rand);
}

/** Generates completions for every prompt (token ids). Reads back once per step: the chosen ids and their log-probs. */
export function sample(model: Transformer, prompts: readonly (readonly number[])[], options: SampleOptions): SampledRow[] {
  const B = prompts.length;
  if (B === 0) return [];
  const temperature = options.temperature ?? 1;
  const topP = options.topP ?? 1;
  const padId = options.padId ?? 0;
  const endId = options.endId === undefined ? (options.tokenizer?.eosId ?? null) : options.endId;
  const stops = options.stopStrings ?? [];
  const topLogprobs = options.topLogprobs ?? 0;
  if (!(Number.isInteger(topLogprobs) && topLogprobs >= 0)) throw new Error(`sample: topLogprobs ${topLogprobs} must be an integer >= 0`);
  if (!(temperature >= 0) || !(topP > 0 && topP <= 1)) throw new Error(`sample: temperature ${temperature} must be >= 0 and topP ${topP} in (0, 1]`);
  if (!Number.isInteger(options.maxNewTokens) || options.maxNewTokens < 1)
    throw new Error(`sample: maxNewTokens ${options.maxNewTokens} must be an integer >= 1`);
  if (stops.length && !options.tokenizer) throw new Error('sample: stopStrings need a tokenizer to decode completions');
  prompts.forEach((p, r) => {
    if (p.length === 0) throw new Error(`sample: prompt ${r} is empty`);
  });
  const L = Math.max(...prompts.map((p) => p.length));
  const maxNew = Math.min(options.maxNewTokens, model.config.contextLength - L);
  if (maxNew < 1) throw new Error(`sample: the longest prompt (${L} tokens) leaves no room in contextLength ${model.config.contextLength}`);
  const padCounts = prompts.map((p) => L - p.length);
  const rows = prompts.map((p, r) => [...Array<number>(padCounts[r]).fill(padId), ...p]);
  const rands = prompts.map((_, r) => mulberry32(mixSeed(options.seed, r)));
  const out = prompts.map(() => ({
    tokens: [] as number[],
    logp: [] as number[],
    top: [] as TopAlternatives[],
    text: '',
    stopReason: null as StopReason | null,
  }));

  const pick = tokenPicker(options.picker ?? 'device');
  const settings = { temperature, topK: 0, topP, validVocab: Infinity, topLogprobs };
  const session = DECODERS[options.decode ?? 'kv'](model, rows, padCounts);
  try {
    for (let step = 0; step < maxNew; step++) {
      const picks = pick(
        session.logits,
        out.map((o, r) => (o.stopReason ? null : rands[r])),
        settings,
      ); // reads back once; stopped rows take no draw
      const next: number[] = [];
      for (let r = 0; r < B; r++) {
        const o = out[r];
        if (o.stopReason) {
          next.push(padId);
          continue;
        }
        const tok = picks.ids[r];
        o.tokens.push(tok);
        o.logp.push(picks.logp[r]);
        if (picks.top) o.top.push(picks.top[r]);
        next.push(tok);
        if (options.tokenizer) o.text += options.tokenizer.decode([tok]);
        if (tok === endId) o.stopReason = 'end';
        else if (stops.some((s) => o.text.includes(s, Math.max(0, o.text.length - s.length - 16)))) o.stopReason = 'stop';
        else if (step === maxNew - 1) o.stopReason = 'length';
      }
      if (out.every((o) => o.stopReason)) break;
      session.advance(next);
    }
  } finally {
    session.dispose();
  }
  const W = Math.max(...out.map((o) => o.tokens.length));
  return out.map((o) => {
    const n = o.tokens.length;
    const pad = <T>(xs: T[], v: T) => [...xs, ...Array<T>(W - n).fill(v)];
    return {
      tokens: pad(o.tokens, padId),
      logp: pad(o.logp, 0),
      mask: pad(Array<number>(n).fill(1), 0),
      length: n,
      stopReason: o.stopReason ?? 'length',
      ...(options.tokenizer ? { text: o.text } : {}),
      ...(topLogprobs > 0 ? { top: o.top } : {}),
    };
  });
}
