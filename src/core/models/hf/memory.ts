/**
 * Sizes a Hugging Face model from its config alone, before anything is loaded, so a GPU user can
 * size a run (`srpo-lab model info`). All bytes are float32 (tfjs computes in float32 whatever
 * the checkpoint's dtype). Pure arithmetic: no files, no tensors.
 *
 * - parameters: the tensors transformers builds for the architecture (embedding, per layer
 *   q/k/v/o + biases where the architecture has them + Qwen3's q/k norms + the SwiGLU MLP + two
 *   RMSNorms, the final norm, and lm_head only when untied).
 * - LoRA trainable parameters, as peft counts them: r * (in + out) per adapted linear.
 * - optimizer state: AdamW's two moments, 2 float32 per trainable parameter (the trainable
 *   parameters are the LoRA ones with `loraR`, else all of them).
 * - KV cache per 1k tokens: 2 (K and V) * layers * kvHeads * headDim * 4 bytes * 1024.
 * - activations per 1k tokens (training, saved for the backward pass, no recomputation), with
 *   T = seqLen (default 1024), q = heads*headDim, kv = kvHeads*headDim, I = intermediate:
 *     per token per layer: 6H (two residual inputs, two norm outputs, attention output
 *     projection, MLP output) + 3q + 4kv (q, k, v before and after norm/RoPE; q once more as the
 *     attention output) + 4I (gate, up, silu(gate), their product) + 2 * heads * T (attention
 *     scores and their softmax: the quadratic term)
 *     plus, per token, H (the final rows the head reads), and once, 2 * chunkRows * vocab: the
 *     logits and log-softmax of one head chunk (`headChunkRows`: HEAD_CHUNK_FLOATS / vocab rows,
 *     at most the tokens), since the head's logits are cheap to recompute chunk by chunk and the
 *     lab does so; times 4 bytes, over 1024 tokens. This is the minimum a backward pass needs
 *     without recomputing the layers, and never more than what the lab's tfjs step peaks at
 *     (below: the same head at 8 blocks, the same layers at LAB_TAPE_FACTOR). Keeping every
 *     token's logits instead (2 * vocab per token) would make this "minimum" exceed the lab's
 *     figure for large vocabularies (82 GB against 0.8 GB at vocab_size 1e7):
 * - lab peak of a training step (`trainingPeakBytes`, measured with tf.profile peakBytes on four
 *   Qwen3-shaped variants: hidden 128/256, 2/4/8 layers, vocabulary 2k/8k, sequences 64/128,
 *   LoRA r=8 on every linear; wasm), in two parts that the implementation keeps apart:
 *   - the head: the scorer's head ops (logprobs.ts, hf/layers.ts `headLogprob`) keep only the
 *     final rows (H per token); their backward holds ~8 [rows, vocab] blocks of ONE chunk
 *     (HEAD_CHUNK_FLOATS / vocab rows, at most the step's tokens) at a time: HEAD_BLOCKS;
 *   - the layers, without recomputation: the tape keeps every layer's saved tensors, the
 *     per-layer term above times LAB_TAPE_FACTOR (6; measured 4.9..7.3: the LoRA branches' inputs,
 *     each elementwise step of SwiGLU, RoPE and the norms, the attention probabilities);
 *   - the layers with `recompute: true` (model.ts): per layer only its input rows, the RoPE
 *     tables and the key bias (H + 4 * headDim + T per token), plus ONE layer re-run under a tape
 *     and differentiated at a time: the per-layer term times RECOMPUTE_LAYER_FACTOR (9.5; measured
 *     8.8..9.8: the layer's tape plus its gradients in flight); the head's chunk and that layer
 *     are not live together, so the larger of the two counts.
 *   - a pass whose layer tape would exceed the tape budget (`tapeBudgetBytes`, the run's
 *     `update.tapeBudgetMB`) runs in row blocks (logprobs.ts), each within it: the budget then
 *     stands for the layers' part, an upper bound (blocks hold whole rows).
 *   bench/hf.bench.ts re-measures both (`memory_vs_estimate`, `memory_vs_estimate_recompute`).
 * - per backend (`TAPE_PROFILES`, decision 071): the factor above is the WebAssembly backend's
 *   (and tfjs's pure-JS one's). The native backend (tfjs-node, tfjs-node-gpu: the same kernels)
 *   keeps less: its attention keeps the probabilities once, its linears and SwiGLU fewer
 *   intermediates. Each profile also sets the default budget: 512 MB under wasm, whose heap is
 *   4 GB in all; 4096 MB on the native backend, whose memory is the machine's or the GPU's.
 *   Re-measured per backend by `npm run bench -- memory` (`tape_vs_estimate_*`;
 *   `SRPO_LAB_BACKEND=node` for native).
 *
 * Tests: test/core/models/hf/memory.test.ts (parameter counts of Qwen3-0.6B, Qwen2.5-1.5B and
 * Llama-3.2-1B and peft's LoRA counts, as transformers and peft computed them:
 * scripts/fixtures/make_param_count_fixtures.py).
 */
