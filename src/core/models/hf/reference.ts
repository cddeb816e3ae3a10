/**
 * The slow, obvious float64 forward of the Hugging Face family: plain loops, no tfjs, one
 * sequence, full causal attention recomputed from scratch. It is the reference the tfjs fast path
 * (model.ts, sampler.ts, logprobs.ts) is tested against, and it is itself tested against
 * transformers' float32 logits on the committed fixtures (test/fixtures/hf/).
 *
 * The computation, as transformers' modeling_qwen3.py / modeling_qwen2.py / modeling_llama.py:
 *   h = embed_tokens[ids]
 *   per layer: x = rms(h) * input_layernorm
 *              q, k, v = x Wq^T (+bq), x Wk^T (+bk), x Wv^T (+bv)     // Qwen2: biases
 *              Qwen3: q, k = rms(q_head) * q_norm, rms(k_head) * k_norm  (per head, before RoPE)
 *              q, k = rotate-half RoPE at positions 0..T-1 (rope.ts)
 *              head h attends with KV head floor(h / (nH / nKV)), scores q.k / sqrt(head_dim), causal
 *              h += o_proj(heads) (+bo where the architecture has it)
 *              x = rms(h) * post_attention_layernorm; h += down(silu(gate x) * up x)
 *   logits = rms(h) * norm, times lm_head^T (embed_tokens^T when tied)
 * RMSNorm: x * 1 / sqrt(mean(x^2) + eps) * w (no 1 + w offset). LoRA: every adapted linear adds
 * scale * B (A x).
 *
 * Tests: test/core/models/hf/reference.test.ts (against transformers' logits, tolerance 1e-4,
 * with checks that dropping a bias, a q/k norm or the adapter breaks the agreement).
 */
import { applyRope, ropeInvFreq } from './rope';
import type { HfModelConfig, LoraPair } from './types';
import { attentionBiases } from './weights';

/** Returns a checkpoint tensor (float32, row-major) by its transformers name. */
export type WeightLookup = (name: string) => Float32Array;

/** x * rsqrt(mean(x^2) + eps) * w over `x[offset .. offset + n)`, into a new array. */
function rmsNorm(x: Float64Array, offset: number, n: number, w: Float32Array, eps: number): Float64Array {
  let ss = 0;
  for (let i = 0; i < n; i++) ss += x[offset + i] * x[offset + i];
  const inv = 1 / Math.sqrt(ss / n + eps);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = x[offset + i] * inv * w[i];
  return out;
}

/** y = W x (+ b) for W [out, in] row-major. */
function matVec(w: Float32Array, x: Float64Array, outF: number, inF: number, b?: Float32Array): Float64Array {
  if (w.length !== outF * inF) throw new Error(`reference: weight has ${w.length} values, expected [${outF}, ${inF}]`);
  const y = new Float64Array(outF);
  for (let o = 0; o < outF; o++) {
    let s = b ? b[o] : 0;
    const row = o * inF;
    for (let i = 0; i < inF; i++) s += w[row + i] * x[i];
    y[o] = s;
  }
  return y;
}

const silu = (z: number): number => z / (1 + Math.exp(-z));

/**
 * Logits [T][vocabSize] of `ids` (positions 0..T-1), float64. `weight` is called once per tensor
 * name per position (wrap it in a cache for speed); `lora` pairs adapt the linears they target.
 */
