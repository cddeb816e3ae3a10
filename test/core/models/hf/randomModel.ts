// Shared fixtures of the HF fast-path tests (model, sampler, logprobs, memory): a tiny random
// HfModelConfig per architecture, seeded random weights in the checkpoint's own names and [out, in]
// shapes (norm weights and biases perturbed away from 1 and 0, weights large enough that outputs
// are peaked: a forward that drops one of them fails), an in-memory TensorSource, and a minimal
// float64 forward written from transformers' modeling code with its own loops (no tfjs), the
// independent reference of model.ts for random configs; and a loader of the committed
// fixtures made with transformers.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readHfConfig } from '../../../../src/core/models/hf/config';
import { readLoraAdapter } from '../../../../src/core/models/hf/loraFiles';
import { HfModel } from '../../../../src/core/models/hf/model';
import { openTensorSource } from '../../../../src/core/models/hf/safetensorsFile';
import { mulberry32 } from '../../../../src/core/models/random';
import type { HfModelConfig, LoraPair, TensorEntry, TensorSource } from '../../../../src/core/models/hf/types';

/** A Qwen3-shaped micro model: head_dim 8 != hidden 16 / 4 heads, GQA 4:2, q/k norms, tied head. */
export function randomHfConfig(overrides: Partial<HfModelConfig> = {}): HfModelConfig {
  return {
    architecture: 'qwen3',
    vocabSize: 40,
    hiddenSize: 16,
    intermediateSize: 24,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: 2,
    headDim: 8,
    rmsNormEps: 1e-6,
    rope: { type: 'default', theta: 10000 },
    maxPositions: 64,
    tieWordEmbeddings: true,
    attentionBias: false,
    qkNorm: true,
    dtype: 'F32',
    bosTokenId: null,
    eosTokenIds: [],
    ...overrides,
  };
}

/** Qwen2-shaped: q/k/v biases, untied head, no q/k norms, head_dim = hidden / heads. */
export function randomQwen2Config(overrides: Partial<HfModelConfig> = {}): HfModelConfig {
  return randomHfConfig({ architecture: 'qwen2', headDim: 4, qkNorm: false, attentionBias: true, tieWordEmbeddings: false, ...overrides });
}

/** Names and [out, in] shapes of every tensor of a config, in checkpoint order. */
export function weightShapes(c: HfModelConfig): { name: string; shape: number[] }[] {
  const { hiddenSize: d, intermediateSize: I, numHeads: H, numKvHeads: K, headDim: hd } = c;
  const out: { name: string; shape: number[] }[] = [{ name: 'model.embed_tokens.weight', shape: [c.vocabSize, d] }];
  for (let l = 0; l < c.numLayers; l++) {
    const p = `model.layers.${l}.`;
    out.push({ name: `${p}input_layernorm.weight`, shape: [d] }, { name: `${p}post_attention_layernorm.weight`, shape: [d] });
    out.push({ name: `${p}self_attn.q_proj.weight`, shape: [H * hd, d] }, { name: `${p}self_attn.k_proj.weight`, shape: [K * hd, d] });
    out.push({ name: `${p}self_attn.v_proj.weight`, shape: [K * hd, d] }, { name: `${p}self_attn.o_proj.weight`, shape: [d, H * hd] });
    if (c.attentionBias) {
      out.push(
        { name: `${p}self_attn.q_proj.bias`, shape: [H * hd] },
        { name: `${p}self_attn.k_proj.bias`, shape: [K * hd] },
        { name: `${p}self_attn.v_proj.bias`, shape: [K * hd] },
      );
    }
    if (c.qkNorm) out.push({ name: `${p}self_attn.q_norm.weight`, shape: [hd] }, { name: `${p}self_attn.k_norm.weight`, shape: [hd] });
    out.push(
      { name: `${p}mlp.gate_proj.weight`, shape: [I, d] },
      { name: `${p}mlp.up_proj.weight`, shape: [I, d] },
      { name: `${p}mlp.down_proj.weight`, shape: [d, I] },
    );
  }
  out.push({ name: 'model.norm.weight', shape: [d] });
  if (!c.tieWordEmbeddings) out.push({ name: 'lm_head.weight', shape: [c.vocabSize, d] });
  return out;
}