import type { HfArchitecture, HfModelConfig } from './types';

/** The linears of a decoder layer that LoRA may adapt (peft `target_modules` names). */
export const HF_LINEAR_MODULES = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;
export type HfLinearModule = (typeof HF_LINEAR_MODULES)[number];

/** Bytes the wasm backend's tape keeps per layer without recomputation / the minimal per-layer term (header). */
export const LAB_TAPE_FACTOR = 6;
/** One recomputed layer's live bytes in its backward / the minimal per-layer term (header). */
export const RECOMPUTE_LAYER_FACTOR = 9.5;
/** [rows, vocab] blocks live in the backward of one head chunk (header). */
export const HEAD_BLOCKS = 8;
/** The scorer's largest logits block, floats (logprobs.ts re-exports it; defined here to keep this file free of tfjs). */
export const HEAD_CHUNK_FLOATS = 16 * 1024 * 1024;

/** How a backend's gradient tape is estimated and bounded by default (header). */
export interface TapeProfile {
  /** Bytes its tape keeps per layer without recomputation / the minimal per-layer term. */
  layerFactor: number;
  /** `update.tapeBudgetMB` when the run leaves it null. */
  defaultBudgetMB: number;
}
export const TAPE_PROFILES = {
  wasm: { layerFactor: LAB_TAPE_FACTOR, defaultBudgetMB: 512 },
  // 6 x the largest native/wasm ratio `npm run bench -- memory` and `-- hf` measured (decision 071): an upper bound.
  native: { layerFactor: 4.7, defaultBudgetMB: 4096 },
} satisfies Record<string, TapeProfile>;
export type TapeProfileName = keyof typeof TAPE_PROFILES;

/** The profile of a tfjs backend by its name: 'tensorflow' (tfjs-node, tfjs-node-gpu) is native; any other sizes as wasm, the larger estimate. */
export function tapeProfileOf(backendName: string): TapeProfileName {
  return backendName === 'tensorflow' ? 'native' : 'wasm';
}

/** Default tape bytes a gradient pass may keep before it runs in row blocks under a profile (logprobs.ts; `update.tapeBudgetMB` null). */
export function defaultTapeBudgetBytes(profile: TapeProfileName): number {
  return TAPE_PROFILES[profile].defaultBudgetMB * 2 ** 20;
}

/** Floats the widest layer intermediates of one scoring chunk without a tape may hold (~1 GB; `scoreChunkRows`). */
export const SCORE_CHUNK_FLOATS = 256 * 2 ** 20;
/** Most rows scored at once without a tape. */
export const SCORE_CHUNK_MAX_ROWS = 64;

/**
 * Rows a pass without a tape (old log-probs, the KL reference: policies' `scoreData`) scores at
 * once when its rows hold up to `seqLen` tokens: as many as keep 4 blocks of the layer's widest
 * per-token width (hidden, q heads x head_dim, intermediate) within SCORE_CHUNK_FLOATS, 1 to
 * SCORE_CHUNK_MAX_ROWS: every call costs its few hundred kernels however few rows it has, so the
 * lab's tiny models score 64 rows a call, while Qwen3-0.6B's 1k-token rows take 21
 * (docs/NATIVE_BACKEND.md, whole runs).
 */
