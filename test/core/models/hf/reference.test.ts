// The float64 reference forward (src/core/models/hf/reference.ts) against transformers' own float32
// logits on the committed fixtures (test/fixtures/hf/*/expected.json, written by
// scripts/fixtures/make_hf_fixtures.py), including checks that the comparison is not vacuous:
// a forward that drops a bias, a q/k norm, the yarn attention factor or the adapter must fail it.
import * as path from 'node:path';
import * as fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { readHfConfig } from '../../../../src/core/models/hf/config';
import { readLoraAdapter } from '../../../../src/core/models/hf/loraFiles';
import { referenceLogits, referenceLogprobs, type WeightLookup } from '../../../../src/core/models/hf/reference';
import { openTensorSource, type FileTensorSource } from '../../../../src/core/models/hf/safetensorsFile';
import type { HfModelConfig, LoraPair } from '../../../../src/core/models/hf/types';
import { checkWeights } from '../../../../src/core/models/hf/weights';

const FIXTURES = path.resolve(__dirname, '../../../fixtures/hf');

interface Expected {
  tokenizer_size: number;
  vocab_size: number;
  sequences: { ids: number[]; logits: number[][]; logprobs: number[] }[];
  greedy: { prompt: number[]; ids: number[] };
}

const readExpected = (folder: string): Expected => JSON.parse(fs.readFileSync(path.join(FIXTURES, folder, 'expected.json'), 'utf8'));

const opened: FileTensorSource[] = [];
afterAll(() => opened.forEach((s) => s.close()));

function model(folder: string): { config: HfModelConfig; weight: WeightLookup; source: FileTensorSource } {
  const dir = path.join(FIXTURES, folder);
  const config = readHfConfig(dir);
  const source = openTensorSource(dir);
  opened.push(source);
  checkWeights(config, source);
  const weight: WeightLookup = (name) => {
    const entry = source.get(name);
    if (!entry) throw new Error(`no tensor ${name}`);
    return entry.read();
  };
  return { config, weight, source };
}

/** Largest |a - b| / (1 + |b|) over every position and vocabulary row. */
function maxRelErr(ours: Float64Array[], theirs: number[][]): number {
  let worst = 0;
  theirs.forEach((row, t) => row.forEach((v, i) => (worst = Math.max(worst, Math.abs(ours[t][i] - v) / (1 + Math.abs(v))))));
  return worst;
}

const TOL = 1e-4;

/** Every base/adapter fixture: the folder of the weights and (optionally) the adapter. */
const CASES: { name: string; base: string; adapter?: string; what: string }[] = [
  { name: 'qwen3-tiny', base: 'qwen3-tiny', what: 'BF16, tied head, head_dim 16 != 32/4, GQA 4:2, q/k norms' },
  { name: 'qwen2-tiny', base: 'qwen2-tiny', what: 'F32, q/k/v biases, untied head, MQA, yarn RoPE x4' },
  { name: 'llama-tiny-sharded', base: 'llama-tiny-sharded', what: 'F16, 4 shards, llama3 RoPE, older config keys' },
  { name: 'qwen3-tiny-lora', base: 'qwen3-tiny', adapter: 'qwen3-tiny-lora', what: 'peft LoRA r4 alpha8 on q/v/o/down' },
  { name: 'qwen3-tiny-rslora', base: 'qwen3-tiny', adapter: 'qwen3-tiny-rslora', what: 'peft rsLoRA on q/k/gate/up' },
  { name: 'qwen2-tiny-lora', base: 'qwen2-tiny', adapter: 'qwen2-tiny-lora', what: 'peft LoRA on a biased base' },
];

describe('reference forward = transformers (float32 logits, relative 1e-4)', () => {
  for (const c of CASES) {
    it(`${c.name}: ${c.what}`, () => {
      const { config, weight } = model(c.base);
      const lora = c.adapter ? readLoraAdapter(path.join(FIXTURES, c.adapter), config).pairs : undefined;
      const expected = readExpected(c.name);
      expect(expected.vocab_size).toBe(config.vocabSize);
      for (const seq of expected.sequences) {
        const logits = referenceLogits(config, weight, seq.ids, lora);
        expect(logits.length).toBe(seq.ids.length);
        expect(maxRelErr(logits, seq.logits)).toBeLessThan(TOL);
        const lp = referenceLogprobs(config, weight, seq.ids, lora);
        expect(lp.length).toBe(seq.ids.length - 1);
        lp.forEach((v, t) => expect(Math.abs(v - seq.logprobs[t])).toBeLessThan(TOL * (1 + Math.abs(seq.logprobs[t]))));
      }
    });
  }

  it('greedy continuation (argmax over the tokenizer ids, 8 steps) matches transformers on every fixture', () => {
    for (const c of CASES) {
      const { config, weight } = model(c.base);
      const lora = c.adapter ? readLoraAdapter(path.join(FIXTURES, c.adapter), config).pairs : undefined;
      const { greedy, tokenizer_size } = readExpected(c.name);
      const ids = [...greedy.prompt];
      for (let step = 0; step < greedy.ids.length; step++) {
        const last = referenceLogits(config, weight, ids, lora).at(-1)!;
        let best = 0;
        for (let i = 1; i < tokenizer_size; i++) if (last[i] > last[best]) best = i;
        ids.push(best);
      }
      expect(ids.slice(greedy.prompt.length), c.name).toEqual(greedy.ids);
    }
  });
});

