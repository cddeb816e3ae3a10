/**
 * config.json and generation_config.json of a Hugging Face model folder, normalised into
 * `HfModelConfig` / `HfGenerationConfig` (types.ts). Node: reads files with node:fs.
 *
 * Per-architecture defaults (what transformers' Qwen3Config / Qwen2Config / LlamaConfig assume
 * when a key is absent) live in one typed registry, `ARCHITECTURES`. RoPE is read from either
 * the older keys (`rope_theta` + `rope_scaling`, written by transformers 4.x and by the published
 * Qwen3 / Llama 3.2 folders) or the newer `rope_parameters` (transformers 5.x), with the same
 * precedence transformers 5 applies (`rope_scaling` over `rope_parameters`; a `rope_theta` inside
 * the dict over the top-level one); `rope.ts` turns it into inverse frequencies.
 *
 * Refused with an error naming the file and the key (rather than silently computing something
 * else): an unknown `model_type` or RoPE type, a missing size, heads that do not divide, a
 * feature transformers supports but this family does not (sliding-window attention, MLP biases,
 * an activation other than silu, partial rotary embeddings).
 *
 * Not here: weights (safetensorsFile.ts, weights.ts), the tokenizer (tokenizer.ts).
 * Tests: test/core/models/hf/config.test.ts (fixtures written by both transformers 4.57 and 5.18).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { jsonValueText, NOT_FINITE, readJsonFile } from '../../util/jsonFile';
import { MODEL_FILE_LIMITS } from '../fileLimits';
import {
  HF_ARCHITECTURES,
  ROPE_TYPES,
  type HfArchitecture,
  type HfGenerationConfig,
  type HfModelConfig,
  type HfWeightDtype,
  type RopeConfig,
  type RopeType,
} from './types';

export const CONFIG_FILE = 'config.json' as const;
export const GENERATION_CONFIG_FILE = 'generation_config.json' as const;

type Json = Record<string, unknown>;

/** What an architecture's transformers config class assumes for absent keys, and what it fixes. */
interface ArchitectureDefaults {
  /** q/k/v biases: Qwen2 always has them; the others follow `attention_bias`. */
  attentionBias: (json: Json, field: Fields) => boolean;
  /** Per-head q/k RMSNorm before RoPE (Qwen3). */
  qkNorm: boolean;
  /** head_dim when the key is absent (Qwen3Config defaults to 128; the others derive hidden / heads). */
  headDim: (hidden: number, heads: number) => number;
  rmsNormEps: number;
  maxPositions: number;
  bosTokenId: number | null;
  eosTokenId: number | null;
  /** Keys whose non-default values the family does not implement: key -> the only accepted value. */
  unsupported: Record<string, unknown>;
}

const optionalAttentionBias = (json: Json, field: Fields): boolean => field.bool(json, 'attention_bias', false);

const ARCHITECTURES = {
  // transformers/models/qwen3/configuration_qwen3.py, modeling_qwen3.py
  qwen3: {
    attentionBias: optionalAttentionBias,
    qkNorm: true,
    headDim: () => 128,
    rmsNormEps: 1e-6,
    maxPositions: 32768,
    bosTokenId: null,
    eosTokenId: null,
    unsupported: { use_sliding_window: false, hidden_act: 'silu' },
  },
  // transformers/models/qwen2/configuration_qwen2.py; modeling_qwen2.py hard-codes bias=True on q/k/v.
  qwen2: {
    attentionBias: () => true,
    qkNorm: false,
    headDim: (hidden, heads) => Math.floor(hidden / heads),
    rmsNormEps: 1e-6,
    maxPositions: 32768,
    bosTokenId: null,
    eosTokenId: null,
    unsupported: { use_sliding_window: false, hidden_act: 'silu' },
  },
  // transformers/models/llama/configuration_llama.py
  llama: {
    attentionBias: optionalAttentionBias,
    qkNorm: false,
    headDim: (hidden, heads) => Math.floor(hidden / heads),
    rmsNormEps: 1e-6,
    maxPositions: 2048,
    bosTokenId: 1,
    eosTokenId: 2,
    unsupported: { mlp_bias: false, hidden_act: 'silu' },
  },
} satisfies Record<HfArchitecture, ArchitectureDefaults>;