export function scoreChunkRows(c: HfModelConfig, seqLen: number): number {
  const width = Math.max(c.hiddenSize, c.numHeads * c.headDim, c.intermediateSize);
  return Math.max(1, Math.min(SCORE_CHUNK_MAX_ROWS, Math.floor(SCORE_CHUNK_FLOATS / (4 * width * Math.max(1, seqLen)))));
}

export interface HfMemoryOptions {
  /** LoRA rank; absent: full fine-tuning (every parameter trainable). */
  loraR?: number;
  /** Linears LoRA adapts (default: all seven). */
  targetModules?: readonly string[];
  /** Sequence length the activation estimate assumes (its attention term is quadratic). Default 1024. */
  seqLen?: number;
  /** Backend whose tape the lab figures follow (header). Default wasm, the larger. */
  profile?: TapeProfileName;
}

export interface HfMemoryEstimate {
  parameters: number;
  /** parameters * 4. */
  weightBytes: number;
  /** LoRA parameters with `loraR`, else `parameters`. */
  trainableParameters: number;
  /** AdamW moments: trainable * 2 * 4. */
  optimizerBytes: number;
  /** 2 * layers * kvHeads * headDim * 4 * 1024. */
  kvCacheBytesPer1kTokens: number;
  /** The minimum a backward pass keeps without recomputing the layers, the head one chunk at a time (header); at most `labActivationBytesPer1kTokens`. */
  activationBytesPer1kTokens: number;
  /**
   * What the lab's tfjs training step peaks at without recomputation, per 1k tokens
   * (`trainingPeakBytes` of 1024 tokens), passes not in blocks (a tape budget bounds the layers' part).
   */
  labActivationBytesPer1kTokens: number;
  /** The same with per-layer recomputation (`recompute: true`). */
  labRecomputeBytesPer1kTokens: number;
  seqLen: number;
  lora: { r: number; targetModules: string[] } | null;
}

/** Which linears carry a bias, per architecture (transformers' modeling files). */
interface BiasLayout {
  qkv: (c: HfModelConfig) => boolean;
  o: (c: HfModelConfig) => boolean;
}
const BIASES = {
  // modeling_qwen2.py: q/k/v always biased, o_proj never.
  qwen2: { qkv: () => true, o: () => false },
  // modeling_qwen3.py and modeling_llama.py: q/k/v/o all follow `attention_bias`.
  qwen3: { qkv: (c) => c.attentionBias, o: (c) => c.attentionBias },
  llama: { qkv: (c) => c.attentionBias, o: (c) => c.attentionBias },
} satisfies Record<HfArchitecture, BiasLayout>;

/** [in, out] of each linear of one layer. */
export function linearShapes(c: HfModelConfig): Record<HfLinearModule, [number, number]> {
  const q = c.numHeads * c.headDim;
  const kv = c.numKvHeads * c.headDim;
  return {
    q_proj: [c.hiddenSize, q],
    k_proj: [c.hiddenSize, kv],
    v_proj: [c.hiddenSize, kv],
    o_proj: [q, c.hiddenSize],
    gate_proj: [c.hiddenSize, c.intermediateSize],
    up_proj: [c.hiddenSize, c.intermediateSize],
    down_proj: [c.intermediateSize, c.hiddenSize],
  };
}

/** Parameter count of the architecture as transformers builds it. */
export function hfParameterCount(c: HfModelConfig): number {
  const shapes = linearShapes(c);
  const bias = BIASES[c.architecture];
  let layer = 0;
  for (const [inF, outF] of Object.values(shapes)) layer += inF * outF;
  if (bias.qkv(c)) layer += shapes.q_proj[1] + shapes.k_proj[1] + shapes.v_proj[1];
  if (bias.o(c)) layer += c.hiddenSize;
  if (c.qkNorm) layer += 2 * c.headDim;
  layer += 2 * c.hiddenSize; // input_layernorm, post_attention_layernorm
  const embed = c.vocabSize * c.hiddenSize;
  return embed + c.numLayers * layer + c.hiddenSize + (c.tieWordEmbeddings ? 0 : embed);
}