describe('the comparison is not vacuous', () => {
  /** The error of the reference on the first fixture sequence when `alter` changes config or weights. */
  function errorWhen(
    folder: string,
    alter: {
      config?: Partial<HfModelConfig>;
      weight?: (name: string, w: Float32Array) => Float32Array;
      lora?: LoraPair[] | null;
      adapter?: string;
    },
  ): number {
    const { config, weight } = model(folder);
    const expected = readExpected(alter.adapter ?? folder);
    const adapterPairs = () => (alter.adapter ? readLoraAdapter(path.join(FIXTURES, alter.adapter), config).pairs : undefined);
    const lora = alter.lora === null ? undefined : (alter.lora ?? adapterPairs());
    const cfg = { ...config, ...alter.config };
    const w: WeightLookup = (name) => (alter.weight ? alter.weight(name, weight(name)) : weight(name));
    return maxRelErr(referenceLogits(cfg, w, expected.sequences[0].ids, lora), expected.sequences[0].logits);
  }
  const zeroIf = (test: (name: string) => boolean) => (name: string, w: Float32Array) => (test(name) ? new Float32Array(w.length) : w);
  const onesIf = (test: (name: string) => boolean) => (name: string, w: Float32Array) => (test(name) ? new Float32Array(w.length).fill(1) : w);

  it('the unaltered forward passes (the baseline of the cases below)', () => {
    expect(errorWhen('qwen3-tiny', {})).toBeLessThan(TOL);
    expect(errorWhen('qwen2-tiny', {})).toBeLessThan(TOL);
  });
  it('Qwen3 without its q/k norms fails', () => {
    expect(errorWhen('qwen3-tiny', { config: { qkNorm: false } })).toBeGreaterThan(100 * TOL);
  });
  it('Qwen3 with q/k norm weights left at 1 fails (the fixture perturbed them)', () => {
    expect(errorWhen('qwen3-tiny', { weight: onesIf((n) => /[qk]_norm/.test(n)) })).toBeGreaterThan(100 * TOL);
  });
  it('layer norms left at 1 fail', () => {
    expect(errorWhen('llama-tiny-sharded', { weight: onesIf((n) => n.endsWith('layernorm.weight')) })).toBeGreaterThan(100 * TOL);
  });
  it('Qwen2 without its q/k/v biases fails', () => {
    expect(errorWhen('qwen2-tiny', { weight: zeroIf((n) => n.endsWith('.bias')) })).toBeGreaterThan(100 * TOL);
  });
  it('Qwen2 with yarn read as default RoPE (no attention factor, no interpolation) fails', () => {
    expect(errorWhen('qwen2-tiny', { config: { rope: { type: 'default', theta: 1000 } } })).toBeGreaterThan(100 * TOL);
  });
  it('Llama with llama3 scaling read as default RoPE fails', () => {
    expect(errorWhen('llama-tiny-sharded', { config: { rope: { type: 'default', theta: 500000 } } })).toBeGreaterThan(100 * TOL);
  });
  it('the LoRA fixture without its adapter fails, and with alpha/r instead of alpha/sqrt(r) too', () => {
    expect(errorWhen('qwen3-tiny', { adapter: 'qwen3-tiny-lora', lora: null })).toBeGreaterThan(100 * TOL);
    const { config } = model('qwen3-tiny');
    const pairs = readLoraAdapter(path.join(FIXTURES, 'qwen3-tiny-rslora'), config).pairs;
    expect(pairs[0].scale).toBeCloseTo(8 / Math.sqrt(4), 12);
    const plain = pairs.map((p) => ({ ...p, scale: 8 / 4 }));
    expect(errorWhen('qwen3-tiny', { adapter: 'qwen3-tiny-rslora', lora: plain })).toBeGreaterThan(100 * TOL);
  });
  it('RMSNorm read as x * (1 + w) (Gemma style) fails', () => {
    const plusOne = (name: string, w: Float32Array) => (name.endsWith('norm.weight') ? w.map((v) => v + 1) : w);
    expect(errorWhen('qwen3-tiny', { weight: plusOne })).toBeGreaterThan(100 * TOL);
  });
  it('RoPE read as interleaved pairs (2i, 2i+1) instead of rotate-half (i, i + d/2) fails', () => {
    // Rotate-half on q/k rows permuted [0, 2, 4, 6, 1, 3, 5, 7] within each head computes exactly what
    // the interleaved convention computes on the original rows; q.k is otherwise unchanged.
    const { config } = model('llama-tiny-sharded');
    const hd = config.headDim;
    const order = [...Array.from({ length: hd / 2 }, (_, i) => 2 * i), ...Array.from({ length: hd / 2 }, (_, i) => 2 * i + 1)];
    const interleave = (name: string, w: Float32Array): Float32Array => {
      if (!/self_attn\.[qk]_proj\.weight$/.test(name)) return w;
      const cols = config.hiddenSize;
      const out = new Float32Array(w.length);
      for (let head = 0; head < w.length / (hd * cols); head++) {
        order.forEach((src, dst) => out.set(w.subarray((head * hd + src) * cols, (head * hd + src + 1) * cols), (head * hd + dst) * cols));
      }
      return out;
    };
    expect(errorWhen('llama-tiny-sharded', { weight: interleave })).toBeGreaterThan(100 * TOL);
    // The permutation itself is harmless: at position 0 (no rotation) the logits still match.
    const { weight } = model('llama-tiny-sharded');
    const first = readExpected('llama-tiny-sharded').sequences[0];
    const row0 = referenceLogits(config, (n) => interleave(n, weight(n)), first.ids.slice(0, 1))[0];
    expect(maxRelErr([row0], [first.logits[0]])).toBeLessThan(TOL);
  });
  it('GQA read as "KV head = h mod nKV" instead of floor(h / group) fails', () => {
    // Permuting the query heads' rows of q_proj and o_proj's columns so that head h's query meets KV
    // head h mod 2 is what a wrong grouping computes; it must change the logits.
    const { config } = model('qwen3-tiny');
    const hd = config.headDim;
    const perm = [0, 2, 1, 3]; // floor(h/2) of perm[h] = h mod 2
    const permute = (name: string, w: Float32Array): Float32Array => {
      if (name.endsWith('q_proj.weight')) {
        const out = new Float32Array(w.length);
        const row = w.length / (config.numHeads * hd);
        perm.forEach((src, dst) => out.set(w.subarray(src * hd * row, (src + 1) * hd * row), dst * hd * row));
        return out;
      }
      if (name.endsWith('o_proj.weight')) {
        const out = new Float32Array(w.length);
        const cols = config.numHeads * hd;
        for (let r = 0; r < config.hiddenSize; r++) {
          perm.forEach((src, dst) => out.set(w.subarray(r * cols + src * hd, r * cols + (src + 1) * hd), r * cols + dst * hd));
        }
        return out;
      }
      return w;
    };
    expect(errorWhen('qwen3-tiny', { weight: permute })).toBeGreaterThan(100 * TOL);
  });
});

