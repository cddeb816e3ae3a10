/**
 * The lab's own small character models, as folders of the one model family: a Llama-style
 * config.json of a lab shape, a character-level tokenizer.json that @huggingface/tokenizers (and
 * Python's tokenizers) read, tokenizer_config.json, generation_config.json, a plain chat
 * template, and seeded initial weights. models/hf loads, samples, scores and trains such a
 * folder like any other; a run with `policies.init` null trains a fresh one (labCache.ts), and
 * the quick presets' warm starts are such folders (resources/warmstart).
 *
 * The shape: the lab shape's width, depth and heads, as many key/value heads as query heads (with
 * one shared KV head at the quick shape the warm-started model did not learn math-quick, with full
 * heads it did: docs/decisions/067); a SwiGLU MLP with the parameters of a GELU MLP of
 * `mlpRatio` x d (8d/3 at ratio 4, rounded to 8); an untied head unless `tiedEmbeddings`; RoPE;
 * `max_position_embeddings` = twice the shape's contextLength (POSITION_ROOM): RoPE has no position
 * table, so the number is only the limit past which a prompt is refused, and later team prompts
 * (solutions, a verdict) can outgrow the context the warm start saw.
 *
 * The tokenizer: the character vocabulary (../vocab.ts): the 12 special tokens (`<pad>` 0, `<bos>`
 * 1, `<eos>` 2, `<unk>` 3, `<user>`, `<obs>`, one marker per role) as special added tokens, then
 * newline and printable ASCII. A BPE model with no merges and no pre-tokenizer splits text into
 * single characters; `<unk>` stands for any other character (one per Unicode code point); the
 * Fuse decoder joins tokens without spaces. A special token's name in text is the special token,
 * as transformers matches added tokens. Runs recorded before issue 29 used the same ids.
 *
 * The chat template (LAB_CHAT_TEMPLATE): `<bos>`, the role marker, then the user turns' text; the
 * system message (the role's long instructions, workflows/chatPrompts.ts) is left out: a
 * 256-position character model has no room for it and reads its role from the marker. The role
 * comes from one variable beyond transformers' own, `lab_role`, which the lab passes with every
 * prompt (policies/hf.ts `hfPromptIds`, external/render.ts); without it (e.g. transformers'
 * apply_chat_template) there is no marker. With the generation prompt nothing is appended: the
 * completion follows the prompt text directly.
 *
 * Initial weights: N(0, initStd) (o_proj and down_proj, the residual projections, scaled by
 * 1/sqrt(2 layers)), RMSNorm gains 1; seeded, so a seed gives the same folder.
 * Tests: test/core/models/hf/labFolder.test.ts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readRegularTextFile } from '../../util/regularFile';
import { MODEL_FILE_LIMITS } from '../fileLimits';
import { mixSeed, normalArray } from '../random';
import { CHARACTERS, SPECIAL_TOKENS } from '../vocab';
import { parseHfConfig } from './config';
import { saveMergedModel } from './saveModel';
import type { HfModelConfig, TensorSource } from './types';
import { expectedWeights } from './weights';

/** The shape fields a lab folder is made from (models/config.ts ModelConfig; config/labShape.ts). */
export interface LabShape {
  dModel: number;
  nLayers: number;
  nHeads: number;
  contextLength: number;
  /** The lab MLP's width as a multiple of dModel (default 4): the SwiGLU width keeps its parameter count (twinIntermediateSize). */
  mlpRatio?: number;
  /** One matrix for the token embedding and the output head (tie_word_embeddings; default false). */
  tiedEmbeddings?: boolean;
  /** RMSNorm epsilon (the lab's default 1e-5). */
  normEps: number;
  /** Standard deviation of the initial weights (the lab's default 0.02). */
  initStd: number;
}

/** max_position_embeddings / the lab's contextLength (header). */
export const POSITION_ROOM = 2;

/** `<pad>`, `<bos>`, `<eos>`, `<unk>` ids (../vocab.ts order). */
export const LAB_SPECIAL_IDS = { pad: 0, bos: 1, eos: 2, unk: 3 } as const;

/** The plain chat template of a lab folder (header). */
export const LAB_CHAT_TEMPLATE =
  '{{ bos_token }}{% if lab_role is defined and lab_role %}<{{ lab_role }}>{% endif %}' +
  "{% for message in messages %}{% if message['role'] == 'user' %}{{ message['content'] }}{% endif %}{% endfor %}";

/** The template variable that carries the member's role (header). */
export const LAB_ROLE_VARIABLE = 'lab_role';

/** Whether `dir` is one of the lab's own folders: its chat template reads the role variable (LAB_CHAT_TEMPLATE). */
export function isLabFolder(dir: string): boolean {
  try {
    return readRegularTextFile(path.join(dir, 'chat_template.jinja'), MODEL_FILE_LIMITS['chat_template.jinja']).includes(LAB_ROLE_VARIABLE);
  } catch {
    return false;
  }
}

/** Every token of the character vocabulary, in id order. */
export function labTokens(): string[] {
  return [...SPECIAL_TOKENS, ...CHARACTERS];
}

/** tokenizer.json of the character vocabulary (header). */
export function labTokenizerJson(): Record<string, unknown> {
  const tokens = labTokens();
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: null,
    post_processor: null,
    decoder: { type: 'Fuse' },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: '<unk>',
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: Object.fromEntries(tokens.map((t, i) => [t, i])),
      merges: [],
    },
  };
}

