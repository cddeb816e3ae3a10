/**
 * Over 400 lines (~560): loading and the training forward share the class's private weights and tables (decoding: ./decode.ts).
 *
 * The tfjs fast path of the Hugging Face model family: Qwen3, Qwen2/2.5 and Llama 3.x decoders as
 * transformers' modeling_qwen3.py / modeling_qwen2.py / modeling_llama.py define them. Per layer:
 * h += o_proj(attn(rms(h))); h += down(silu(gate(x)) * up(x)) with x = rms(h). RMSNorm in float32
 * with the config's eps and a plain weight (no 1 + w); rotate-half RoPE from rope.ts (yarn's
 * attention factor on cos and sin); grouped-query attention (query head h reads KV head
 * floor(h / (nH / nKV))); Qwen2's q/k/v biases; Qwen3's per-head q/k RMSNorm before RoPE and its
 * head_dim that differs from hidden / heads; SwiGLU MLP; tied or untied output head. LoRA as peft
 * defines it: y = x W + scale * (x A^T) B^T on the adapted linears.
 *
 * Adapters: any number of named LoRA adapters over ONE frozen base in memory (per-role policies
 * of the multi-agent regimes; the shared policy is one adapter). Every entry point takes the
 * adapter to run: a name, `null` for the base alone (the KL reference: adapters off, no second
 * copy of the model), or nothing for the adapter named 'default' when there is one (the `lora`
 * option of `fromSource`), else the base; ./adapters.ts keeps them. `addAdapter` initialises as peft's
 * LoraLayer.reset_lora_parameters (init_lora_weights=True): A by torch's
 * kaiming_uniform_(a=sqrt(5)) on the [r, in] weight, i.e. fan_in = in, gain = sqrt(2 / (1 + a^2))
 * = sqrt(1/3), bound = gain * sqrt(3 / fan_in) = 1 / sqrt(in), A ~ U(-1/sqrt(in), 1/sqrt(in));
 * B = 0, so step 0 equals the base exactly. Seeded: one mulberry32 stream per (seed, layer,
 * module) (../random.ts), not torch's generator, so values differ from peft's for a seed, the law
 * is the same. LoRA dropout (p > 0) applies to an adapted linear's input before A, only in a
 * `hidden(..., dropout)` call (the update's gradient pass; ./loraDropout.ts draws the masks, and
 * redraws the same ones when a recomputed layer runs again in the backward).
 *
 * Memory of training (`recompute`): without it the tape keeps what each custom op saves for its
 * backward, every layer at once (~7x the minimal saved-for-backward estimate, memory.ts). With
 * `recompute: true` each decoder layer is one custom-gradient op that saves only its input rows
 * (and the batch's RoPE tables and key bias) and, in its backward, re-runs the layer's forward
 * under its own tape and differentiates it (one extra forward per layer: ~1.5x a LoRA step's time in
 * bench/lora.bench.ts; the peak 0.35x in bench/hf.bench.ts).
 *
 * Weights are loaded tensor by tensor (`fromSource`: read one, create its variable, drop the
 * array; nothing half-loaded on an error) and stored in the layout of plain 2-D products: every
 * linear [out, in] is transposed once to [in, out], the head is [d, V], and a tied model keeps
 * one [d, V] table that the embedding lookup gathers columns from.
 *
 * Entry points:
 * - `forward(ids, layout)` / `hidden` + `logitsOf`: training and scoring, ids [B, T] with explicit
 *   per-token positions and key mask (left padding), differentiable (custom-gradient ops from
 *   ../layers.ts and ./layers.ts; frozen weights get no weight gradient and no saved copies);
 * - `prefill(ids, padCounts)`: left-padded prompts, positions from 0 at each row's first real
 *   token, pad keys masked; last-column logits and the KV cache;
 * - `decodeStep(ids, positions, cache, keyBias)`: one token per row against the cache, run by
 *   ./decode.ts (an inference-only form of `block` with fewer kernels; its header has the figures).
 * Speed on wasm (bench/hf.bench.ts, a 5.3M-parameter Qwen3 shape, d256 x 4 layers, vocabulary
 * 8192, a loaded 2-core machine, CPU time): KV decoding of 128 tokens beats re-running the
 * forward every step by ~20x for 8 rows and ~8x for one (a step is ~216 kernels and one read of
 * the weights whatever the rows, while the recompute grows with them: batch rollouts into each
 * step); teacher-forced scoring of 4 x 128 tokens runs at ~0.5 of a plain matmul's FLOP rate.
 * The linears stay separate products (and `params` keeps transformers' names): fused q/k/v and
 * gate/up products need split copies and copies of the weights for a few percent (./decode.ts).
 * Not here: sampling (sampler.ts), teacher-forced log-probs (logprobs.ts), reading folders
 * (load.ts, safetensorsFile.ts), the float64 reference (reference.ts), the decoding step
 * (decode.ts).
 * Tests: test/core/models/hf/model.test.ts (against the float64 reference and transformers'
 * own logits on the fixtures), leaks.test.ts (leaks, failed loads), adapters.test.ts (named
 * adapters), recompute.test.ts (recomputation and the lean head ops against the plain paths).
 */
