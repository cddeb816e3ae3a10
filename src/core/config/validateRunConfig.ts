/**
 * The cross-field rules of a run config: what the schema (runConfig.ts) cannot see field by field
 * and what would otherwise pass as "valid" and fail the moment the engine starts. Checked where
 * a config is resolved for a new run (the API's validateConfig / createRun, `lab train`). A
 * registry: each rule names the fields it reads and returns field errors (path + a sentence).
 *
 * - `paths`: `policies.init` (and the dataset slots) exist and are loadable (initPath.ts, reused).
 * - `heads`: the lab model built from `policies.model` + `policies.modelOverrides` (when
 *   `policies.init` is null) is valid: nHeads divides dModel, mlpRatio x dModel is whole
 *   (models/config.ts owns those checks), and its head width is even (RoPE rotates pairs).
 *   Skipped when `policies.init` is set: the folder's config.json decides the shape.
 * - `initShape`: a run that starts from one of the lab's own folders (`policies.init`, e.g. a
 *   preset's warm start) takes its shape from it, so an override that disagrees with its
 *   config.json is refused (it would be recorded in the run's config, its diff and its reports, yet
 *   ignored); overrides equal to the folder's (the presets' QUICK_MODEL on their warm starts) pass.
 *   Another model's folder (Qwen3, Llama) is not compared: its shape wins and
 *   `giveWayToModelFolder` clears the overrides, which there are a preset's, not the user's.
 * - `promptRoom`: the first prompts plus `rollout.maxNewTokens` fit in the model's context
 *   (promptRoom.ts: the context from config.json or the preset, the prompts rendered as the
 *   policy reads them), with the numbers and the fields to change in the message.
 *
 * Not here: one field's own range (the zod schema), reading the weights.
 * Tests: test/core/config/crossField.test.ts.
 */
import * as path from 'node:path';
import { MODEL_PRESET_NAMES, MODEL_PRESETS, modelConfigSchema, type ModelPresetName } from '../models/config';
import { MODEL_FILE_LIMITS } from '../models/fileLimits';
import { isLabFolder, labHfConfigJson } from '../models/hf/labFolder';
import { readJsonFile } from '../util/jsonFile';
import { isHfModelFolder, labRoot, runConfigPathErrors } from './initPath';
import { labShapeOf } from './labShape';
import { firstPromptLengths, modelContext } from './promptRoom';
import type { RunConfig } from './runConfig';

export interface ConfigProblem {
  /** Dotted path of the field to change. */
  path: string;
  message: string;
}

interface CrossFieldRule {
  /** What the rule checks, for a reader of this registry. */
  what: string;
  check(config: RunConfig, baseDir: string): ConfigProblem[];
}

/** The config.json field each lab shape override decides (models/hf/labFolder.ts labHfConfigJson). */
const LAB_SHAPE_FIELDS = {
  dModel: 'hidden_size',
  nLayers: 'num_hidden_layers',
  nHeads: 'num_attention_heads',
  contextLength: 'max_position_embeddings',
  mlpRatio: 'intermediate_size',
} as const;

/** A lab folder's config.json (the character vocabulary and the lab's chat template), or null for any other folder. */
function labFolderConfigJson(dir: string): Record<string, unknown> | null {
  if (!isHfModelFolder(dir) || !isLabFolder(dir)) return null;
  return readJsonFile(path.join(dir, 'config.json'), MODEL_FILE_LIMITS['config.json']) as Record<string, unknown>;
}