describe('referenceLogprobs', () => {
  it('restricting to validVocab renormalises over the tokenizer ids only', () => {
    const { config, weight } = model('qwen3-tiny');
    const { sequences, tokenizer_size } = readExpected('qwen3-tiny');
    const ids = sequences[0].ids;
    const full = referenceLogprobs(config, weight, ids);
    const masked = referenceLogprobs(config, weight, ids, undefined, tokenizer_size);
    const logits = referenceLogits(config, weight, ids);
    masked.forEach((v, t) => {
      const row = logits[t];
      const lse = (n: number) => Math.log(row.slice(0, n).reduce((s, x) => s + Math.exp(x), 0));
      expect(v).toBeCloseTo(row[ids[t + 1]] - lse(tokenizer_size), 9);
      expect(full[t]).toBeCloseTo(row[ids[t + 1]] - lse(config.vocabSize), 9);
      expect(v).toBeGreaterThanOrEqual(full[t]);
    });
    expect(() => referenceLogprobs(config, weight, [1, tokenizer_size], undefined, tokenizer_size)).toThrow(/padded vocabulary row/);
    expect(referenceLogprobs(config, weight, [5])).toEqual([]);
  });
  it('a LoRA pair aimed at a weight the model lacks is an error, not silently ignored', () => {
    const { config, weight } = model('qwen3-tiny');
    const pair: LoraPair = {
      target: 'model.layers.7.self_attn.q_proj.weight',
      a: new Float32Array(4 * 32),
      b: new Float32Array(64 * 4),
      r: 4,
      inFeatures: 32,
      outFeatures: 64,
      scale: 1,
    };
    expect(() => referenceLogits(config, weight, [1, 2], [pair])).toThrow(
      /LoRA pairs target weights the model does not have: model\.layers\.7\.self_attn\.q_proj\.weight/,
    );
  });
  it('an id outside the vocabulary is an error naming it', () => {
    const { config, weight } = model('qwen3-tiny');
    expect(() => referenceLogits(config, weight, [1, config.vocabSize])).toThrow(/token id 320 at position 1/);
  });
});
