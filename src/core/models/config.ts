/**
 * The lab's own model shapes: one typed, commented, validated object, and named size presets in a
 * typed registry. A run with `policies.init` null trains a lab folder of such a shape
 * (config/labShape.ts, models/hf/labFolder.ts). `modelConfig(preset, overrides)` and
 * `resolveModelConfig(input)` are the ways in; both throw an error naming the field, the value
 * and what is allowed (heads must divide the width, the MLP width must be a whole number, ...).
 *
 * Decision: untied embeddings by default (`tiedEmbeddings: false`). With a 108-symbol character
 * vocabulary the input and output matrices are tiny (V x d = 14k parameters at d128), so tying
 * saves nothing worth having, and untied input and output embeddings can specialise.
 *
 * Not here: the weights (models/hf) and the run/trainer configuration.
 * Tests: test/core/models/config.test.ts.
 */
import { z } from 'zod';
import { formatSchemaError } from '../util/schemaError';
import { CHAR_VOCAB_SIZE } from './vocab';

export const modelConfigSchema = z
  .object({
    /** Number of token ids V. The char tokenizer has 108; >= 2. */
    vocabSize: z.number().int().min(2),
    /** Longest sequence (prompt + completion) the shape is meant for, in tokens; its folder allows twice this (labFolder.ts POSITION_ROOM). 8..8192. */
    contextLength: z.number().int().min(8).max(8192),
    /** Residual width d. 16..4096, a multiple of nHeads. */
    dModel: z.number().int().min(16).max(4096),
    /** Transformer blocks. 1..64. */
    nLayers: z.number().int().min(1).max(64),
    /** Attention heads; each has width dModel / nHeads (32..128 is typical). */
    nHeads: z.number().int().min(1).max(64),
    /** MLP size as a multiple of dModel (GPT-2: 4): the SwiGLU width has the parameters of a GELU MLP this wide. 1..8; mlpRatio * dModel must be an integer. */
    mlpRatio: z.number().min(1).max(8).default(4),
    /** Share the token-embedding matrix with the output head (logits = h @ E^T). Default false: see the file header. */
    tiedEmbeddings: z.boolean().default(false),
    /** epsilon of RMSNorm, added to the mean square. (0, 1e-2], default 1e-5. */
    normEps: z.number().gt(0).max(1e-2).default(1e-5),
    /** Standard deviation of the normal init of every matrix (GPT-2: 0.02); residual output projections are further scaled by 1/sqrt(2 nLayers). */
    initStd: z.number().gt(0).max(1).default(0.02),
    /** Seed of the deterministic parameter init (uint32); a run's own seed replaces it (labCache.ts). */
    seed: z.number().int().min(0).max(0xffffffff).default(1234),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.dModel % c.nHeads !== 0) {
      ctx.addIssue({ code: 'custom', path: ['nHeads'], message: `nHeads (${c.nHeads}) must divide dModel (${c.dModel})` });
    }
    if (!Number.isInteger(c.mlpRatio * c.dModel)) {
      ctx.addIssue({ code: 'custom', path: ['mlpRatio'], message: `mlpRatio * dModel (${c.mlpRatio * c.dModel}) must be an integer` });
    }
  });

/** A complete, validated model configuration. */
export type ModelConfig = z.output<typeof modelConfigSchema>;
export type ModelConfigInput = z.input<typeof modelConfigSchema>;

/** Validate and fill defaults; throws `Error("model config: field ...")`. */
export function resolveModelConfig(input: unknown): ModelConfig {
  const parsed = modelConfigSchema.safeParse(input ?? {});
  if (!parsed.success) throw new Error(formatSchemaError('model config', parsed.error, input));
  return Object.freeze(parsed.data);
}

export const MODEL_PRESET_NAMES = ['tiny', 'small', 'base', 'large'] as const;
export type ModelPresetName = (typeof MODEL_PRESET_NAMES)[number];

interface ModelPreset {
  description: string;
  config: ModelConfigInput;
}

/** Named sizes. Parameter counts are of the lab folder of each (char vocabulary, untied; hf/memory.ts hfParameterCount). */
export const MODEL_PRESETS = {
  tiny: {
    description: 'd128 x 4 layers, 4 heads, ctx 256: ~0.82M params; CPU/wasm-friendly (tests, demos)',
    config: { vocabSize: CHAR_VOCAB_SIZE, contextLength: 256, dModel: 128, nLayers: 4, nHeads: 4 },
  },
  small: {
    description: 'd256 x 6 layers, 8 heads, ctx 512: ~4.8M params; slow but possible on CPU',
    config: { vocabSize: CHAR_VOCAB_SIZE, contextLength: 512, dModel: 256, nLayers: 6, nHeads: 8 },
  },
  base: {
    description: 'd512 x 8 layers, 8 heads, ctx 1024: ~25M params; meant for a GPU',
    config: { vocabSize: CHAR_VOCAB_SIZE, contextLength: 1024, dModel: 512, nLayers: 8, nHeads: 8 },
  },
  large: {
    description: 'd768 x 12 layers, 12 heads, ctx 1024: ~85M params; meant for a GPU',
    config: { vocabSize: CHAR_VOCAB_SIZE, contextLength: 1024, dModel: 768, nLayers: 12, nHeads: 12 },
  },
} satisfies Record<ModelPresetName, ModelPreset>;

/** A preset's config with optional overrides, validated. Unknown preset: error listing the valid names. */
export function modelConfig(preset: string, overrides: Partial<ModelConfigInput> = {}): ModelConfig {
  if (!Object.hasOwn(MODEL_PRESETS, preset)) {
    throw new Error(`unknown model preset "${preset}"; valid names: ${MODEL_PRESET_NAMES.join(', ')}`);
  }
  return resolveModelConfig({ ...MODEL_PRESETS[preset as ModelPresetName].config, ...overrides });
}