/** `torch_dtype` / `dtype` strings -> safetensors dtypes (informational: each tensor carries its own). */
const TORCH_DTYPES: Record<string, HfWeightDtype> = { float32: 'F32', bfloat16: 'BF16', float16: 'F16' };

/** Field readers that name the file and the key in every error. */
class Fields {
  constructor(readonly file: string) {}

  fail(key: string, msg: string): never {
    throw new Error(`${this.file}: field "${key}" ${msg}`);
  }

  private present(json: Json, key: string): boolean {
    return json[key] !== undefined && json[key] !== null;
  }

  number(json: Json, key: string, fallback?: number, prefix = ''): number {
    if (!this.present(json, key)) {
      if (fallback === undefined) this.fail(prefix + key, 'is missing');
      return fallback;
    }
    const v = json[key];
    if (typeof v !== 'number') this.fail(prefix + key, `must be a number, got ${JSON.stringify(v)}`);
    if (!Number.isFinite(v)) this.fail(prefix + key, NOT_FINITE);
    return v;
  }

  positiveNumber(json: Json, key: string, fallback?: number, prefix = ''): number {
    const v = this.number(json, key, fallback, prefix);
    if (!(v > 0)) this.fail(prefix + key, `must be > 0, got ${v}`);
    return v;
  }

  count(json: Json, key: string, fallback?: number): number {
    const v = this.number(json, key, fallback);
    if (!Number.isInteger(v) || v < 1) this.fail(key, `must be a positive integer, got ${v}`);
    return v;
  }

  bool(json: Json, key: string, fallback: boolean): boolean {
    if (!this.present(json, key)) return fallback;
    const v = json[key];
    if (typeof v !== 'boolean') this.fail(key, `must be true or false, got ${JSON.stringify(v)}`);
    return v;
  }