/** peft's trainable count: r * (in + out) per adapted linear, in every layer. */
export function loraParameterCount(c: HfModelConfig, r: number, targetModules: readonly string[] = HF_LINEAR_MODULES): number {
  const shapes = linearShapes(c);
  let perLayer = 0;
  for (const m of targetModules) {
    if (!Object.hasOwn(shapes, m)) throw new Error(`LoRA target module "${m}" is not a linear of ${c.architecture}; valid: ${HF_LINEAR_MODULES.join(', ')}`);
    const [inF, outF] = shapes[m as HfLinearModule];
    perLayer += r * (inF + outF);
  }
  return c.numLayers * perLayer;
}

/** Minimal floats per token per layer saved for the backward (header), at sequence length T. */
function perTokenPerLayer(c: HfModelConfig, T: number): number {
  const q = c.numHeads * c.headDim;
  const kv = c.numKvHeads * c.headDim;
  return 6 * c.hiddenSize + 3 * q + 4 * kv + 4 * c.intermediateSize + 2 * c.numHeads * T;
}

/** Rows of one head chunk: the scorer's [rows, vocab] logits block holds at most HEAD_CHUNK_FLOATS; at least one row, at most the tokens. */
export function headChunkRows(c: HfModelConfig, tokens: number): number {
  return Math.max(1, Math.min(tokens, Math.floor(HEAD_CHUNK_FLOATS / c.vocabSize)));
}

/** Layer floats per token a gradient pass keeps: every layer's tape, or with per-layer recomputation each layer's inputs plus one layer re-run (header). */
function layerFloatsPerToken(c: HfModelConfig, T: number, recompute: boolean, profile: TapeProfileName): number {
  const layer = perTokenPerLayer(c, T);
  if (!recompute) return c.numLayers * layer * TAPE_PROFILES[profile].layerFactor;
  return c.numLayers * (c.hiddenSize + 4 * c.headDim + T) + layer * RECOMPUTE_LAYER_FACTOR; // inputs, RoPE tables, key bias; one layer
}

/**
 * Bytes the layers' tape of a gradient pass over `rows` rows of `seqLen` tokens keeps without
 * per-layer recomputation, by this estimate: what `blockPlan` compares with the tape budget.
 */
export function passTapeBytes(c: HfModelConfig, seqLen: number, rows: number, profile: TapeProfileName = 'wasm'): number {
  return 4 * layerFloatsPerToken(c, seqLen, false, profile) * seqLen * rows;
}

/**
 * The tape `blockPlan` charges a pass over `rows` rows under `budgetBytes`: without per-layer
 * recomputation where one such row fits (or there is no budget), else with it (the scorer then
 * recomputes every layer). A pass at most the budget by this figure runs in one block, so its
 * backward re-runs no forward: the update packs its micro-batches by it (train/miniBatches.ts).
 */
export function plannedPassBytes(c: HfModelConfig, seqLen: number, rows: number, budgetBytes: number, profile: TapeProfileName = 'wasm'): number {
  const plain = passTapeBytes(c, seqLen, 1, profile);
  const perRow = !(budgetBytes > 0) || plain <= budgetBytes ? plain : 4 * layerFloatsPerToken(c, seqLen, true, profile) * seqLen;
  return perRow * rows;
}

/**
 * How a gradient pass over `rows` rows of `seqLen` tokens runs under a tape budget (logprobs.ts):
 * null when its layers' tape fits (or the budget is 0: never in blocks); else blocks of as many
 * rows as fit without per-layer recomputation, or, where not even one row fits, with it (at least one row).
 */