import * as tf from '@tensorflow/tfjs';
import { embed, linear, rmsNorm, rmsNormValue, permute } from '../layers';
import { ropeInvFreq, type RopeFrequencies } from './rope';
import { checkWeights, expectedWeights } from './weights';
import { HfDecoder, KV_CHUNK, type HfKvCache, type HfStepOutput } from './decode';
import {
  MASKED,
  applyRope,
  gatherColumns,
  headEntropy,
  headLogprob,
  hfTrainingKernels,
  withOwnTape,
  oneHotColumns,
  ropeTables,
  rotateHalfMatrix,
  transpose2d,
} from './layers';
import { withLoraDropout, type LoraDropout } from './loraDropout';
import { defaultTapeBudgetBytes, tapeProfileOf, type TapeProfileName } from './memory';
import { DEFAULT_ADAPTER, HfAdapters, NO_ADAPTER, type Adapter, type HfAdapterChoice, type HfAdapterConfig, type Lora } from './adapters';
import type { HfModelConfig, LoraPair, TensorSource } from './types';

export { MASKED, KV_CHUNK, DEFAULT_ADAPTER, type HfKvCache, type HfStepOutput, type HfAdapterChoice, type HfAdapterConfig };

/** Options of `HfModel.fromSource`. */
export interface HfModelOptions {
  /** peft LoRA pairs applied on top of the base (readLoraAdapter's `pairs`): the adapter named 'default'. */
  lora?: readonly LoraPair[];
  /**
   * Which variables are trainable. true: with `lora`, the LoRA factors only (the base stays
   * frozen); without, every base weight (full fine-tuning; no adapters may be added then).
   * 'lora': the base frozen, every adapter (loaded or added later) trainable. false (default):
   * inference, every variable frozen (adapters included).
   */
  trainable?: boolean | 'lora';
  /** Number of real tokens (the tokenizer's size); the sampler never picks a head row beyond it. Default vocabSize. */
  validVocab?: number;
  /** Per-layer activation recomputation in training (see the header). Default false; `model.recompute` may change it later. */
  recompute?: boolean;
  /**
   * Tape bytes a gradient pass may keep before it runs in row blocks (./logprobs.ts header); 0: never
   * in blocks. Default: the backend's (memory.ts `TAPE_PROFILES`).
   */
  tapeBudgetBytes?: number;
}

/** Where each token of a [B, T] batch sits: its RoPE position and whether it is a real key. */
export interface HfBatchLayout {
  positions: ArrayLike<number>; // [B*T]
  keyMask: ArrayLike<number>; // [B*T]: 1 real token, 0 padding (never attended to)
}

/** Layout of left-padded rows: row r has padCounts[r] pads first; its first real token has position 0. */
export function leftPadLayout(padCounts: readonly number[], T: number): HfBatchLayout {
  const B = padCounts.length;
  const positions = new Int32Array(B * T);
  const keyMask = new Uint8Array(B * T);
  for (let r = 0; r < B; r++) {
    for (let c = 0; c < T; c++) {
      positions[r * T + c] = Math.max(0, c - padCounts[r]);
      keyMask[r * T + c] = c >= padCounts[r] ? 1 : 0;
    }
  }
  return { positions, keyMask };
}

/** Pads before each row's first real token (a left-padded layout's pad counts). */
function leadingPads(keyMask: ArrayLike<number>, B: number, T: number): number[] {
  return Array.from({ length: B }, (_, r) => {
    let c = 0;
    while (c < T && !keyMask[r * T + c]) c++;
    return c;
  });
}

