/**
 * The tensors an architecture needs, by transformers' names and shapes, and the check of a
 * checkpoint against them before anything is loaded: every needed tensor present with its shape,
 * nothing unknown. Linear weights are [out, in] as nn.Linear stores them.
 *
 * Tolerated and ignored: `lm_head.weight` in a tied checkpoint (some writers save the tied copy;
 * it must have the embedding's shape) and rotary `inv_freq` buffers (older writers saved them).
 * Every problem is listed in one error, each line naming the tensor, the expected and found
 * shape and the file.
 *
 * Before that list is built (its length grows with num_hidden_layers), `checkConfigScale` holds
 * the layer count against the layer indices the weights hold, so `num_hidden_layers: 1000000` is
 * refused at once, not after building a million layers' names. Every other size of config.json
 * (vocab_size, hidden_size, head_dim, ...) only enters the expected shapes, which are numbers:
 * a `head_dim` of a billion is a shape mismatch here, before model.ts builds anything sized by it.
 *
 * Pure (reads only headers through the TensorSource). Tests: test/core/models/hf/weights.test.ts.
 */
import type { HfArchitecture, HfModelConfig, TensorSource } from './types';

export interface WeightSpec {
  name: string;
  shape: number[];
}

/** Which attention linears carry a bias, per architecture (transformers' modeling files). */
interface BiasLayout {
  qkv: (c: HfModelConfig) => boolean;
  o: (c: HfModelConfig) => boolean;
}
const ATTENTION_BIASES = {
  // modeling_qwen2.py: q/k/v always biased, o_proj never.
  qwen2: { qkv: () => true, o: () => false },
  // modeling_qwen3.py and modeling_llama.py: q/k/v/o all follow `attention_bias`.
  qwen3: { qkv: (c) => c.attentionBias, o: (c) => c.attentionBias },
  llama: { qkv: (c) => c.attentionBias, o: (c) => c.attentionBias },
} satisfies Record<HfArchitecture, BiasLayout>;

/** Whether q/k/v and o_proj carry biases in this config. */
export function attentionBiases(config: HfModelConfig): { qkv: boolean; o: boolean } {
  const layout = ATTENTION_BIASES[config.architecture];
  return { qkv: layout.qkv(config), o: layout.o(config) };
}

/** Every tensor of the checkpoint, in transformers' order (embedding, layers, final norm, head). */
export function expectedWeights(config: HfModelConfig): WeightSpec[] {
  const d = config.hiddenSize;
  const q = config.numHeads * config.headDim;
  const kv = config.numKvHeads * config.headDim;
  const ff = config.intermediateSize;
  const bias = attentionBiases(config);
  const out: WeightSpec[] = [{ name: 'model.embed_tokens.weight', shape: [config.vocabSize, d] }];
  for (let i = 0; i < config.numLayers; i++) {
    const p = `model.layers.${i}.`;
    out.push({ name: `${p}input_layernorm.weight`, shape: [d] });
    out.push({ name: `${p}self_attn.q_proj.weight`, shape: [q, d] });
    out.push({ name: `${p}self_attn.k_proj.weight`, shape: [kv, d] });
    out.push({ name: `${p}self_attn.v_proj.weight`, shape: [kv, d] });
    if (bias.qkv) {
      out.push({ name: `${p}self_attn.q_proj.bias`, shape: [q] });
      out.push({ name: `${p}self_attn.k_proj.bias`, shape: [kv] });
      out.push({ name: `${p}self_attn.v_proj.bias`, shape: [kv] });
    }
    if (config.qkNorm) {
      out.push({ name: `${p}self_attn.q_norm.weight`, shape: [config.headDim] });
      out.push({ name: `${p}self_attn.k_norm.weight`, shape: [config.headDim] });
    }
    out.push({ name: `${p}self_attn.o_proj.weight`, shape: [d, q] });
    if (bias.o) out.push({ name: `${p}self_attn.o_proj.bias`, shape: [d] });
    out.push({ name: `${p}post_attention_layernorm.weight`, shape: [d] });
    out.push({ name: `${p}mlp.gate_proj.weight`, shape: [ff, d] });
    out.push({ name: `${p}mlp.up_proj.weight`, shape: [ff, d] });
    out.push({ name: `${p}mlp.down_proj.weight`, shape: [d, ff] });
  }
  out.push({ name: 'model.norm.weight', shape: [d] });
  if (!config.tieWordEmbeddings) out.push({ name: 'lm_head.weight', shape: [config.vocabSize, d] });
  return out;
}

