/**
 * A decoder-only, pre-norm causal transformer (GPT-2 layout with RMSNorm, no biases, learned
 * positional embeddings, GELU MLP), parameters as tf.Variables with a deterministic seeded init.
 *
 * Three entry points share one block implementation:
 * - `forward(ids)`: training/scoring path, ids [B, T] -> logits [B, T, V]; positions 0..T-1,
 *   causal mask, one-hot embeddings so that every parameter gets a gradient on wasm.
 * - `prefill(ids, padCounts)`: left-padded prompts with per-row positions (the first real token
 *   of every row is position 0; pad keys masked out); returns the last column's logits and the
 *   KV cache.
 * - `decodeStep(ids, positions, cache, keyBias)`: one new token per row against the cache.
 *
 * Speed on wasm (TOOLCHAIN.md): all weight products are plain 2-D matmuls on [B*T, d]
 * activations (layers.ts). Training attention runs its per-(batch, head) products as depthwise
 * convolutions (layers.ts `selfAttention`); prefill and decoding use batched 3-D matMuls.
 * The training path runs each block as five custom-gradient ops (rmsNorm, attention with its
 * q/k/v projections, the output projection, rmsNorm, the MLP: layers.ts), which keep only what
 * their backward needs; tfjs's per-kernel autodiff kept a copy of every intermediate.
 * Not here: sampling (sampler.ts), log-probs (logprobs.ts), saving (checkpoint.ts).
 * Tests: test/core/models/transformer.test.ts (shapes, KV cache vs full forward, init determinism).
 */
import * as tf from '@tensorflow/tfjs';
import { mlpWidth, parameterShapes, type ModelConfig } from './config';
import { attendHeads, embed, linear, mergeHeads, mlp, mlpValue, rmsNorm, rmsNormValue, selfAttention, toHeads } from './layers';
import { mixSeed, normalArray } from './random';

/** Additive attention bias for masked keys (finite, so fully masked rows give no NaN). */
export const MASKED = -1e9;

/**
 * Per-layer attention cache. Keys are stored untransposed, [B*H, t, hd], like the values (the
 * field keeps its old name `kT` for compatibility; it used to hold [B*H, hd, t]): appending a
 * step is then B*H contiguous copies per layer instead of B*H*hd strided ones, which made the
 * cache append the largest cost of a decoding step. q k^T uses a transpose flag, the same speed
 * as a flagless batched product on wasm (both take the slow 3-D path).
 */
export type KVCache = {
  kT: tf.Tensor3D[]; // per layer keys [B*H, t, hd] (untransposed, despite the name)
  v: tf.Tensor3D[]; // per layer [B*H, t, hd]
};

export type StepOutput = {
  logits: tf.Tensor2D; // [B, V] for the last position of each row
  cache: KVCache;
};

let nextModelId = 0;

export class Transformer {
  readonly config: ModelConfig;
  /** Parameters by checkpoint name, in `parameterShapes` order. */
  readonly params: ReadonlyMap<string, tf.Variable>;
  private readonly headDim: number;

  constructor(config: ModelConfig) {
    this.config = config;
    this.headDim = config.dModel / config.nHeads;
    const id = nextModelId++;
    const residualScale = 1 / Math.sqrt(2 * config.nLayers); // GPT-2: residual projections scaled down
    const params = new Map<string, tf.Variable>();
    parameterShapes(config).forEach(({ name, shape }, i) => {
      const size = shape.reduce((a, b) => a * b, 1);
      const isGain = name.endsWith('norm1') || name.endsWith('norm2') || name === 'normf';
      const std = config.initStd * (name.endsWith('.wo') || name.endsWith('.wproj') ? residualScale : 1);
      const data = isGain ? new Float32Array(size).fill(1) : normalArray(size, std, mixSeed(config.seed, i));
      params.set(
        name,
        tf.tidy(() => tf.variable(tf.tensor(data, shape, 'float32'), true, `model${id}/${name}`)),
      );
    });
    this.params = params;
  }

  /** Trainable variables, in checkpoint order. */
  variables(): tf.Variable[] {
    return [...this.params.values()];
  }

  private p<R extends tf.Rank>(name: string): tf.Tensor<R> {
    const v = this.params.get(name);
    if (!v) throw new Error(`model: no parameter "${name}"`);
    return v as unknown as tf.Tensor<R>;
  }

  /** Overwrites every parameter from plain arrays (checkpoint load); shapes must already be checked. */
  assign(values: ReadonlyMap<string, Float32Array>): void {
    for (const [name, v] of this.params) {
      const data = values.get(name);
      if (!data) throw new Error(`model: no value for parameter "${name}"`);
      tf.tidy(() => v.assign(tf.tensor(data, v.shape, 'float32')));
    }
  }

  /** Copies the weights of another model of the same config. */
  copyFrom(other: Transformer): void {
    for (const [name, v] of this.params) tf.tidy(() => v.assign(other.p(name)));
  }

  dispose(): void {
    for (const v of this.params.values()) v.dispose();
  }