/** How a checkpoint tensor is stored in the backend. */
const STORAGE = {
  /** As on disk (norm weights, biases, an untied embedding [V, d]). */
  asIs: (data: Float32Array) => data,
  /** [out, in] -> [in, out]: linears, the head, a tied embedding ([V, d] -> [d, V]). */
  transposed: (data: Float32Array, shape: readonly number[]) => transpose2d(data, shape[0], shape[1]),
} satisfies Record<string, (data: Float32Array, shape: readonly number[]) => Float32Array>;
type Storage = keyof typeof STORAGE;

function storageOf(name: string, config: HfModelConfig): Storage {
  if (name.endsWith('_proj.weight') || name === 'lm_head.weight') return 'transposed';
  if (name === 'model.embed_tokens.weight') return config.tieWordEmbeddings ? 'transposed' : 'asIs';
  return 'asIs';
}

/**
 * A weight as the backend stores it (`storedShape`) back in its checkpoint's layout: the inverse
 * of STORAGE, by the same rule (storageOf), as a new array. Saving a model from memory uses it
 * (policies/hf.ts memorySource), so the layout rule lives here only.
 */
export function checkpointLayout(name: string, config: HfModelConfig, data: Float32Array, storedShape: readonly number[]): Float32Array {
  return storageOf(name, config) === 'transposed' ? transpose2d(data, storedShape[0], storedShape[1]) : new Float32Array(data);
}

const EMBED = 'model.embed_tokens.weight';

/** RoPE tables of a batch's positions, [N, 1, hd] each; the Q pair is pre-multiplied by head_dim^-0.5. */
type Rope = { cos: tf.Tensor3D; sin: tf.Tensor3D; cosQ: tf.Tensor3D; sinQ: tf.Tensor3D };

let nextModelId = 0;

export class HfModel {
  readonly config: HfModelConfig;
  /** Base weights by checkpoint name, in the stored layout (see the header). */
  readonly params: ReadonlyMap<string, tf.Variable>;
  /** Real tokens; the sampler never picks head rows beyond (padded vocabulary). */
  validVocab: number;
  /** Per-layer activation recomputation in training (header). */
  recompute: boolean;
  /** Tape bytes a gradient pass may keep before it runs in row blocks; 0: never (./logprobs.ts). */
  tapeBudgetBytes: number;
  /** Whose tape the block plan sizes: the backend's when the model was built (memory.ts `tapeProfileOf`). */
  readonly tapeProfile: TapeProfileName;
  /** Positions per KV-cache chunk (HfKvCache); tests lower it to exercise several chunks. */
  kvChunk = KV_CHUNK;
  /** Whether adapter factors are created trainable (`trainable` true or 'lora'). */
  readonly adaptersTrainable: boolean;
  private readonly adapters: HfAdapters; // named LoRA adapters (./adapters.ts)
  private readonly invFreq: Float64Array;
  private readonly attentionScale: number;
  private readonly rot: tf.Tensor2D; // [hd, hd] rotate-half matrix
  private readonly decoder: HfDecoder; // the KV-cache step (./decode.ts) and the constants it derives

  private constructor(id: number, config: HfModelConfig, params: Map<string, tf.Variable>, options: HfModelOptions, validVocab: number, rope: RopeFrequencies) {
    this.config = config;
    this.params = params;
    this.validVocab = validVocab;
    this.recompute = options.recompute ?? false;
    this.tapeProfile = tapeProfileOf(tf.getBackend());
    this.tapeBudgetBytes = options.tapeBudgetBytes ?? defaultTapeBudgetBytes(this.tapeProfile);
    this.adaptersTrainable = (options.trainable ?? false) !== false;
    this.adapters = new HfAdapters(config, params, this.adaptersTrainable, `hf${id}/`);
    this.invFreq = rope.invFreq;
    this.attentionScale = rope.attentionScale;
    this.rot = tf.tensor2d(rotateHalfMatrix(config.headDim), [config.headDim, config.headDim]);
    this.decoder = new HfDecoder(config, params, this.rot, rope);
  }

  /** The 'default' adapter's LoRA factors by adapted weight name (empty without one). */
  get lora(): ReadonlyMap<string, Lora> {
    return this.adapters.defaultAdapter;
  }