const LAYER_INDEX = /^model\.layers\.(\d+)\./;

/** The layer indices the checkpoint holds, in words: "layers 0..27", "no layers", "3 layers (0, 1, 5)". */
function layersHeld(indices: number[]): string {
  if (indices.length === 0) return 'no layers';
  const max = indices[indices.length - 1];
  if (max === indices.length - 1) return indices.length === 1 ? 'layer 0 only' : `layers 0..${max}`;
  const shown = indices.slice(0, 8).join(', ');
  return `${indices.length} layers (${shown}${indices.length > 8 ? ', ...' : ''})`;
}

/** config.json's layer count against the layer indices of the checkpoint's tensor names (header); one error naming both. */
export function checkConfigScale(config: HfModelConfig, source: TensorSource): void {
  const indices = new Set<number>();
  for (const name of source.names()) {
    const m = LAYER_INDEX.exec(name);
    if (m) indices.add(Number(m[1]));
  }
  const sorted = [...indices].sort((a, b) => a - b);
  const n = config.numLayers;
  if (sorted.length !== n || sorted[n - 1] !== n - 1) {
    throw new Error(`${source.origin}: config.json says ${n} layer${n === 1 ? '' : 's'} (num_hidden_layers) but the weights hold ${layersHeld(sorted)}`);
  }
}

const sameShape = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);
const fmt = (shape: readonly number[]): string => `[${shape.join(', ')}]`;

/** Tensors a checkpoint may hold beyond the expected ones, ignored when they pass `ok`. */
const TOLERATED: { test: (name: string, config: HfModelConfig) => boolean; ok: (shape: number[], config: HfModelConfig) => boolean }[] = [
  { test: (n, c) => n === 'lm_head.weight' && c.tieWordEmbeddings, ok: (s, c) => sameShape(s, [c.vocabSize, c.hiddenSize]) },
  { test: (n) => /(^|\.)rotary_emb\.inv_freq$/.test(n), ok: () => true },
];

/** Throws one error listing every missing, misshapen or unknown tensor of `source` for `config`. */
export function checkWeights(config: HfModelConfig, source: TensorSource): void {
  checkConfigScale(config, source);
  // Missing and unknown tensors first: they say "another architecture" faster than shapes do.
  const missing: string[] = [];
  const unknown: string[] = [];
  const misshapen: string[] = [];
  const expected = expectedWeights(config);
  const known = new Set(expected.map((w) => w.name));
  for (const { name, shape } of expected) {
    const entry = source.get(name);
    if (!entry) missing.push(`tensor "${name}" is missing (expected shape ${fmt(shape)})`);
    else if (!sameShape(entry.shape, shape)) misshapen.push(`${entry.file}: tensor "${name}" has shape ${fmt(entry.shape)}, expected ${fmt(shape)}`);
  }
  for (const name of source.names()) {
    if (known.has(name)) continue;
    const entry = source.get(name)!;
    const rule = TOLERATED.find((t) => t.test(name, config));
    if (rule && rule.ok(entry.shape, config)) continue;
    if (rule) misshapen.push(`${entry.file}: tensor "${name}" has shape ${fmt(entry.shape)}, expected ${fmt([config.vocabSize, config.hiddenSize])}`);
    else unknown.push(`${entry.file}: tensor "${name}" (shape ${fmt(entry.shape)}) is not part of a ${config.architecture} model with this config.json`);
  }
  const problems = [...missing, ...unknown, ...misshapen];
  if (problems.length === 0) return;
  const shown = problems.slice(0, 12);
  const more = problems.length > shown.length ? `\n  ... and ${problems.length - shown.length} more` : '';
  throw new Error(`${source.origin}: the weights do not fit config.json (${config.architecture}):\n  ${shown.join('\n  ')}${more}`);
}