function normals(n: number, std: number, rand: () => number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (rand() + rand() + rand() - 1.5) * 2 * std; // sum of uniforms: near-normal, std ~ std
  return out;
}

/** Seeded weights: matrices ~N(0, 0.35), norm weights 1 +- 0.3, biases +- 0.3. */
export function randomWeights(c: HfModelConfig, seed: number): Map<string, Float32Array> {
  const rand = mulberry32(seed);
  const w = new Map<string, Float32Array>();
  for (const { name, shape } of weightShapes(c)) {
    const n = shape.reduce((a, b) => a * b, 1);
    if (name.endsWith('norm.weight'))
      w.set(
        name,
        normals(n, 0.3, rand).map((v) => 1 + v),
      );
    else w.set(name, normals(n, name.endsWith('.bias') ? 0.3 : 0.35, rand));
  }
  return w;
}

/** A TensorSource over in-memory arrays; `shapes` overrides a tensor's declared shape (bad-shape tests). */
export function memorySource(
  c: HfModelConfig,
  weights: ReadonlyMap<string, Float32Array>,
  shapes: Record<string, number[]> = {},
): TensorSource & { reads: string[] } {
  const declared = new Map(weightShapes(c).map((e) => [e.name, e.shape]));
  const reads: string[] = [];
  return {
    origin: 'memory://random',
    reads,
    names: () => [...weights.keys()],
    get(name: string): TensorEntry | undefined {
      const data = weights.get(name);
      if (!data) return undefined;
      return {
        name,
        dtype: 'F32',
        shape: shapes[name] ?? declared.get(name) ?? [data.length],
        file: 'memory://random/model.safetensors',
        read: () => {
          reads.push(name);
          return Float32Array.from(data);
        },
      };
    },
  };
}

/** Seeded LoRA pairs on q_proj and v_proj of every layer (non-zero B). */
export function randomLora(c: HfModelConfig, r: number, scale: number, seed: number): LoraPair[] {
  const rand = mulberry32(seed);
  const shapes = new Map(weightShapes(c).map((e) => [e.name, e.shape]));
  const pairs: LoraPair[] = [];
  for (let l = 0; l < c.numLayers; l++) {
    for (const m of ['self_attn.q_proj', 'self_attn.v_proj', 'mlp.down_proj']) {
      const target = `model.layers.${l}.${m}.weight`;
      const [out, inF] = shapes.get(target)!;
      pairs.push({ target, a: normals(r * inF, 0.3, rand), b: normals(out * r, 0.3, rand), r, inFeatures: inF, outFeatures: out, scale });
    }
  }
  return pairs;
}

/**
 * Float64 forward of one sequence (positions 0..n-1) -> logits [n][V], written from
 * transformers' modeling_qwen3/qwen2/llama with plain loops. RoPE: `default` type only
 * (inv_freq_i = theta^(-2i/hd)); the other types are covered by reference.ts on the fixtures.
 * `loraInputMask(target, t)`: multiplies the LoRA branch's input at position t (peft's lora_dropout
 * with a given mask; the base product reads x unchanged).
 */