  /**
   * Loads a checkpoint: validates every tensor's name, shape and dtype first (weights.ts
   * `checkWeights`: an unknown or missing tensor is an error naming it), then streams them one by
   * one into the backend. On any error every variable created so far is disposed.
   */
  static fromSource(config: HfModelConfig, source: TensorSource, options: HfModelOptions = {}): HfModel {
    if (config.numHeads % config.numKvHeads !== 0) {
      throw new Error(`${source.origin}: num_attention_heads ${config.numHeads} is not a multiple of num_key_value_heads ${config.numKvHeads}`);
    }
    if (config.headDim % 2 !== 0) throw new Error(`${source.origin}: head_dim ${config.headDim} must be even for RoPE`);
    const validVocab = options.validVocab ?? config.vocabSize;
    if (!Number.isInteger(validVocab) || validVocab < 1 || validVocab > config.vocabSize) {
      throw new Error(`${source.origin}: validVocab ${validVocab} must be an integer in [1, vocab_size ${config.vocabSize}]`);
    }
    checkWeights(config, source); // config.json's sizes against the headers, before anything sized by them is built
    const rope = ropeInvFreq(config.rope, config.headDim); // a bad RoPE config fails before any tensor is read
    const id = nextModelId++;
    const trainable = options.trainable ?? false;
    const loraPairs = options.lora ?? [];
    const baseTrainable = trainable === true && loraPairs.length === 0;
    const params = new Map<string, tf.Variable>();
    const variable = (data: Float32Array, shape: number[], train: boolean, name: string) =>
      tf.tidy(() => tf.variable(tf.tensor(data, shape, 'float32'), train, `hf${id}/${name}`));
    try {
      for (const { name } of expectedWeights(config)) {
        const entry = source.get(name);
        if (!entry) throw new Error(`${source.origin}: tensor "${name}" is missing`);
        const shape = entry.shape;
        const size = shape.reduce((a, b) => a * b, 1);
        const raw = entry.read(); // float32, one tensor at a time
        if (raw.length !== size) throw new Error(`${entry.file}: tensor "${name}" holds ${raw.length} values, its shape [${shape}] needs ${size}`);
        const storage = storageOf(name, config);
        const stored = storage === 'transposed' ? [shape[1], shape[0]] : [...shape];
        params.set(name, variable(STORAGE[storage](raw, shape), stored, baseTrainable, name));
      }
    } catch (err) {
      for (const v of params.values()) v.dispose();
      throw err;
    }
    const model = new HfModel(id, config, params, options, validVocab, rope);
    if (loraPairs.length > 0) {
      try {
        model.loadAdapter(DEFAULT_ADAPTER, loraPairs);
      } catch (err) {
        model.dispose();
        throw err;
      }
    }
    return model;
  }

  /** Names of the adapters in memory, in the order they were added. */
  adapterNames(): string[] {
    return this.adapters.names();
  }

  /** A new adapter initialised as peft does (./adapters.ts `HfAdapters.add`). */
  addAdapter(name: string, cfg: HfAdapterConfig, seed: number): void {
    this.adapters.add(name, cfg, seed);
  }

  /** peft LoRA pairs in memory as adapter `name`, new or overwritten in place (./adapters.ts `HfAdapters.load`). */
  loadAdapter(name: string, pairs: readonly LoraPair[]): void {
    this.adapters.load(name, pairs);
  }

  /** An adapter's factors in peft's layout (A [r, in], B [out, r]), to save it. A read-back: call outside tf.tidy. */
  readAdapter(name: string): LoraPair[] {
    return this.adapters.read(name);
  }

  /** An adapter's variables (A^T, B^T per target, in target order): the optimizer's list for that role. */
  adapterVariables(name: string): tf.Variable[] {
    return this.adapters.variables(name);
  }

  /** Frees an adapter's variables. */
  removeAdapter(name: string): void {
    this.adapters.remove(name);
  }

  /** The adapter an entry point runs (see HfAdapterChoice). */
  private adapterOf(choice: HfAdapterChoice): Adapter | null {
    return this.adapters.of(choice);
  }

  /** Trainable variables: every adapter's factors (trainable 'lora', or true with `lora`), or every base weight (full fine-tuning); none when loaded frozen. */
  variables(): tf.Variable[] {
    const factors = this.adapters.allVariables();
    return [...this.params.values(), ...factors].filter((v) => v.trainable);
  }

  /** The 'default' adapter in peft's layout ([] without one): `readAdapter('default')`. */
  readLora(): LoraPair[] {
    return this.adapters.has(DEFAULT_ADAPTER) ? this.readAdapter(DEFAULT_ADAPTER) : [];
  }

  dispose(): void {
    for (const v of this.params.values()) v.dispose();
    this.adapters.dispose();
    this.decoder.dispose();
    this.rot.dispose();
  }