  /** Training path: ids [B, T] -> logits [B, T, V]. Positions 0..T-1, causal mask. */
  forward(ids: tf.Tensor2D): tf.Tensor3D {
    const [B, T] = ids.shape;
    if (T > this.config.contextLength) throw new Error(`model: sequence length ${T} exceeds contextLength ${this.config.contextLength}`);
    return tf.tidy(() => {
      const d = this.config.dModel;
      const tok = embed(tf.reshape(ids, [B * T]) as tf.Tensor1D, this.p('wte')); // [B*T, d]
      const pos = tf.slice(this.p<tf.Rank.R2>('wpe'), [0, 0], [T, d]); // [T, d]
      let x = tf.reshape(tf.add(tf.reshape(tok, [B, T, d]), pos), [B * T, d]) as tf.Tensor2D; // [B*T, d]
      const bias = causalBias(T); // [1, 1, T, T]
      const H = this.config.nHeads;
      for (let l = 0; l < this.config.nLayers; l++) x = this.block(l, x, (h) => selfAttention(h, ...this.wqkv(l), bias, B, T, H), true);
      return tf.reshape(this.head(x, true), [B, T, this.config.vocabSize]) as tf.Tensor3D; // [B, T, V]
    });
  }

  /**
   * Inference prefill of left-padded prompts: row r has padCounts[r] pad tokens first; its token
   * at column c has position c - padCounts[r], and pad columns are masked as keys. Returns the
   * logits of the last column (the next-token distribution of every row) and the cache.
   */
  prefill(ids: tf.Tensor2D, padCounts: readonly number[]): StepOutput {
    const [B, T] = ids.shape;
    if (T > this.config.contextLength) throw new Error(`model: prompt length ${T} exceeds contextLength ${this.config.contextLength}`);
    return tf.tidy(() => {
      const positions = new Int32Array(B * T);
      const bias = new Float32Array(B * T * T); // [B, 1, T, T]: causal and pad keys
      for (let r = 0; r < B; r++) {
        for (let c = 0; c < T; c++) {
          positions[r * T + c] = Math.max(0, c - padCounts[r]);
          for (let k = 0; k < T; k++) bias[(r * T + c) * T + k] = k > c || k < padCounts[r] ? MASKED : 0;
        }
      }
      const biasT = tf.tensor4d(bias, [B, 1, T, T]);
      let x = this.embedInference(tf.reshape(ids, [B * T]) as tf.Tensor1D, tf.tensor1d(positions, 'int32')); // [B*T, d]
      const kT: tf.Tensor3D[] = [];
      const v: tf.Tensor3D[] = [];
      const scale = 1 / Math.sqrt(this.headDim);
      for (let l = 0; l < this.config.nLayers; l++) {
        x = this.block(
          l,
          x,
          (h) => {
            const H = this.config.nHeads;
            const [wq, wk, wv] = this.wqkv(l);
            const q = toHeads(tf.matMul(h, wq), B, T, H); // [B*H, T, hd]
            const k = toHeads(tf.matMul(h, wk), B, T, H); // [B*H, T, hd]
            const vh = toHeads(tf.matMul(h, wv), B, T, H); // [B*H, T, hd]
            kT.push(k); // [B*H, T, hd]
            v.push(vh);
            return mergeHeads(attendHeads(tf.mul(q, scale), k, vh, biasT, B).y, B, T); // [B*T, d]
          },
          false,
        );
      }
      const d = this.config.dModel;
      // A slice: cheaper than wasm's Gather.
      const last = tf.reshape(tf.slice(tf.reshape(x, [B, T, d]), [0, T - 1, 0], [B, 1, d]), [B, d]) as tf.Tensor2D; // [B, d]
      return { logits: this.head(last, false), cache: { kT, v } };
    });
  }

