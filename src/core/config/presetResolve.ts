/**
 * Presets resolved into run configs: the deep merge of a preset's base chain and patches
 * (`mergeConfig`, refusing keys that reach the prototype chain), `presetInput` (the unresolved
 * input, for diffs and the UI's form), `presetConfig` (validated), and the model-folder check of
 * the real-model presets. The registry itself is presets.ts. Tests: test/core/config/overrides.test.ts,
 * initPath.test.ts, test/core/host/realModelPresets.test.ts.
 */
import { assertNoForbiddenKeys } from '../../shared/inputGuards';
import { getPreset } from './presets';
import { resolveRunConfig, type RunConfig } from './runConfig';

/**
 * Deep merge of plain objects; arrays and scalars replace. A patch key that reaches the prototype
 * chain (`__proto__`, `constructor`, `prototype`), at any depth, is an error naming it: a merge
 * must never assign through it (src/shared/inputGuards.ts).
 */
export function mergeConfig<T extends Record<string, unknown>>(base: T, patch: Record<string, unknown>): T {
  assertNoForbiddenKeys(patch, 'run config');
  return mergeChecked(base, patch);
}

function mergeChecked<T extends Record<string, unknown>>(base: T, patch: Record<string, unknown>): T {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    const b = Object.hasOwn(out, k) ? out[k] : undefined;
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
        ? mergeChecked(b as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out as T;
}

/** The unresolved input of a preset (its base chain merged), for diffs and the UI's form. */
export function presetInput(name: string): Record<string, unknown> {
  const preset = getPreset(name);
  // A copy: a merge shares sub-objects with the PRESETS constants, and the switches below delete keys.
  const base = preset.base ? structuredClone(presetInput(preset.base)) : {};
  const patch = preset.patch as Record<string, unknown> & { workflow?: { name?: string } };
  // A preset that switches workflow starts that workflow's options afresh (they do not mix), and
  // one that switches a K mode (`solvers.mode`: fixed / mixed / router) drops the old mode's fields,
  // as a --set does (overrides.ts).
  if (patch.workflow?.name && patch.workflow.name !== (base.workflow as { name?: string } | undefined)?.name) delete base.workflow;
  const baseOptions = (base.workflow as { options?: Record<string, unknown> } | undefined)?.options;
  const patchOptions = (patch.workflow as { options?: Record<string, unknown> } | undefined)?.options;
  for (const [key, value] of Object.entries(patchOptions ?? {})) {
    const old = baseOptions?.[key] as { mode?: unknown } | undefined;
    if (value && typeof value === 'object' && 'mode' in value && old?.mode !== undefined && old.mode !== (value as { mode: unknown }).mode)
      delete baseOptions![key];
  }
  return mergeConfig(base, patch);
}

/** Whether a preset (or one it builds on) trains a Hugging Face model and so needs `policies.init`. */
export function presetNeedsModelFolder(name: string): boolean {
  const preset = getPreset(name);
  return preset.needsModelFolder === true || (preset.base !== undefined && presetNeedsModelFolder(preset.base));
}

/** Throws, saying how to fix it, when a preset that trains a Hugging Face model has no `policies.init` (the CLI calls it before creating a run). */
export function assertPresetModelFolder(name: string, config: RunConfig): void {
  if (presetNeedsModelFolder(name) && !config.policies.init) {
    throw new Error(
      `preset "${name}" trains a Hugging Face model: name its folder with --set policies.init=PATH (config.json, tokenizer.json and the safetensors weights, e.g. a download of the model from the Hugging Face hub)`,
    );
  }
}

/**
 * A preset resolved with optional overrides (deep-merged) into a validated run config. A
 * real-model preset resolves without its folder (so it can be listed, shown and diffed); creating
 * a run from it checks the folder (`assertPresetModelFolder`, in the CLI and the API's validate).
 */
export function presetConfig(name: string, overrides: Record<string, unknown> = {}): RunConfig {
  return resolveRunConfig(mergeConfig(presetInput(name), overrides));
}