  private p<R extends tf.Rank>(name: string): tf.Tensor<R> {
    const v = this.params.get(name);
    if (!v) throw new Error(`HfModel: no weight "${name}"`);
    return v as unknown as tf.Tensor<R>;
  }

  /** Training / scoring path: ids [B, T] -> logits [B, T, V] (all rows of the head; see `logitsOf`). */
  forward(ids: tf.Tensor2D, layout?: HfBatchLayout, adapter?: HfAdapterChoice): tf.Tensor3D {
    const [B, T] = ids.shape;
    return tf.tidy(() => tf.reshape(this.logitsOf(this.hidden(ids, layout, adapter)), [B, T, this.config.vocabSize]) as tf.Tensor3D);
  }

  /**
   * The final-normed hidden states [B*T, d] of ids [B, T] (differentiable). Default layout:
   * positions 0..T-1 in every row, every token real (right padding needs no mask: causal
   * attention never looks right). `dropout`: the update's LoRA dropout (./loraDropout.ts), given
   * by its gradient pass only.
   */
  hidden(ids: tf.Tensor2D, layout?: HfBatchLayout, adapter?: HfAdapterChoice, dropout?: LoraDropout): tf.Tensor2D {
    const [B, T] = ids.shape;
    const L = layout ?? leftPadLayout(Array<number>(B).fill(0), T);
    if (L.positions.length !== B * T || L.keyMask.length !== B * T) throw new Error(`HfModel: layout has ${L.positions.length} positions for ${B} x ${T} ids`);
    // The adapter as it is without dropout (or p = 0); a left-padded row's masks start at its first real token.
    const lora = withLoraDropout(this.adapterOf(adapter), dropout, B, T, layout && leadingPads(L.keyMask, B, T));
    this.checkPositions(L.positions);
    return tf.tidy(() => {
      const { x } = this.trunk(tf.reshape(ids, [B * T]) as tf.Tensor1D, B, T, L, true, null, lora);
      return this.norm(x, this.p('model.norm.weight'), true); // [B*T, d]
    });
  }

  /** Output head on final-normed rows: [N, d] -> [N, V] (differentiable; every row, padded vocabulary included, as transformers). */
  logitsOf(h: tf.Tensor2D): tf.Tensor2D {
    return tf.tidy(() => this.lin(h, this.headWeight(), true)); // [N, V]
  }

  /**
   * The logit of one given id per row, ids [N], from the final-normed rows h [N, d] and their
   * logits [N, V] (differentiable in h). A frozen head gathers the ids' head columns and takes
   * row dot products (no [N, V] one-hot: on a 152k vocabulary its passes cost more than the head
   * product itself); a trained head needs its gradient, so it picks from the logits with a
   * one-hot product (wasm has no Gather gradient).
   */
  pickLogits(h: tf.Tensor2D, logits: tf.Tensor2D, ids: tf.Tensor1D): tf.Tensor1D {
    return tf.tidy(() => {
      const w = this.headWeight();
      if ((w as tf.Variable).trainable) return tf.sum(tf.mul(logits, tf.oneHot(ids, this.config.vocabSize).toFloat()), -1) as tf.Tensor1D; // [N]
      return tf.sum(tf.mul(h, gatherColumns(ids, w)), -1) as tf.Tensor1D; // [N]
    });
  }

  /**
   * log p(ids[i] | row i) over every head row for final-normed rows h [N, d] and ids [N] -> [N]
   * nats, differentiable, keeping only h for the backward (./layers.ts `headLogprob`: the
   * logits are recomputed there). The scorer's path; call on chunks of rows.
   */
  targetLogprobs(h: tf.Tensor2D, ids: tf.Tensor1D): tf.Tensor1D {
    return headLogprob(h, this.headWeight(), ids); // [N] nats
  }

  /** Entropy of the next-token distribution of final-normed rows h [N, d] -> [N] nats (differentiable, as `targetLogprobs`). */
  entropies(h: tf.Tensor2D): tf.Tensor1D {
    return headEntropy(h, this.headWeight()); // [N] nats
  }

