/**
 * The contract of the Hugging Face model family (Qwen3, Qwen2/2.5, Llama 3.x): plain types shared
 * by the folder reader (config.ts, safetensorsFile.ts, weights.ts), the float64 reference
 * (reference.ts), the tfjs fast path (model.ts, sampler.ts, logprobs.ts), LoRA (lora.ts) and the
 * tokenizer (tokenizer.ts). No code here: only what crosses those files.
 *
 * Names follow transformers' modeling code (modeling_qwen3.py, modeling_qwen2.py,
 * modeling_llama.py); every field says which config.json key it comes from.
 */

/** The architectures the family implements (config.json `model_type`). */
export const HF_ARCHITECTURES = ['qwen3', 'qwen2', 'llama'] as const;
export type HfArchitecture = (typeof HF_ARCHITECTURES)[number];

/** RoPE scaling types (`rope_scaling.rope_type` / `.type`, or `rope_parameters.rope_type`). */
export const ROPE_TYPES = ['default', 'linear', 'llama3', 'yarn'] as const;
export type RopeType = (typeof ROPE_TYPES)[number];

/** RoPE, normalised from either the older (`rope_theta` + `rope_scaling`) or the newer (`rope_parameters`) keys. */
export interface RopeConfig {
  type: RopeType;
  /** Base of the inverse frequencies (`rope_theta`). */
  theta: number;
  /** linear, llama3, yarn: the scaling factor (`factor`). */
  factor?: number;
  /** llama3: `low_freq_factor`, `high_freq_factor`, `original_max_position_embeddings`. */
  lowFreqFactor?: number;
  highFreqFactor?: number;
  originalMaxPositions?: number;
  /** yarn: `beta_fast` (default 32), `beta_slow` (default 1), `attention_factor` (default 0.1 ln(factor) + 1), `mscale`, `mscale_all_dim`, `truncate`. */
  betaFast?: number;
  betaSlow?: number;
  attentionFactor?: number;
  mscale?: number;
  mscaleAllDim?: number;
  truncate?: boolean;
}

/** The safetensors dtypes a checkpoint may store (all computed in float32). */
export const HF_WEIGHT_DTYPES = ['F32', 'BF16', 'F16'] as const;
export type HfWeightDtype = (typeof HF_WEIGHT_DTYPES)[number];

/** config.json, normalised. */
export interface HfModelConfig {
  architecture: HfArchitecture; // model_type
  vocabSize: number; // vocab_size: rows of the embedding and the head (may exceed the tokenizer's tokens)
  hiddenSize: number; // hidden_size
  intermediateSize: number; // intermediate_size
  numLayers: number; // num_hidden_layers
  numHeads: number; // num_attention_heads
  numKvHeads: number; // num_key_value_heads (default numHeads)
  headDim: number; // head_dim (Qwen3 sets it; else hidden_size / num_attention_heads)
  rmsNormEps: number; // rms_norm_eps
  rope: RopeConfig;
  maxPositions: number; // max_position_embeddings
  tieWordEmbeddings: boolean; // tie_word_embeddings (lm_head reuses embed_tokens)
  attentionBias: boolean; // Qwen2: true (q/k/v biases); llama: attention_bias; qwen3: attention_bias (false)
  qkNorm: boolean; // Qwen3: per-head RMSNorm of q and k (over head_dim) before RoPE
  dtype: HfWeightDtype | null; // torch_dtype / dtype, informational (weights carry their own dtype)
  bosTokenId: number | null; // bos_token_id
  eosTokenIds: number[]; // eos_token_id (number or list)
}

/** generation_config.json, the fields the sampler uses. */
export interface HfGenerationConfig {
  /** Every id that ends a turn (`eos_token_id`, number or list), merged with config.json's. */
  stopIds: number[];
  /** `do_sample`: false means transformers decodes greedily and ignores temperature/top-p/top-k. */
  doSample?: boolean;
  temperature?: number;
  topP?: number;
  topK?: number;
}

/** One tensor of a checkpoint on disk, read on demand (never the whole checkpoint in memory). */
export interface TensorEntry {
  name: string;
  dtype: HfWeightDtype;
  shape: number[];
  /** The file that holds it (for error messages). */
  file: string;
  /** Reads and widens it to float32 with positioned reads. */
  read(): Float32Array;
}

/** The tensors of a checkpoint (one safetensors file or an index and its shards). */
export interface TensorSource {
  /** The folder or file it was opened from (for error messages). */
  origin: string;
  names(): string[];
  get(name: string): TensorEntry | undefined;
  /** Releases open file descriptors (files on disk); reads after it throw. In-memory sources may omit it. */
  close?(): void;
}

/** A peft LoRA adapter (adapter_config.json + adapter_model.safetensors), normalised. */
export interface LoraAdapterConfig {
  r: number; // r
  alpha: number; // lora_alpha
  rslora: boolean; // use_rslora: scale alpha / sqrt(r) instead of alpha / r
  dropout: number; // lora_dropout (training only)
  targetModules: string[]; // target_modules, e.g. ['q_proj', 'v_proj']
  baseModel: string | null; // base_model_name_or_path
}

/** One adapted linear: y = W x + scale * B (A x). */
export interface LoraPair {
  /** The base weight it adapts, e.g. `model.layers.0.self_attn.q_proj.weight`. */
  target: string;
  a: Float32Array; // [r, in]
  b: Float32Array; // [out, r]
  r: number;
  inFeatures: number;
  outFeatures: number;
  scale: number; // alpha / r, or alpha / sqrt(r) with rslora
}