/** tokenizer_config.json: the special tokens the template reads, the context as model_max_length. */
export function labTokenizerConfig(contextLength: number): Record<string, unknown> {
  return {
    tokenizer_class: 'PreTrainedTokenizerFast',
    bos_token: '<bos>',
    eos_token: '<eos>',
    unk_token: '<unk>',
    pad_token: '<pad>',
    additional_special_tokens: SPECIAL_TOKENS.slice(4),
    model_max_length: contextLength,
    clean_up_tokenization_spaces: false,
  };
}

/** SwiGLU width with a GELU MLP's 2 x ratio x d^2 parameters: 2 ratio d / 3 (8d/3 at ratio 4), rounded to a multiple of 8 (at least 8). */
export function twinIntermediateSize(dModel: number, mlpRatio = 4): number {
  return Math.max(8, 8 * Math.round((2 * mlpRatio * dModel) / 3 / 8));
}

/** config.json of a lab folder of `shape` (header). */
export function labHfConfigJson(shape: LabShape): Record<string, unknown> {
  const { dModel, nLayers, nHeads, contextLength, normEps, initStd } = shape;
  const mlpRatio = shape.mlpRatio ?? 4;
  if (!Number.isInteger(dModel / nHeads) || (dModel / nHeads) % 2 !== 0)
    throw new Error(`lab folder: dModel ${dModel} / nHeads ${nHeads} must be an even whole head width (RoPE)`);
  return {
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    vocab_size: SPECIAL_TOKENS.length + CHARACTERS.length,
    hidden_size: dModel,
    intermediate_size: twinIntermediateSize(dModel, mlpRatio),
    num_hidden_layers: nLayers,
    num_attention_heads: nHeads,
    num_key_value_heads: nHeads,
    head_dim: dModel / nHeads,
    hidden_act: 'silu',
    max_position_embeddings: POSITION_ROOM * contextLength,
    rms_norm_eps: normEps,
    rope_theta: 10000,
    rope_scaling: null,
    attention_bias: false,
    attention_dropout: 0,
    mlp_bias: false,
    tie_word_embeddings: shape.tiedEmbeddings ?? false,
    initializer_range: initStd,
    bos_token_id: LAB_SPECIAL_IDS.bos,
    eos_token_id: LAB_SPECIAL_IDS.eos,
    pad_token_id: LAB_SPECIAL_IDS.pad,
    torch_dtype: 'float32',
    use_cache: true,
  };
}

/** Seeded initial weights of a config, by checkpoint name, in the checkpoint's [out, in] layout. */
export function labInitialWeights(config: HfModelConfig, seed: number, initStd: number): Map<string, Float32Array> {
  const residual = 1 / Math.sqrt(2 * config.numLayers);
  const out = new Map<string, Float32Array>();
  expectedWeights(config).forEach(({ name, shape }, i) => {
    const n = shape.reduce((a, b) => a * b, 1);
    if (name.endsWith('norm.weight')) out.set(name, new Float32Array(n).fill(1));
    else {
      const std = initStd * (name.endsWith('o_proj.weight') || name.endsWith('down_proj.weight') ? residual : 1);
      out.set(name, normalArray(n, std, mixSeed(seed, i)));
    }
  });
  return out;
}

/** Arrays by name as a TensorSource in the checkpoint's layout (what saveMergedModel reads). */
function arraysSource(config: HfModelConfig, weights: ReadonlyMap<string, Float32Array>, origin: string): TensorSource {
  const shapes = new Map(expectedWeights(config).map((w) => [w.name, w.shape]));
  return {
    origin,
    names: () => [...weights.keys()],
    get: (name) => {
      const data = weights.get(name);
      const shape = shapes.get(name);
      if (!data || !shape) return undefined;
      return { name, dtype: 'F32', shape: [...shape], file: origin, read: () => data };
    },
  };
}

/** Writes every file of a lab folder except the weights into `dir` (an existing folder). */
export function writeLabFolderFiles(dir: string, shape: LabShape): HfModelConfig {
  const configJson = labHfConfigJson(shape);
  const write = (name: string, text: string) => fs.writeFileSync(path.join(dir, name), text);
  write('config.json', `${JSON.stringify(configJson, null, 2)}\n`);
  write(
    'generation_config.json',
    `${JSON.stringify({ bos_token_id: LAB_SPECIAL_IDS.bos, eos_token_id: LAB_SPECIAL_IDS.eos, pad_token_id: LAB_SPECIAL_IDS.pad }, null, 2)}\n`,
  );
  write('tokenizer.json', `${JSON.stringify(labTokenizerJson(), null, 2)}\n`);
  write('tokenizer_config.json', `${JSON.stringify(labTokenizerConfig(POSITION_ROOM * shape.contextLength), null, 2)}\n`);
  write('chat_template.jinja', `${LAB_CHAT_TEMPLATE}\n`);
  return parseHfConfig(configJson, path.join(dir, 'config.json'));
}

/**
 * Writes a complete lab folder at `dest` (absent or an empty folder; written atomically by
 * saveMergedModel): the files above and `weights` (default: seeded initial weights).
 */
export function writeLabFolder(dest: string, shape: LabShape, o: { seed: number; weights?: TensorSource }): { dir: string; config: HfModelConfig } {
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'srpo-lab-folder-'));
  try {
    const config = writeLabFolderFiles(staging, shape);
    const source = o.weights ?? arraysSource(config, labInitialWeights(config, o.seed, shape.initStd), `initial weights (seed ${o.seed})`);
    const saved = saveMergedModel(dest, { sourceDir: staging, config, source, dtype: 'F32' });
    return { dir: saved.dir, config };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}