  /**
   * Inference prefill of left-padded prompts ids [B, T]: row r has padCounts[r] pads first.
   * Returns the logits of the last column [B, V] and the KV cache ([B*nKV, T, hd] per layer).
   */
  prefill(ids: tf.Tensor2D, padCounts: readonly number[], adapter?: HfAdapterChoice): HfStepOutput {
    const [B, T] = ids.shape;
    const lora = this.adapterOf(adapter);
    if (T > this.config.maxPositions) throw new Error(`HfModel: prompt length ${T} exceeds max_position_embeddings ${this.config.maxPositions}`);
    const layout = leftPadLayout(padCounts, T);
    const { hiddenSize: d, numKvHeads: nKv, headDim: hd } = this.config;
    return tf.tidy(() => {
      const toCache = (r: tf.Tensor2D) => permute(r, [B, T, nKv, hd], [0, 2, 1, 3], [B * nKv, T, hd]) as tf.Tensor3D; // [B*nKV, T, hd]: one chunk
      const { x, cache } = this.trunk(tf.reshape(ids, [B * T]) as tf.Tensor1D, B, T, layout, false, toCache, lora);
      const last = tf.reshape(tf.slice(tf.reshape(x, [B, T, d]), [0, T - 1, 0], [B, 1, d]), [B, d]) as tf.Tensor2D; // [B, d]
      const h = this.norm(last, this.p('model.norm.weight'), false);
      return { logits: this.lin(h, this.headWeight(), false), cache }; // [B, V]
    });
  }

  /**
   * One decoding step: ids[r] at position positions[r] for each row, attending to the cache and
   * itself. keyBias [B, t+1]: 0 for visible keys, MASKED for pad keys. Returns a new cache; the
   * caller disposes the old one.
   */
  decodeStep(ids: readonly number[], positions: readonly number[], cache: HfKvCache, keyBias: Float32Array, adapter?: HfAdapterChoice): HfStepOutput {
    const B = ids.length;
    const lora = this.adapterOf(adapter);
    const nKv = this.config.numKvHeads;
    const t = cache.k.length > 0 ? cache.k[0].reduce((n, c) => n + c.shape[1], 0) + 1 : 0;
    if (keyBias.length !== B * t) throw new Error(`HfModel.decodeStep: keyBias has ${keyBias.length} values, expected ${B} x ${t}`);
    if (positions.length !== B || cache.k.length !== this.config.numLayers || cache.k[0][0].shape[0] !== B * nKv) {
      throw new Error(
        `HfModel.decodeStep: ${B} ids, ${positions.length} positions and a cache of ${cache.k.length} layers x ${cache.k[0]?.[0]?.shape[0]} rows (expected ${this.config.numLayers} x ${B * nKv})`,
      );
    }
    this.checkPositions(positions);
    return this.decoder.step(ids, positions, cache, keyBias, lora, this.kvChunk); // ./decode.ts
  }

  private checkPositions(positions: ArrayLike<number>): void {
    let max = -1;
    for (let i = 0; i < positions.length; i++) max = Math.max(max, positions[i]);
    if (max >= this.config.maxPositions) throw new Error(`HfModel: position ${max} exceeds max_position_embeddings ${this.config.maxPositions}`);
  }

  /**
   * The decoder layers on ids [B*T] -> rows [B*T, d]; with `toCache`, each layer's RoPE'd keys
   * and values [B*T, nKV*hd] are also returned in the cache layout (prefill). One tf.tidy per
   * layer: without a gradient tape a layer's intermediates (its [T, B*H, T] attention among them)
   * are freed before the next layer runs, so the peak is one layer's, not the stack's; under a
   * tape the custom ops have already kept what their backward needs.
   */
  private trunk(
    ids: tf.Tensor1D,
    B: number,
    T: number,
    layout: HfBatchLayout,
    train: boolean,
    toCache: ((rows: tf.Tensor2D) => tf.Tensor3D) | null,
    lora: Adapter | null,
  ): { x: tf.Tensor2D; cache: HfKvCache } {
    const { numHeads: H, numKvHeads: nKv } = this.config;
    const kernels = hfTrainingKernels(); // the backend's attention and its bias layout (./layers.ts HF_TRAINING_KERNELS)
    const bias = kernels.attentionBias(B, T, layout.keyMask); // [T, B, 1, T], [B, 1, 1, T] or null (native, no padding)
    const rope = this.rope(layout.positions);
    let x = this.embed(ids, train); // [B*T, d]
    const cache: HfKvCache = { k: [], v: [] };
    const attendAll = (b: tf.Tensor4D | null) => (q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D) => kernels.attend(q, k, v, b, B, T, H, nKv); // [B*T, nH*hd]
    for (let l = 0; l < this.config.numLayers; l++) {
      if (train && this.recompute && !toCache) {
        x = tf.tidy(() => this.recomputedLayer(l, x, rope, bias, lora, attendAll));
        continue;
      }
      const out = tf.tidy(() => {
        let kc: tf.Tensor3D | undefined;
        let vc: tf.Tensor3D | undefined;
        const attend = attendAll(bias);
        const y = this.block(
          l,
          x,
          rope,
          train,
          (q, k, v) => {
            if (toCache) [kc, vc] = [toCache(k), toCache(v)];
            return attend(q, k, v);
          },
          lora,
        );
        return { y, kc, vc };
      });
      x = out.y;
      if (out.kc && out.vc) {
        cache.k.push([out.kc]);
        cache.v.push([out.vc]);
      }
    }
    return { x, cache }; // x [B*T, d]
  }