export function reference64(
  c: HfModelConfig,
  w: ReadonlyMap<string, Float32Array>,
  ids: readonly number[],
  lora: readonly LoraPair[] = [],
  loraInputMask?: (target: string, t: number) => ArrayLike<number>,
): Float64Array[] {
  if (c.rope.type !== 'default') throw new Error('reference64: default RoPE only');
  const { hiddenSize: d, numHeads: H, numKvHeads: K, headDim: hd, rmsNormEps: eps } = c;
  const n = ids.length;
  const g = H / K;
  const W = (name: string) => {
    const v = w.get(name);
    if (!v) throw new Error(`reference64: no ${name}`);
    return v;
  };
  const loraOf = new Map(lora.map((p) => [p.target, p]));
  // y = x W^T (+ b) (+ scale B A (mask * x)), W [out, in]; t: the position (for the mask)
  const linear = (x: Float64Array, name: string, out: number, inF: number, bias?: string, t = -1): Float64Array => {
    const m = W(`${name}.weight`);
    const y = new Float64Array(out);
    for (let o = 0; o < out; o++) {
      let s = bias ? W(bias)[o] : 0;
      for (let i = 0; i < inF; i++) s += m[o * inF + i] * x[i];
      y[o] = s;
    }
    const p = loraOf.get(`${name}.weight`);
    if (p) {
      const m = loraInputMask?.(p.target, t);
      const ax = new Float64Array(p.r);
      for (let j = 0; j < p.r; j++) for (let i = 0; i < inF; i++) ax[j] += p.a[j * inF + i] * x[i] * (m ? m[i] : 1);
      for (let o = 0; o < out; o++) for (let j = 0; j < p.r; j++) y[o] += p.scale * p.b[o * p.r + j] * ax[j];
    }
    return y;
  };
  const rms = (x: Float64Array, name: string): Float64Array => {
    const gw = W(name);
    let ms = 0;
    for (const v of x) ms += v * v;
    const r = 1 / Math.sqrt(ms / x.length + eps);
    return x.map((v, i) => v * r * gw[i]);
  };
  const invFreq = Array.from({ length: hd / 2 }, (_, i) => Math.pow(c.rope.theta, (-2 * i) / hd));
  const rope = (x: Float64Array, off: number, pos: number) => {
    const half = hd / 2;
    const out = new Float64Array(hd);
    for (let j = 0; j < hd; j++) {
      const a = pos * invFreq[j % half];
      const rot = j < half ? -x[off + j + half] : x[off + j - half];
      out[j] = x[off + j] * Math.cos(a) + rot * Math.sin(a);
    }
    x.set(out, off);
  };
  const E = W('model.embed_tokens.weight');
  let xs = ids.map((id) => Float64Array.from(E.subarray(id * d, (id + 1) * d)));
  for (let l = 0; l < c.numLayers; l++) {
    const p = `model.layers.${l}.`;
    const qs: Float64Array[] = [];
    const ks: Float64Array[] = [];
    const vs: Float64Array[] = [];
    for (let t = 0; t < n; t++) {
      const h = rms(xs[t], `${p}input_layernorm.weight`);
      const b = (m: string) => (c.attentionBias ? `${p}self_attn.${m}.bias` : undefined);
      const q = linear(h, `${p}self_attn.q_proj`, H * hd, d, b('q_proj'), t);
      const k = linear(h, `${p}self_attn.k_proj`, K * hd, d, b('k_proj'), t);
      vs.push(linear(h, `${p}self_attn.v_proj`, K * hd, d, b('v_proj'), t));
      if (c.qkNorm) {
        for (let hh = 0; hh < H; hh++) q.set(rms(q.subarray(hh * hd, (hh + 1) * hd), `${p}self_attn.q_norm.weight`), hh * hd);
        for (let hh = 0; hh < K; hh++) k.set(rms(k.subarray(hh * hd, (hh + 1) * hd), `${p}self_attn.k_norm.weight`), hh * hd);
      }
      for (let hh = 0; hh < H; hh++) rope(q, hh * hd, t);
      for (let hh = 0; hh < K; hh++) rope(k, hh * hd, t);
      qs.push(q);
      ks.push(k);
    }
    xs = xs.map((x, t) => {
      const y = new Float64Array(H * hd);
      for (let hh = 0; hh < H; hh++) {
        const kv = Math.floor(hh / g);
        const s = new Float64Array(t + 1);
        let max = -Infinity;
        for (let u = 0; u <= t; u++) {
          let dot = 0;
          for (let j = 0; j < hd; j++) dot += qs[t][hh * hd + j] * ks[u][kv * hd + j];
          s[u] = dot / Math.sqrt(hd);
          max = Math.max(max, s[u]);
        }
        let z = 0;
        for (let u = 0; u <= t; u++) z += s[u] = Math.exp(s[u] - max);
        for (let u = 0; u <= t; u++) for (let j = 0; j < hd; j++) y[hh * hd + j] += (s[u] / z) * vs[u][kv * hd + j];
      }
      const o = linear(y, `${p}self_attn.o_proj`, d, H * hd, undefined, t);
      const x1 = x.map((v, i) => v + o[i]);
      const h2 = rms(x1, `${p}post_attention_layernorm.weight`);
      const gate = linear(h2, `${p}mlp.gate_proj`, c.intermediateSize, d, undefined, t);
      const up = linear(h2, `${p}mlp.up_proj`, c.intermediateSize, d, undefined, t);
      const act = gate.map((gv, i) => (gv / (1 + Math.exp(-gv))) * up[i]);
      const down = linear(act, `${p}mlp.down_proj`, d, c.intermediateSize, undefined, t);
      return x1.map((v, i) => v + down[i]);
    });
  }
  const head = c.tieWordEmbeddings ? E : W('lm_head.weight');
  return xs.map((x) => {
    const h = rms(x, 'model.norm.weight');
    const out = new Float64Array(c.vocabSize);
    for (let v = 0; v < c.vocabSize; v++) for (let i = 0; i < d; i++) out[v] += head[v * d + i] * h[i];
    return out;
  });
}