export function blockPlan(
  c: HfModelConfig,
  seqLen: number,
  rows: number,
  budgetBytes: number,
  profile: TapeProfileName = 'wasm',
): { rows: number; layerRecompute: boolean } | null {
  if (!(budgetBytes > 0)) return null;
  const fit = Math.floor(budgetBytes / passTapeBytes(c, seqLen, 1, profile));
  if (fit >= rows) return null;
  if (fit >= 1) return { rows: fit, layerRecompute: false };
  return { rows: Math.max(1, Math.floor(budgetBytes / (4 * layerFloatsPerToken(c, seqLen, true, profile) * seqLen))), layerRecompute: true };
}

/**
 * Peak activation bytes of one training step of the lab's tfjs implementation (scoreHf forward +
 * backward; weights, gradients of the weights and optimizer state not included) over `tokens`
 * scored tokens in sequences of `seqLen`, with or without per-layer recomputation (header); with
 * `tapeBudgetBytes`, a pass over it as logprobs.ts runs it: one block's tape (`blockPlan`).
 */
export function trainingPeakBytes(
  c: HfModelConfig,
  opts: { tokens: number; seqLen: number; recompute: boolean; tapeBudgetBytes?: number; profile?: TapeProfileName },
): number {
  const { tokens, seqLen: T } = opts;
  const profile = opts.profile ?? 'wasm';
  const head = HEAD_BLOCKS * headChunkRows(c, tokens) * c.vocabSize; // floats, one chunk's backward
  const rows = tokens * c.hiddenSize; // final rows kept by the head ops
  const plan = blockPlan(c, T, Math.ceil(tokens / T), opts.tapeBudgetBytes ?? 0, profile);
  const taped = plan ? Math.min(tokens, plan.rows * T) : tokens; // tokens under one tape at a time
  const recompute = plan ? plan.layerRecompute : opts.recompute;
  if (!recompute) return 4 * (taped * layerFloatsPerToken(c, T, false, profile) + head + rows);
  const kept = taped * c.numLayers * (c.hiddenSize + 4 * c.headDim + T); // each layer's input rows, RoPE tables, key bias
  return 4 * (kept + Math.max(head, taped * perTokenPerLayer(c, T) * RECOMPUTE_LAYER_FACTOR) + rows);
}

export function estimateHfMemory(c: HfModelConfig, opts: HfMemoryOptions = {}): HfMemoryEstimate {
  const seqLen = opts.seqLen ?? 1024;
  if (!(Number.isInteger(seqLen) && seqLen > 0)) throw new Error(`seqLen must be a positive integer, got ${seqLen}`);
  if (opts.loraR !== undefined && !(Number.isInteger(opts.loraR) && opts.loraR > 0)) throw new Error(`LoRA rank must be a positive integer, got ${opts.loraR}`);
  const parameters = hfParameterCount(c);
  const targetModules = [...(opts.targetModules ?? HF_LINEAR_MODULES)];
  const trainable = opts.loraR !== undefined ? loraParameterCount(c, opts.loraR, targetModules) : parameters;
  const kv = c.numKvHeads * c.headDim;
  const perToken = c.numLayers * perTokenPerLayer(c, seqLen) + c.hiddenSize; // the layers' saved tensors, the final rows
  const headChunk = 2 * headChunkRows(c, 1024) * c.vocabSize; // one chunk's logits and log-softmax (header)
  return {
    parameters,
    weightBytes: parameters * 4,
    trainableParameters: trainable,
    optimizerBytes: trainable * 2 * 4,
    kvCacheBytesPer1kTokens: 2 * c.numLayers * kv * 4 * 1024,
    activationBytesPer1kTokens: 4 * (perToken * 1024 + headChunk),
    labActivationBytesPer1kTokens: trainingPeakBytes(c, { tokens: 1024, seqLen, recompute: false, profile: opts.profile }),
    labRecomputeBytesPer1kTokens: trainingPeakBytes(c, { tokens: 1024, seqLen, recompute: true, profile: opts.profile }),
    seqLen,
    lora: opts.loraR !== undefined ? { r: opts.loraR, targetModules } : null,
  };
}