  /**
   * Decoder layer l as one custom-gradient op (activation recomputation): the forward runs the
   * layer's ops inside the op (tfjs records nothing on the tape there, so their intermediates are
   * freed at once) and saves only its input rows x [N, d] plus the batch constants it reads (RoPE
   * tables, key bias: the forward scope disposes the originals). The backward re-runs the layer
   * under a tape of its own (`withOwnTape`) and differentiates it with respect to x and the
   * layer's trainable variables (its base weights under full fine-tuning, else its adapter
   * factors), inside its own tf.tidy, so one layer's intermediates live at a time.
   */
  private recomputedLayer(
    l: number,
    x: tf.Tensor2D,
    rope: Rope,
    bias: tf.Tensor4D | null,
    lora: Adapter | null,
    attendAll: (b: tf.Tensor4D | null) => (q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D) => tf.Tensor2D,
  ): tf.Tensor2D {
    const pre = `model.layers.${l}.`;
    const vars: tf.Variable[] = [
      ...[...this.params].filter(([n, v]) => n.startsWith(pre) && v.trainable).map(([, v]) => v),
      ...[...(lora ?? NO_ADAPTER)]
        .filter(([n]) => n.startsWith(pre))
        .flatMap(([, f]) => [f.a, f.b])
        .filter((v) => v.trainable),
    ];
    const run = (xi: tf.Tensor2D, r: Rope, b: tf.Tensor4D | null) => this.block(l, xi, r, true, attendAll(b), lora); // [N, d]
    const op = tf.customGrad((...args) => {
      const xi = args[0] as tf.Tensor2D;
      const save = args[args.length - 1] as tf.GradSaveFunc;
      save([xi, rope.cos, rope.sin, rope.cosQ, rope.sinQ, ...(bias ? [bias] : [])]);
      return {
        value: run(xi, rope, bias), // [N, d]
        gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
          tf.tidy(() => {
            const [xs, cos, sin, cosQ, sinQ] = saved as [tf.Tensor2D, tf.Tensor3D, tf.Tensor3D, tf.Tensor3D, tf.Tensor3D];
            const bs = (saved[5] as tf.Tensor4D | undefined) ?? null;
            const r: Rope = { cos, sin, cosQ, sinQ };
            // The variables are read by the layer itself; passing them as xs asks for their gradients.
            return withOwnTape(() => tf.grads((x0: tf.Tensor) => run(x0 as tf.Tensor2D, r, bs))([xs, ...vars], dy)); // [dx, ...dvars]
          }),
      };
    }) as (...inputs: tf.Tensor[]) => tf.Tensor2D;
    return op(x, ...vars); // [N, d]
  }

  /** cos and sin [N, 1, hd] for the given positions; cosQ, sinQ also carry the attention scale head_dim^-0.5 (queries). */
  private rope(positions: ArrayLike<number>): Rope {
    const hd = this.config.headDim;
    const N = positions.length;
    const { cos, sin } = ropeTables(positions, this.invFreq, this.attentionScale);
    const s = 1 / Math.sqrt(hd);
    const t = (a: Float32Array) => tf.tensor3d(a, [N, 1, hd]);
    return { cos: t(cos), sin: t(sin), cosQ: t(cos.map((v) => v * s)), sinQ: t(sin.map((v) => v * s)) };
  }

