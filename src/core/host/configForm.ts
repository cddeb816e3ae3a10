/**
 * What the new-run form asks of the LabService: the presets (their input and their resolved
 * config), the run config's editable fields (a walk over its JSON schema, zod's toJSONSchema of
 * runConfigSchema), and validation of a preset plus a partial config, answered field by field.
 *
 * Validation takes its field problems as data, never from an error's text: the config resolver
 * throws a FieldProblemsError (src/core/util/schemaError.ts) whose problems carry each field's path
 * and sentence (the schema's fields, the workflow's options under `workflow.options.*`, dataset
 * files), and the cross-field rules return theirs (src/core/config/validateRunConfig.ts).
 *
 * Web mode (a LabService given path roots): every path field of the request must lie under the
 * roots before anything is read (pathRoots.ts); the same refusal for every path outside them.
 * Through the API, data files are hashed ahead off the API's thread (dataHashing.ts): a request
 * naming a large file answers with a pending state instead of holding every other request.
 *
 * Not here: creating or starting the run (runControl.ts), the form itself (src/renderer).
 * Tested by test/core/host/configForm.test.ts, test/core/config/describe.test.ts (the fields),
 * test/core/config/crossField.test.ts, initPath.test.ts and webRoots.test.ts (validateConfig),
 * test/core/data/hashOffThread.test.ts, test/server/server.test.ts.
 */
import { z } from 'zod';
import { LabApiError, type ConfigField, type ConfigValidation, type FieldError, type PresetInfo } from '../../shared/api';
import { configDiff } from '../../shared/analysis';
import { findForbiddenKey, forbiddenKeyMessage } from '../../shared/inputGuards';
import {
  crossFieldProblems,
  giveWayToModelFolder,
  mergeConfig,
  PRESET_NAMES,
  PRESETS,
  presetConfig,
  presetInput,
  presetNeedsModelFolder,
  resolveRunConfig,
  runConfigSchema,
  type RunConfig,
} from '../config';
import { FieldProblemsError } from '../util/schemaError';
import { CREATE_HASH_WAIT_MS, hashDataFilesAhead, pendingHashMessage, VALIDATE_HASH_WAIT_MS, type PendingHash } from './dataHashing';
import { outsideRootProblems, suiteRowInputs, type PathRoots } from './pathRoots';

/** How a host checks a request's config: the web roots (absent: any path), and how long to wait for hashes. */
export interface ConfigCheckOptions {
  /** Web mode: the folders path fields must lie in. Absent or null: any path (desktop, CLI). */
  roots?: PathRoots | null;
  /** How long to wait for data files' hashes before answering pending (validate) or refusing (create). */
  hashWaitMs?: number;
}

export function presetInfos(): PresetInfo[] {
  return PRESET_NAMES.map((name): PresetInfo => {
    const p = PRESETS[name] as { description: string; base?: string };
    const config = presetConfig(name) as unknown as Record<string, unknown>;
    return { name, description: p.description, base: p.base ?? null, input: presetInput(name), config };
  });
}

/** The config a request asks for: preset input, then the partial config over it. */
function mergedInput(preset: string | null, config: Record<string, unknown>): Record<string, unknown> {
  if (preset !== null && !(PRESET_NAMES as readonly string[]).includes(preset)) {
    const valid = PRESET_NAMES.join(', ');
    throw new LabApiError('invalid_input', `unknown preset "${preset}"; valid: ${valid}`, [{ path: 'preset', message: `unknown preset; valid: ${valid}` }]);
  }
  // Refused by name (mergeConfig would throw a plain error, answered as 'internal').
  const hit = findForbiddenKey(config);
  if (hit)
    throw new LabApiError('invalid_input', forbiddenKeyMessage(hit.key, `config at "${hit.path}"`), [
      { path: hit.path, message: `the key "${hit.key}" is not allowed` },
    ]);
  return preset ? mergeConfig(presetInput(preset), config) : config;
}

const refused = (errors: readonly FieldError[]): ConfigValidation => ({
  ok: false,
  errors: errors.map(({ path, message }) => ({ path, message })),
  config: null,
  diff: [],
});

/** A preset (or none) plus a partial config: the resolved config and its diff from the preset, or each field's problem. */
export function validateConfig(preset: string | null, config: Record<string, unknown>, options: ConfigCheckOptions = {}): ConfigValidation {
  const input = mergedInput(preset, config);
  // Before anything is read: a path outside the roots is refused the same way whether or not it exists.
  if (options.roots) {
    const outside = outsideRootProblems(input, options.roots);
    if (outside.length) return refused(outside);
  }
  let resolved: RunConfig;
  try {
    resolved = giveWayToModelFolder(resolveRunConfig(input)); // a Hugging Face folder's shape wins over modelOverrides
  } catch (err) {
    // Plain words, one problem per field, as the resolver states them (core/util/schemaError).
    if (err instanceof FieldProblemsError) return refused(err.problems);
    return refused([{ path: '', message: (err as Error).message }]);
  }
  // Path fields (policies.init) exist and are checkpoint folders, and the cross-field rules hold
  // (heads divide the width, overrides agree with the init checkpoint), before any run is created.
  const problems = crossFieldProblems(resolved);
  if (preset && presetNeedsModelFolder(preset) && !resolved.policies.init) {
    problems.push({
      path: 'policies.init',
      message: `preset "${preset}" trains a Hugging Face model: name its folder (config.json, tokenizer.json and the safetensors weights)`,
    });
  }
  // The resolved paths too (a preset's defaults, a workflow's own): they were read, never shown.
  if (options.roots) problems.push(...outsideRootProblems(resolved, options.roots));
  if (problems.length) return refused(problems);
  const diff = preset ? configDiff(presetConfig(preset), resolved) : [];
  return { ok: true, errors: [], config: resolved as unknown as Record<string, unknown>, diff };
}