/** log-softmax of a float64 row. */
export function logSoftmax64(x: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < x.length; i++) max = Math.max(max, x[i]);
  let z = 0;
  for (let i = 0; i < x.length; i++) z += Math.exp(x[i] - max);
  const lz = max + Math.log(z);
  return Float64Array.from(x, (v) => v - lz);
}

/** Seeded ids in [lo, hi). */
export function randomIds(n: number, seed: number, lo = 1, hi = 40): number[] {
  const r = mulberry32(seed);
  return Array.from({ length: n }, () => lo + Math.floor(r() * (hi - lo)));
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

// ---- The committed fixtures made with transformers (test/fixtures/hf, by hf-loader's
// scripts/fixtures/make_hf_fixtures.py): real on-disk folders, transformers' own logits.

export const FIXTURE_ROOT = path.join(__dirname, '../../../fixtures/hf');

export interface FixtureExpected {
  tokenizer_size: number;
  vocab_size: number;
  sequences: { ids: number[]; logits: number[][]; logprobs: number[] }[];
  greedy: { prompt: number[]; ids: number[] };
}

/** The fixture cases: base folders, and adapters with the base they were made on. */
export const FIXTURES = [
  { name: 'qwen3-tiny (BF16, tied, head_dim 16 != 32/4, q/k norms, GQA 4:2)', dir: 'qwen3-tiny' },
  { name: 'qwen2-tiny (F32, q/k/v biases, untied, 1 KV head, yarn x4)', dir: 'qwen2-tiny' },
  { name: 'llama-tiny-sharded (F16, 4 shards + index, llama3 RoPE, untied)', dir: 'llama-tiny-sharded' },
  { name: 'qwen3-tiny-lora (r4, alpha 8, q/v/o/down)', dir: 'qwen3-tiny-lora', base: 'qwen3-tiny' },
  { name: 'qwen3-tiny-rslora (rslora, q/k/gate/up)', dir: 'qwen3-tiny-rslora', base: 'qwen3-tiny' },
] as const;

/** Loads a fixture through config.ts, safetensorsFile.ts and loraFiles.ts; the caller disposes `model`. */
export function loadFixture(f: { dir: string; base?: string }, options: { trainable?: boolean } = {}) {
  const baseDir = path.join(FIXTURE_ROOT, f.base ?? f.dir);
  const expected = JSON.parse(fs.readFileSync(path.join(FIXTURE_ROOT, f.dir, 'expected.json'), 'utf8')) as FixtureExpected;
  const config = readHfConfig(baseDir);
  const lora = f.base ? readLoraAdapter(path.join(FIXTURE_ROOT, f.dir), config).pairs : undefined;
  const source = openTensorSource(baseDir);
  try {
    const model = HfModel.fromSource(config, source, { lora, trainable: options.trainable, validVocab: expected.tokenizer_size });
    // Every tensor read now, so the source is closed before the tests run.
    const cache = new Map(source.names().map((n) => [n, source.get(n)!.read()]));
    const weight = (name: string) => {
      const w = cache.get(name);
      if (!w) throw new Error(`fixture ${f.dir}: no tensor ${name}`);
      return w;
    };
    return { config, model, expected, lora, weight };
  } finally {
    source.close();
  }
}