  /**
   * One decoder layer on rows x [N, d]. `attend` maps the scaled, RoPE'd queries [N, nH*hd] and
   * the RoPE'd keys and values [N, nKV*hd] to the heads' output [N, nH*hd] (before o_proj).
   */
  private block(
    l: number,
    x: tf.Tensor2D,
    rope: Rope,
    train: boolean,
    attend: (q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D) => tf.Tensor2D,
    lora: Adapter | null,
  ): tf.Tensor2D {
    const { numHeads: H, numKvHeads: nKv, headDim: hd, rmsNormEps: eps } = this.config;
    const pre = `model.layers.${l}.`;
    const h = this.norm(x, this.p(`${pre}input_layernorm.weight`), train); // [N, d]
    let q = this.proj(h, `${pre}self_attn.q_proj`, train, lora); // [N, nH*hd]
    let k = this.proj(h, `${pre}self_attn.k_proj`, train, lora); // [N, nKV*hd]
    const v = this.proj(h, `${pre}self_attn.v_proj`, train, lora); // [N, nKV*hd]
    if (this.config.qkNorm) {
      const headNorm = (z: tf.Tensor2D, heads: number, w: string) =>
        tf.reshape(this.norm(tf.reshape(z, [z.shape[0] * heads, hd]) as tf.Tensor2D, this.p(w), train, eps), z.shape) as tf.Tensor2D;
      q = headNorm(q, H, `${pre}self_attn.q_norm.weight`);
      k = headNorm(k, nKv, `${pre}self_attn.k_norm.weight`);
    }
    q = applyRope(q, rope.cosQ, rope.sinQ, this.rot, H, train); // [N, nH*hd], scaled by head_dim^-0.5
    k = applyRope(k, rope.cos, rope.sin, this.rot, nKv, train); // [N, nKV*hd]
    x = tf.add(x, this.proj(attend(q, k, v), `${pre}self_attn.o_proj`, train, lora)); // [N, d]
    const h2 = this.norm(x, this.p(`${pre}post_attention_layernorm.weight`), train); // [N, d]
    const gate = this.proj(h2, `${pre}mlp.gate_proj`, train, lora); // [N, I]
    const up = this.proj(h2, `${pre}mlp.up_proj`, train, lora); // [N, I]
    const act = tf.mul(tf.mul(gate, tf.sigmoid(gate)), up) as tf.Tensor2D; // silu(gate) * up
    return tf.add(x, this.proj(act, `${pre}mlp.down_proj`, train, lora)); // [N, d]
  }

  /** A linear module by its prefix (`...q_proj`): weight, optional bias (Qwen2's q/k/v), optional LoRA. */
  private proj(x: tf.Tensor2D, module: string, train: boolean, lora: Adapter | null): tf.Tensor2D {
    const name = `${module}.weight`;
    let y = this.lin(x, this.p(name), train); // [N, out]
    const ad = lora?.get(name);
    if (ad) {
      const xa = this.lin(ad.drop ? ad.drop(x) : x, ad.a as unknown as tf.Tensor2D, train); // dropout(x) A^T (peft: dropout in training only)
      y = tf.add(y, tf.mul(this.lin(xa, ad.b as unknown as tf.Tensor2D, train), ad.scale)); // + scale (x A^T) B^T
    }
    const bias = this.params.get(`${module}.bias`);
    return bias ? tf.add(y, bias) : y;
  }

  /** x @ w: training path with a hand-written backward (weight gradient only for a trainable variable), else a plain matMul. */
  private lin(x: tf.Tensor2D, w: tf.Tensor2D, train: boolean): tf.Tensor2D {
    if (!train) return tf.matMul(x, w);
    return (w as tf.Variable).trainable ? linear(x, w) : hfTrainingKernels().frozenLinear(x, w);
  }

  private norm(x: tf.Tensor2D, w: tf.Tensor1D, train: boolean, eps = this.config.rmsNormEps): tf.Tensor2D {
    return (train ? rmsNorm : rmsNormValue)(x, w, eps);
  }

  /** The head [d, V]: lm_head, or the tied embedding (stored [d, V]). */
  private headWeight(): tf.Tensor2D {
    return this.p(this.config.tieWordEmbeddings ? EMBED : 'lm_head.weight');
  }

  /** Token embeddings [N, d]: a gather, or a one-hot product when the table is trained (wasm has no Gather gradient). */
  private embed(ids: tf.Tensor1D, train: boolean): tf.Tensor2D {
    const table = this.params.get(EMBED)!;
    const t = table as unknown as tf.Tensor2D;
    const tied = this.config.tieWordEmbeddings;
    if (train && table.trainable) {
      return tied ? oneHotColumns(tf.oneHot(ids, this.config.vocabSize).toFloat() as tf.Tensor2D, t) : embed(ids, t);
    }
    return tied ? gatherColumns(ids, t) : (tf.gather(t, ids) as tf.Tensor2D); // [N, d]
  }
}