  /**
   * One decoding step: ids[r] at position positions[r] for each row, attending to the cache plus
   * itself. keyBias [B, t+1] is 0 for visible keys and MASKED for pad keys. The returned cache is
   * new; the caller disposes the old one.
   */
  decodeStep(ids: readonly number[], positions: readonly number[], cache: KVCache, keyBias: Float32Array): StepOutput {
    const B = ids.length;
    const { nHeads: H } = this.config;
    const hd = this.headDim;
    const t = cache.kT[0].shape[1] + 1;
    if (t > this.config.contextLength) throw new Error(`model: decoding position ${t - 1} exceeds contextLength ${this.config.contextLength}`);
    return tf.tidy(() => {
      const bias = tf.tensor4d(keyBias, [B, 1, 1, t]);
      let x = this.embedInference(tf.tensor1d(ids as number[], 'int32'), tf.tensor1d(positions as number[], 'int32')); // [B, d]
      const kT: tf.Tensor3D[] = [];
      const v: tf.Tensor3D[] = [];
      for (let l = 0; l < this.config.nLayers; l++) {
        x = this.block(
          l,
          x,
          (h) => {
            const q = tf.matMul(h, this.p<tf.Rank.R2>(`h.${l}.attn.wq`)); // [B, d]
            const k = tf.matMul(h, this.p<tf.Rank.R2>(`h.${l}.attn.wk`)); // [B, d]
            const vv = tf.matMul(h, this.p<tf.Rank.R2>(`h.${l}.attn.wv`)); // [B, d]
            const q3 = tf.reshape(tf.mul(q, 1 / Math.sqrt(hd)), [B * H, 1, hd]); // [B*H, 1, hd], scaled
            const kNew = tf.reshape(k, [B * H, 1, hd]); // [B*H, 1, hd]
            const vNew = tf.reshape(vv, [B * H, 1, hd]); // [B*H, 1, hd]
            const kAll = tf.concat([cache.kT[l], kNew], 1) as tf.Tensor3D; // [B*H, t, hd]
            const vAll = tf.concat([cache.v[l], vNew], 1) as tf.Tensor3D; // [B*H, t, hd]
            kT.push(kAll);
            v.push(vAll);
            // One query per row: a single small 3-D matmul beats B*H tiny 2-D ones here.
            const scores = tf.matMul(q3, kAll, false, true); // [B*H, 1, t]
            const att = tf.softmax(tf.add(tf.reshape(scores, [B, H, 1, t]), bias), -1); // [B, H, 1, t]
            const y = tf.matMul(tf.reshape(att, [B * H, 1, t]) as tf.Tensor3D, vAll); // [B*H, 1, hd]
            return tf.reshape(y, [B, this.config.dModel]) as tf.Tensor2D; // [B, d]
          },
          false,
        );
      }
      return { logits: this.head(x, false), cache: { kT, v } };
    });
  }

  /**
   * Token + position embeddings for inference, as one-hot products (exact: one 1 and zeros per
   * row): wasm's Gather kernel is slow (~0.3 ms for 32 rows of 128, ~8 ms for 1024; measured),
   * a [N, V] @ [V, d] product is far cheaper.
   */
  private embedInference(ids: tf.Tensor1D, positions: tf.Tensor1D): tf.Tensor2D {
    const tok = tf.matMul(tf.oneHot(ids, this.config.vocabSize).toFloat(), this.p<tf.Rank.R2>('wte')); // [N, d]
    const pos = tf.matMul(tf.oneHot(positions, this.config.contextLength).toFloat(), this.p<tf.Rank.R2>('wpe')); // [N, d]
    return tf.add(tok, pos); // [N, d]
  }

  /** Final norm and output head: [N, d] -> [N, V]. `train`: custom-gradient ops, else plain forward kernels. */
  private head(x: tf.Tensor2D, train: boolean): tf.Tensor2D {
    const h = (train ? rmsNorm : rmsNormValue)(x, this.p('normf'), this.config.normEps);
    const w = this.config.tiedEmbeddings ? tf.transpose(this.p<tf.Rank.R2>('wte')) : this.p<tf.Rank.R2>('head'); // [d, V]
    return train ? linear(h, w) : tf.matMul(h, w); // [N, V]
  }

  /** The q, k, v projections [d, d] of layer l. */
  private wqkv(l: number): [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D] {
    return [this.p(`h.${l}.attn.wq`), this.p(`h.${l}.attn.wk`), this.p(`h.${l}.attn.wv`)];
  }

  /**
   * One pre-norm block on [B*T, d] rows; `attend` maps the normed rows h [B*T, d] to the heads'
   * output [B*T, d] (before wo): training uses layers.ts `selfAttention` (one custom op,
   * projections included), prefill and decoding plain forward code that also fills the cache.
   * `train` false (prefill, decoding: never differentiated) uses plain kernels instead of the
   * custom-gradient wrappers, whose scopes are a visible share of a decoding step.
   */
  private block(l: number, x: tf.Tensor2D, attend: (h: tf.Tensor2D) => tf.Tensor2D, train: boolean): tf.Tensor2D {
    const eps = this.config.normEps;
    const norm = train ? rmsNorm : rmsNormValue;
    const h = norm(x, this.p(`h.${l}.norm1`), eps); // [B*T, d]
    const wo = this.p<tf.Rank.R2>(`h.${l}.attn.wo`);
    x = tf.add(x, train ? linear(attend(h), wo) : tf.matMul(attend(h), wo)); // [B*T, d]
    const h2 = norm(x, this.p(`h.${l}.norm2`), eps); // [B*T, d]
    return tf.add(x, (train ? mlp : mlpValue)(h2, this.p(`h.${l}.mlp.wfc`), this.p(`h.${l}.mlp.wproj`))); // [B*T, d]
  }
}

/** 0 on and below the diagonal, MASKED above: [1, 1, T, T]. */
function causalBias(T: number): tf.Tensor4D {
  const b = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) b[i * T + j] = MASKED;
  return tf.tensor4d(b, [1, 1, T, T]);
}

/** Plain copies of every parameter (tests, checkpoints); a read-back, call outside tf.tidy. */
export function readParameters(model: Transformer): Map<string, Float32Array> {
  const out = new Map<string, Float32Array>();
  for (const [name, v] of model.params) out.set(name, v.dataSync() as Float32Array);
  return out;
}

export { mlpWidth };