export const CROSS_FIELD_RULES = {
  paths: {
    what: 'policies.init and the dataset slots name files the engine can load',
    check: (c, baseDir) => runConfigPathErrors(c, baseDir),
  },
  heads: {
    what: 'the model from policies.model + modelOverrides is buildable (nHeads divides dModel, whole MLP width)',
    check: (c) => {
      if (c.policies.init !== null || c.policies.kind !== 'model') return [];
      if (!(MODEL_PRESET_NAMES as readonly string[]).includes(c.policies.model)) return [];
      const overrides = c.policies.modelOverrides as Record<string, unknown>;
      const input = { ...MODEL_PRESETS[c.policies.model as ModelPresetName].config, ...overrides };
      const r = modelConfigSchema.safeParse(input);
      if (r.success) {
        const width = r.data.dModel / r.data.nHeads;
        if (width % 2 === 0) return [];
        const field = 'nHeads' in overrides ? 'policies.modelOverrides.nHeads' : 'policies.modelOverrides';
        return [{ path: field, message: `the head width dModel / nHeads = ${width} must be even (RoPE rotates pairs of channels): change dModel or nHeads` }];
      }
      return r.error.issues.map((i) => {
        const field = String(i.path[0] ?? '');
        const own = field in overrides;
        return {
          path: own ? `policies.modelOverrides.${field}` : 'policies.modelOverrides',
          message: own ? i.message : `${i.message} (model "${c.policies.model}" with these overrides)`,
        };
      });
    },
  },
  initShape: {
    what: 'a lab folder in policies.init decides the shape: modelOverrides must agree with its config.json',
    check: (c, baseDir) => {
      const overrides = Object.keys(c.policies.modelOverrides as Record<string, unknown>);
      if (c.policies.init === null || overrides.length === 0 || c.policies.kind !== 'model') return [];
      let folder: Record<string, unknown> | null;
      let wanted: Record<string, unknown>;
      try {
        folder = labFolderConfigJson(path.resolve(baseDir, c.policies.init));
        wanted = labHfConfigJson(labShapeOf(c));
      } catch {
        return []; // unreadable, or a shape the `heads` rule refuses
      }
      if (folder === null) return []; // another model's folder: its shape wins, giveWayToModelFolder clears the overrides
      const out: ConfigProblem[] = [];
      for (const key of overrides) {
        const field = LAB_SHAPE_FIELDS[key as keyof typeof LAB_SHAPE_FIELDS];
        if (!field || folder[field] === wanted[field]) continue;
        const value = (c.policies.modelOverrides as Record<string, unknown>)[key];
        out.push({
          path: `policies.modelOverrides.${key}`,
          message:
            `${key} = ${JSON.stringify(value)} disagrees with the lab folder in policies.init ` +
            `(its config.json has ${field} = ${JSON.stringify(folder[field] ?? null)}, where this shape needs ${JSON.stringify(wanted[field])}): ` +
            `a run that starts from policies.init takes its shape from the folder. ` +
            `Remove the override, or set policies.init to null to train this shape from scratch.`,
        });
      }
      return out;
    },
  },
  promptRoom: {
    what: 'the first prompts plus rollout.maxNewTokens fit in the model context (contextLength / max_position_embeddings)',
    check: (c, baseDir) => {
      if (c.policies.kind !== 'model') return [];
      const context = modelContext(c, baseDir);
      if (context === null) return [];
      const maxNew = c.rollout.maxNewTokens;
      let lengths: ReturnType<typeof firstPromptLengths>;
      try {
        lengths = firstPromptLengths(c, context);
      } catch {
        lengths = []; // a tokenizer or template the loader refuses: it says so, naming the file
      }
      const longest = lengths.reduce<(typeof lengths)[number] | null>((a, b) => (a === null || b.tokens > a.tokens ? b : a), null);
      const fixes = (room: number) =>
        `lower rollout.maxNewTokens to ${room > 0 ? `at most ${room}` : 'fit'}, raise the context (${context.source}), or use shorter prompts`;
      if (longest && longest.tokens + maxNew > context.positions) {
        const room = context.positions - longest.tokens;
        return [
          {
            path: 'rollout.maxNewTokens',
            message:
              `the first ${longest.role} prompt of ${longest.task} (${longest.split} split) is ${longest.tokens} tokens; with rollout.maxNewTokens ${maxNew} ` +
              `it needs ${longest.tokens + maxNew} positions, more than the model's context of ${context.positions}: ${fixes(room)}`,
          },
        ];
      }
      // No built-in prompt to measure (dataset files, the external workflow): at least one prompt token must fit.
      if (maxNew + 2 > context.positions) {
        return [
          {
            path: 'rollout.maxNewTokens',
            message: `rollout.maxNewTokens ${maxNew} leaves no room for a prompt in the model's context of ${context.positions} positions: ${fixes(context.positions - 2)}`,
          },
        ];
      }
      return [];
    },
  },
} satisfies Record<string, CrossFieldRule>;

/** Every cross-field problem of a resolved config, rule by rule (empty: it can run). */
export function crossFieldProblems(config: RunConfig, baseDir = labRoot()): ConfigProblem[] {
  return Object.values(CROSS_FIELD_RULES).flatMap((rule: CrossFieldRule) => rule.check(config, baseDir));
}

/** Throws `run config: field "PATH": MESSAGE` (every problem, one per line after the first) when any rule fails. */
export function assertCrossFieldRules(config: RunConfig, baseDir = labRoot()): void {
  const problems = crossFieldProblems(config, baseDir);
  if (problems.length) throw new Error(`run config: ${problems.map((p) => `field "${p.path}": ${p.message}`).join('; ')}`);
}

/**
 * A run whose `policies.init` names another model's folder (Qwen3, Llama: not one of the lab's
 * own, which the `initShape` rule compares) takes its shape from that folder's config.json; the
 * lab model's size fields (`policies.modelOverrides`, e.g. a preset's small shape) then give way.
 * They are cleared here, where a new run's config is resolved (the API's validate/create,
 * `lab train`), so the stored config, its diff and the reports never record overrides that were
 * not used. The shape actually used is the folder's (the engine logs it and every checkpoint names
 * the base folder). Any other config is returned unchanged.
 */
export function giveWayToModelFolder(config: RunConfig, baseDir = labRoot()): RunConfig {
  if (config.policies.init === null || Object.keys(config.policies.modelOverrides as object).length === 0) return config;
  const dir = path.resolve(baseDir, config.policies.init);
  // Not a model folder: the `paths` rule says why. A lab folder: the `initShape` rule holds the overrides equal to it.
  if (!isHfModelFolder(dir) || isLabFolder(dir)) return config;
  return { ...config, policies: { ...config.policies, modelOverrides: {} } };
}