export function referenceLogits(config: HfModelConfig, weight: WeightLookup, ids: number[], lora?: LoraPair[]): Float64Array[] {
  const { hiddenSize: d, numHeads: H, numKvHeads: K, headDim: hd, intermediateSize: ff, vocabSize: V, rmsNormEps: eps } = config;
  const cache = new Map<string, Float32Array>();
  const w = (name: string): Float32Array => {
    let t = cache.get(name);
    if (!t) cache.set(name, (t = weight(name)));
    return t;
  };
  const adapters = new Map((lora ?? []).map((p) => [p.target, p]));
  const biases = attentionBiases(config);
  const applied = new Set<string>();
  /** A linear by module path (`model.layers.0.self_attn.q_proj`), with its bias and LoRA pair if any. */
  const linear = (module: string, x: Float64Array, outF: number, inF: number, hasBias: boolean): Float64Array => {
    const y = matVec(w(`${module}.weight`), x, outF, inF, hasBias ? w(`${module}.bias`) : undefined);
    const pair = adapters.get(`${module}.weight`);
    if (pair) {
      applied.add(pair.target);
      if (pair.inFeatures !== inF || pair.outFeatures !== outF)
        throw new Error(`reference: LoRA pair for ${pair.target} is [${pair.outFeatures}, ${pair.inFeatures}], the weight [${outF}, ${inF}]`);
      const ax = matVec(pair.a, x, pair.r, inF); // [r]
      const bax = matVec(pair.b, ax, outF, pair.r); // [out]
      for (let o = 0; o < outF; o++) y[o] += pair.scale * bax[o];
    }
    return y;
  };
  const rope = ropeInvFreq(config.rope, hd);
  const T = ids.length;
  const embed = w('model.embed_tokens.weight');
  // Residual stream, one row per position. [T][d]
  const h: Float64Array[] = ids.map((id, t) => {
    if (!Number.isInteger(id) || id < 0 || id >= V) throw new Error(`reference: token id ${id} at position ${t} is outside the vocabulary (${V} rows)`);
    return Float64Array.from(embed.subarray(id * d, (id + 1) * d));
  });
  const group = H / K; // query heads per KV head
  const scale = 1 / Math.sqrt(hd);
  for (let layer = 0; layer < config.numLayers; layer++) {
    const p = `model.layers.${layer}.`;
    const qs: Float64Array[] = [];
    const ks: Float64Array[] = [];
    const vs: Float64Array[] = [];
    for (let t = 0; t < T; t++) {
      const x = rmsNorm(h[t], 0, d, w(`${p}input_layernorm.weight`), eps);
      let q = linear(`${p}self_attn.q_proj`, x, H * hd, d, biases.qkv); // [H * hd]
      let k = linear(`${p}self_attn.k_proj`, x, K * hd, d, biases.qkv); // [K * hd]
      const v = linear(`${p}self_attn.v_proj`, x, K * hd, d, biases.qkv); // [K * hd]
      if (config.qkNorm) {
        const qn = new Float64Array(H * hd);
        for (let head = 0; head < H; head++) qn.set(rmsNorm(q, head * hd, hd, w(`${p}self_attn.q_norm.weight`), eps), head * hd);
        const kn = new Float64Array(K * hd);
        for (let head = 0; head < K; head++) kn.set(rmsNorm(k, head * hd, hd, w(`${p}self_attn.k_norm.weight`), eps), head * hd);
        q = qn;
        k = kn;
      }
      for (let head = 0; head < H; head++) applyRope(q, head * hd, t, rope);
      for (let head = 0; head < K; head++) applyRope(k, head * hd, t, rope);
      qs.push(q);
      ks.push(k);
      vs.push(v);
    }
    for (let t = 0; t < T; t++) {
      const heads = new Float64Array(H * hd); // [H * hd]
      for (let head = 0; head < H; head++) {
        const kvHead = Math.floor(head / group);
        const scores = new Float64Array(t + 1);
        let max = -Infinity;
        for (let s = 0; s <= t; s++) {
          let dot = 0;
          for (let i = 0; i < hd; i++) dot += qs[t][head * hd + i] * ks[s][kvHead * hd + i];
          scores[s] = dot * scale;
          max = Math.max(max, scores[s]);
        }
        let z = 0;
        for (let s = 0; s <= t; s++) z += scores[s] = Math.exp(scores[s] - max);
        for (let s = 0; s <= t; s++) {
          const a = scores[s] / z;
          for (let i = 0; i < hd; i++) heads[head * hd + i] += a * vs[s][kvHead * hd + i];
        }
      }
      const o = linear(`${p}self_attn.o_proj`, heads, d, H * hd, biases.o);
      for (let i = 0; i < d; i++) h[t][i] += o[i];
      const x = rmsNorm(h[t], 0, d, w(`${p}post_attention_layernorm.weight`), eps);
      const gate = linear(`${p}mlp.gate_proj`, x, ff, d, false);
      const up = linear(`${p}mlp.up_proj`, x, ff, d, false);
      const act = gate.map((g, i) => silu(g) * up[i]);
      const down = linear(`${p}mlp.down_proj`, act, d, ff, false);
      for (let i = 0; i < d; i++) h[t][i] += down[i];
    }
  }
  // A pair no linear applied aims at nothing (a misspelt target, or a layer the model lacks).
  const stray = T === 0 ? [] : [...adapters.keys()].filter((target) => !applied.has(target));
  if (stray.length > 0) throw new Error(`reference: LoRA pairs target weights the model does not have: ${stray.join(', ')}`);
  const head = w(config.tieWordEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight');
  return h.map((row) => matVec(head, rmsNorm(row, 0, d, w('model.norm.weight'), eps), V, d));
}

/** log softmax(logits)[target] over the first `validVocab` entries (float64). */
function logSoftmaxAt(logits: Float64Array, target: number, validVocab: number): number {
  let max = -Infinity;
  for (let i = 0; i < validVocab; i++) max = Math.max(max, logits[i]);
  let z = 0;
  for (let i = 0; i < validVocab; i++) z += Math.exp(logits[i] - max);
  return logits[target] - max - Math.log(z);
}

/**
 * Teacher-forced log-probabilities: n - 1 values, entry t = log p(ids[t+1] | ids[0..t]) in nats.
 * `validVocab` (default: every row) restricts the softmax to ids below it, as the sampler and the
 * scorer do for padded vocabulary rows.
 */
export function referenceLogprobs(config: HfModelConfig, weight: WeightLookup, ids: number[], lora?: LoraPair[], validVocab = config.vocabSize): number[] {
  if (ids.length < 2) return [];
  const logits = referenceLogits(config, weight, ids, lora);
  return ids.slice(1).map((next, t) => {
    if (next >= validVocab) throw new Error(`reference: token id ${next} at position ${t + 1} is a padded vocabulary row (>= ${validVocab})`);
    return logSoftmaxAt(logits[t], next, validVocab);
  });
}