/**
 * validateConfig for the API: roots first, then the data files hashed ahead off this thread; when
 * they take longer than `hashWaitMs` the answer is pending (each file's field says so, with its
 * progress) and the hash goes on, so the next validation finds it done.
 */
export async function validateConfigOffThread(
  preset: string | null,
  config: Record<string, unknown>,
  options: ConfigCheckOptions = {},
): Promise<ConfigValidation> {
  const input = mergedInput(preset, config);
  if (options.roots) {
    const outside = outsideRootProblems(input, options.roots);
    if (outside.length) return refused(outside);
  }
  const pending = await hashDataFilesAhead([input], options.hashWaitMs ?? VALIDATE_HASH_WAIT_MS);
  if (pending.length) return { ...refused(pending.map((p) => ({ path: p.field, message: pendingHashMessage(p) }))), pending };
  return validateConfig(preset, config, options);
}

/** Throws 'conflict' naming the files still being hashed (the request may be sent again). */
function refuseWhileHashing(pending: readonly PendingHash[], what: string): void {
  if (!pending.length) return;
  const issues = pending.map((p) => ({ path: p.field, message: pendingHashMessage(p) }));
  throw new LabApiError('conflict', `${what}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
}

/**
 * Before createRun resolves a config: its paths under the roots (else invalid_input naming each
 * field), and its data files hashed off this thread, waiting up to `hashWaitMs` (else 'conflict':
 * still hashing, send it again).
 */
export async function prepareRunConfig(preset: string | null, config: Record<string, unknown>, options: ConfigCheckOptions = {}): Promise<void> {
  const input = mergedInput(preset, config);
  if (options.roots) {
    const outside = outsideRootProblems(input, options.roots);
    if (outside.length) throw new LabApiError('invalid_input', `run config: ${outside.map((p) => `${p.path}: ${p.message}`).join('; ')}`, outside);
  }
  refuseWhileHashing(await hashDataFilesAhead([input], options.hashWaitMs ?? CREATE_HASH_WAIT_MS), 'run config');
}

/** prepareRunConfig for every row of a suite spec (an invalid spec is left to createSuite, which says why). */
export async function prepareSuiteSpec(spec: Record<string, unknown>, options: ConfigCheckOptions = {}): Promise<void> {
  const rows = suiteRowInputs(spec);
  if (options.roots) {
    const outside = rows.flatMap(({ label, input }) =>
      outsideRootProblems(input, options.roots!).map((p) => ({ path: p.path, message: `suite row "${label}": ${p.message}` })),
    );
    if (outside.length) throw new LabApiError('invalid_input', `suite: ${outside.map((p) => `${p.path}: ${p.message}`).join('; ')}`, outside);
  }
  refuseWhileHashing(
    await hashDataFilesAhead(
      rows.map((r) => r.input),
      options.hashWaitMs ?? CREATE_HASH_WAIT_MS,
    ),
    'suite',
  );
}

/** validateConfig, refusing an invalid config with one invalid_input error naming every field. */
export function validConfigOrThrow(preset: string | null, config: Record<string, unknown>, options: ConfigCheckOptions = {}): RunConfig {
  const v = validateConfig(preset, config, options);
  if (!v.ok) throw new LabApiError('invalid_input', `run config: ${v.errors.map((e) => `${e.path || '(config)'}: ${e.message}`).join('; ')}`, v.errors);
  return v.config as unknown as RunConfig;
}

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  description?: string;
  additionalProperties?: unknown;
};

let fieldsCache: ConfigField[] | null = null;

/** The run config's editable leaves, from its JSON schema (zod's toJSONSchema of runConfigSchema). */
export function configFields(): ConfigField[] {
  if (fieldsCache) return fieldsCache;
  const root = z.toJSONSchema(runConfigSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const out: ConfigField[] = [];
  const walk = (s: JsonSchema, path: string) => {
    let nullable = false;
    if (s.anyOf) {
      nullable = s.anyOf.some((a) => a.type === 'null');
      s = s.anyOf.find((a) => a.type !== 'null') ?? {};
    }
    let type = s.type;
    if (Array.isArray(type)) {
      nullable = nullable || type.includes('null');
      type = type.find((t) => t !== 'null');
    }
    const base = { path, ...(nullable ? { nullable } : {}), ...(s.description ? { description: s.description } : {}) };
    if (type === 'object' && s.properties) {
      for (const [k, v] of Object.entries(s.properties)) walk(v, path ? `${path}.${k}` : k);
    } else if (type === 'object') out.push({ ...base, kind: 'json' });
    else if (s.enum) out.push({ ...base, kind: 'enum', options: s.enum.map(String) });
    else if (type === 'array') out.push({ ...base, kind: 'list', ...(s.items?.enum ? { options: s.items.enum.map(String) } : {}) });
    else if (type === 'integer' || type === 'number') {
      out.push({
        ...base,
        kind: type,
        ...(s.minimum !== undefined ? { min: s.minimum } : s.exclusiveMinimum !== undefined ? { min: s.exclusiveMinimum, exclusiveMin: true } : {}),
        ...(s.maximum !== undefined ? { max: s.maximum } : s.exclusiveMaximum !== undefined ? { max: s.exclusiveMaximum, exclusiveMax: true } : {}),
      });
    } else if (type === 'boolean') out.push({ ...base, kind: 'boolean' });
    else if (type === 'string') out.push({ ...base, kind: 'string' });
    else out.push({ ...base, kind: 'json' });
  };
  walk(root, '');
  fieldsCache = out;
  return out;
}
