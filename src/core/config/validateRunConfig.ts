/**
 * The cross-field rules of a run config: what the schema (runConfig.ts) cannot see field by field
 * and what would otherwise pass as "valid" and fail the moment the engine starts. Checked where
 * a config is resolved for a new run (the API's validateConfig / createRun, `lab train`). A
 * registry: each rule names the fields it reads and returns field errors (path + a sentence).
 *
 * - `paths`: `policies.init` (and the dataset slots) exist and are loadable (initPath.ts, reused).
 * - `heads`: the model built from `policies.model` + `policies.modelOverrides` is valid: nHeads
 *   divides dModel, mlpRatio x dModel is whole (models/config.ts owns those checks; this runs
 *   them here instead of in the engine). Skipped when `policies.init` is set: the folder's
 *   config.json decides the shape.
 * - `initShape`: a run that starts from the lab's own checkpoint (`policies.init`) takes its
 *   shape from the folder's config.json, so a `modelOverrides` value that disagrees with it is
 *   refused (it would be recorded in the run's config, its diff and its reports, yet ignored).
 *   Overrides equal to the folder's (the presets' QUICK_MODEL on their warm starts) are fine.
 *   A Hugging Face folder (config.json with `model_type`) is left to the HF path
 *   (src/core/policies/hf.ts): its config.json decides, and the engine's log names the shape.
 * - `adapter`: LoRA (`policies.adapter`) needs a Hugging Face folder in `policies.init`; the lab's
 *   own model has no frozen base to adapt (it trains all its weights), so it is refused here
 *   rather than by the engine's loader after the run exists.
 * - `promptRoom`: the first prompts plus `rollout.maxNewTokens` fit in the model's context
 *   (promptRoom.ts: the context from config.json or the preset, the prompts rendered as the
 *   policy reads them), with the numbers and the fields to change in the message.
 *
 * Not here: one field's own range (the zod schema), reading the weights.
 * Tests: test/core/config/crossField.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MODEL_PRESET_NAMES, MODEL_PRESETS, modelConfigSchema, type ModelPresetName } from '../models/config';
import { isModelFolder, labRoot, runConfigPathErrors } from './initPath';
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

/** config.json of each policy a lab checkpoint folder holds (itself, or one sub-folder per policy); null for a Hugging Face folder. */
function labFolderConfigs(dir: string): { where: string; config: Record<string, unknown> }[] | null {
  // Messages quote config.json values only, never the folder's entries (see initPath.ts).
  const read = (d: string): Record<string, unknown> => JSON.parse(fs.readFileSync(path.join(d, 'config.json'), 'utf8')) as Record<string, unknown>;
  const folders = isModelFolder(dir)
    ? [dir]
    : fs
        .readdirSync(dir)
        .map((n) => path.join(dir, n))
        .filter((d) => isModelFolder(d));
  const out = folders.map((d) => ({ where: d, config: read(d) }));
  if (out.some((o) => typeof o.config.model_type === 'string')) return null;
  return out;
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
      if (r.success) return [];
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
    what: 'a lab checkpoint in policies.init decides the shape: modelOverrides must agree with its config.json',
    check: (c, baseDir) => {
      const overrides = Object.entries(c.policies.modelOverrides as Record<string, unknown>);
      if (c.policies.init === null || overrides.length === 0) return [];
      const dir = path.resolve(baseDir, c.policies.init);
      let folders: ReturnType<typeof labFolderConfigs>;
      try {
        folders = labFolderConfigs(dir);
      } catch {
        return []; // unreadable: the `paths` rule says so
      }
      if (folders === null) return [];
      const out: ConfigProblem[] = [];
      for (const [key, value] of overrides) {
        const differs = folders.find((f) => f.config[key] !== value);
        if (!differs) continue;
        out.push({
          path: `policies.modelOverrides.${key}`,
          message:
            `${key} = ${JSON.stringify(value)} disagrees with the checkpoint in policies.init ` +
            `(its config.json has ${key} = ${JSON.stringify(differs.config[key] ?? null)}): ` +
            `a run that starts from policies.init takes its shape from the folder. ` +
            `Remove the override, or set policies.init to null to train this shape from scratch.`,
        });
      }
      return out;
    },
  },
  adapter: {
    what: 'LoRA adapters (policies.adapter) need a Hugging Face model folder in policies.init',
    check: (c, baseDir) => {
      if (c.policies.adapter === null || c.policies.kind !== 'model') return [];
      const message =
        "LoRA adapters need a Hugging Face model folder in policies.init; the lab's own model trains all its weights. " +
        'Set policies.adapter to null (full fine-tuning), or name a Hugging Face folder (config.json, tokenizer.json, safetensors) in policies.init.';
      if (c.policies.init === null) return [{ path: 'policies.adapter.kind', message }];
      let folders: ReturnType<typeof labFolderConfigs>;
      try {
        folders = labFolderConfigs(path.resolve(baseDir, c.policies.init));
      } catch {
        return []; // unreadable: the `paths` rule says so
      }
      return folders === null ? [] : [{ path: 'policies.adapter.kind', message }];
    },
  },
  promptRoom: {
    what: 'the first prompts plus rollout.maxNewTokens fit in the model context (contextLength / max_position_embeddings)',
    check: (c, baseDir) => {
      if (c.policies.kind !== 'model') return [];
      const context = modelContext(c, baseDir, labFolderConfigs);
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
 * A run whose `policies.init` names a Hugging Face folder takes its shape from that folder's
 * config.json; the lab model's size fields (`policies.modelOverrides`, e.g. a preset's small
 * shape) then give way. They are cleared here, where a new run's config is resolved (the API's
 * validate/create, `lab train`), so the stored config, its diff and the reports never record
 * overrides that were not used. The shape actually used is the folder's (the engine logs it and
 * every checkpoint names the base folder). Any other config is returned unchanged.
 */
export function giveWayToModelFolder(config: RunConfig, baseDir = labRoot()): RunConfig {
  if (config.policies.init === null || Object.keys(config.policies.modelOverrides as object).length === 0) return config;
  let folders: ReturnType<typeof labFolderConfigs>;
  try {
    folders = labFolderConfigs(path.resolve(baseDir, config.policies.init));
  } catch {
    return config; // unreadable: the `paths` rule says so
  }
  if (folders !== null) return config;
  return { ...config, policies: { ...config.policies, modelOverrides: {} } };
}