  /** A token id, a list of them, or null/absent. */
  ids(json: Json, key: string, fallback: number | null): number[] {
    const v = this.present(json, key) ? json[key] : fallback;
    if (v === null) return [];
    const list = Array.isArray(v) ? v : [v];
    if (!list.every((x) => Number.isInteger(x) && (x as number) >= 0)) this.fail(key, `must be a token id or a list of them, got ${jsonValueText(v)}`);
    return list as number[];
  }
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The RoPE keys, older or newer, normalised. */
function parseRope(json: Json, field: Fields, maxPositions: number): RopeConfig {
  // transformers 5 (RotaryEmbeddingConfigMixin.convert_rope_params_to_dict): rope_scaling wins over
  // rope_parameters; a rope_theta inside the dict wins over the top-level key; default theta 10000.
  const scaling = json.rope_scaling ?? null;
  const params = json.rope_parameters ?? null;
  const key = isObject(scaling) ? 'rope_scaling' : 'rope_parameters';
  const dict = isObject(scaling) ? scaling : params;
  if (dict !== null && !isObject(dict)) field.fail(key, `must be an object or null, got ${JSON.stringify(dict)}`);
  const d: Json = dict ?? {};
  const sub = `${key}.`;
  const theta = isObject(d) && d.rope_theta != null ? field.positiveNumber(d, 'rope_theta', undefined, sub) : field.positiveNumber(json, 'rope_theta', 10000);
  const typeKey = d.rope_type != null ? 'rope_type' : 'type';
  const rawType = d[typeKey] ?? 'default';
  if (typeof rawType !== 'string' || !(ROPE_TYPES as readonly string[]).includes(rawType)) {
    field.fail(`${sub}${typeKey}`, `names an unsupported RoPE type ${JSON.stringify(rawType)} (supported: ${ROPE_TYPES.join(', ')})`);
  }
  const partial = d.partial_rotary_factor ?? json.partial_rotary_factor;
  if (partial != null && partial !== 1) field.fail('partial_rotary_factor', `is ${JSON.stringify(partial)}; only full rotary embeddings (1.0) are implemented`);
  // transformers 5 standardize_rope_params: a top-level original_max_position_embeddings wins, else the dict's, else max_position_embeddings.
  const originalMax = (): number =>
    json.original_max_position_embeddings != null
      ? field.positiveNumber(json, 'original_max_position_embeddings')
      : field.positiveNumber(d, 'original_max_position_embeddings', maxPositions, sub);
  return ROPE_PARSERS[rawType as RopeType]({ d, field, sub, theta, maxPositions, originalMax });
}

interface RopeParseInput {
  d: Json;
  field: Fields;
  sub: string;
  theta: number;
  maxPositions: number;
  originalMax: () => number;
}

/** Each RoPE type's keys (transformers' modeling_rope_utils.py `_compute_*_parameters`). */
const ROPE_PARSERS = {
  default: ({ theta }) => ({ type: 'default', theta }),
  linear: ({ d, field, sub, theta }) => ({ type: 'linear', theta, factor: field.positiveNumber(d, 'factor', undefined, sub) }),
  llama3: ({ d, field, sub, theta, originalMax }) => {
    const rope: RopeConfig = {
      type: 'llama3',
      theta,
      factor: field.positiveNumber(d, 'factor', undefined, sub),
      lowFreqFactor: field.positiveNumber(d, 'low_freq_factor', undefined, sub),
      highFreqFactor: field.positiveNumber(d, 'high_freq_factor', undefined, sub),
      originalMaxPositions: originalMax(),
    };
    if (rope.highFreqFactor! <= rope.lowFreqFactor!)
      field.fail(`${sub}high_freq_factor`, `(${rope.highFreqFactor}) must exceed low_freq_factor (${rope.lowFreqFactor})`);
    return rope;
  },
  yarn: ({ d, field, sub, theta, maxPositions, originalMax }) => {
    const originalMaxPositions = originalMax();
    const optional = (k: string): number | undefined => (d[k] == null ? undefined : field.number(d, k, undefined, sub));
    const truncate = d.truncate == null ? true : d.truncate;
    if (typeof truncate !== 'boolean') field.fail(`${sub}truncate`, `must be true or false, got ${JSON.stringify(d.truncate)}`);
    return {
      type: 'yarn',
      theta,
      // transformers 5: an absent factor is max_position_embeddings / original_max_position_embeddings.
      factor: d.factor == null ? maxPositions / originalMaxPositions : field.positiveNumber(d, 'factor', undefined, sub),
      originalMaxPositions,
      betaFast: optional('beta_fast'),
      betaSlow: optional('beta_slow'),
      attentionFactor: optional('attention_factor'),
      mscale: optional('mscale'),
      mscaleAllDim: optional('mscale_all_dim'),
      truncate: truncate as boolean,
    };
  },
} satisfies Record<RopeType, (input: RopeParseInput) => RopeConfig>;

/** Validates and normalises a parsed config.json; `file` goes into every error. */
export function parseHfConfig(json: unknown, file: string): HfModelConfig {
  const field = new Fields(file);
  if (!isObject(json)) throw new Error(`${file}: not a JSON object`);
  const modelType = json.model_type;
  if (typeof modelType !== 'string' || !(HF_ARCHITECTURES as readonly string[]).includes(modelType)) {
    field.fail('model_type', `is ${JSON.stringify(modelType)}; supported architectures: ${HF_ARCHITECTURES.join(', ')}`);
  }
  const architecture = modelType as HfArchitecture;
  const arch: ArchitectureDefaults = ARCHITECTURES[architecture];
  for (const [key, only] of Object.entries(arch.unsupported)) {
    if (json[key] != null && json[key] !== only)
      field.fail(key, `is ${JSON.stringify(json[key])}; the ${architecture} family here only implements ${JSON.stringify(only)}`);
  }
  // transformers 5 spells sliding-window layers out in `layer_types`; only full attention is implemented.
  const layerTypes = json.layer_types;
  if (layerTypes != null && (!Array.isArray(layerTypes) || layerTypes.some((t) => t !== 'full_attention'))) {
    field.fail('layer_types', `is ${JSON.stringify(layerTypes)}; only "full_attention" layers are implemented`);
  }
  const hiddenSize = field.count(json, 'hidden_size');
  const numHeads = field.count(json, 'num_attention_heads');
  const numKvHeads = field.count(json, 'num_key_value_heads', numHeads);
  if (numHeads % numKvHeads !== 0) field.fail('num_key_value_heads', `(${numKvHeads}) must divide num_attention_heads (${numHeads})`);
  const headDim = field.count(json, 'head_dim', arch.headDim(hiddenSize, numHeads));
  if (headDim % 2 !== 0) field.fail('head_dim', `(${headDim}) must be even for rotary embeddings`);
  const maxPositions = field.count(json, 'max_position_embeddings', arch.maxPositions);
  const dtypeKey = json.dtype != null ? 'dtype' : 'torch_dtype';
  const dtypeName = json[dtypeKey];
  if (dtypeName != null && typeof dtypeName !== 'string') field.fail(dtypeKey, `must be a string, got ${JSON.stringify(dtypeName)}`);
  const bos = field.ids(json, 'bos_token_id', arch.bosTokenId);
  return {
    architecture,
    vocabSize: field.count(json, 'vocab_size'),
    hiddenSize,
    intermediateSize: field.count(json, 'intermediate_size'),
    numLayers: field.count(json, 'num_hidden_layers'),
    numHeads,
    numKvHeads,
    headDim,
    rmsNormEps: field.positiveNumber(json, 'rms_norm_eps', arch.rmsNormEps),
    rope: parseRope(json, field, maxPositions),
    maxPositions,
    tieWordEmbeddings: field.bool(json, 'tie_word_embeddings', false),
    attentionBias: arch.attentionBias(json, field),
    qkNorm: arch.qkNorm,
    dtype: typeof dtypeName === 'string' ? (TORCH_DTYPES[dtypeName] ?? null) : null,
    bosTokenId: bos[0] ?? null,
    eosTokenIds: field.ids(json, 'eos_token_id', arch.eosTokenId),
  };
}

/** Reads `dir/config.json`. */
export function readHfConfig(dir: string): HfModelConfig {
  const file = path.join(dir, CONFIG_FILE);
  return parseHfConfig(readJsonFile(file, MODEL_FILE_LIMITS[CONFIG_FILE]), file);
}

/** Normalises a parsed generation_config.json; stop ids are its `eos_token_id` then config.json's, deduplicated. */
export function parseGenerationConfig(json: unknown, file: string, config: HfModelConfig): HfGenerationConfig {
  if (!isObject(json)) throw new Error(`${file}: not a JSON object`);
  const field = new Fields(file);
  const stopIds = [...new Set([...field.ids(json, 'eos_token_id', null), ...config.eosTokenIds])];
  const out: HfGenerationConfig = { stopIds };
  if (json.do_sample != null) out.doSample = field.bool(json, 'do_sample', false);
  if (json.temperature != null) out.temperature = field.number(json, 'temperature');
  if (json.top_p != null) out.topP = field.number(json, 'top_p');
  if (json.top_k != null) out.topK = field.number(json, 'top_k');
  if (out.topK !== undefined && (!Number.isInteger(out.topK) || out.topK < 0)) field.fail('top_k', `must be a non-negative integer, got ${out.topK}`);
  if (out.topP !== undefined && !(out.topP > 0 && out.topP <= 1)) field.fail('top_p', `must be in (0, 1], got ${out.topP}`);
  if (out.temperature !== undefined && out.temperature < 0) field.fail('temperature', `must be >= 0, got ${out.temperature}`);
  return out;
}

/** Reads `dir/generation_config.json` if present; without it the stop ids are config.json's eos ids. */
export function readGenerationConfig(dir: string, config: HfModelConfig): HfGenerationConfig {
  const file = path.join(dir, GENERATION_CONFIG_FILE);
  if (!fs.existsSync(file)) return { stopIds: [...config.eosTokenIds] };
  return parseGenerationConfig(readJsonFile(file, MODEL_FILE_LIMITS[GENERATION_CONFIG_FILE]), file, config);
}
