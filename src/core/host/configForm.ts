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
import { LabApiError, type ConfigField, type ConfigFieldCondition, type ConfigValidation, type FieldError, type PresetInfo } from '../../shared/api';
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
import { datasetTaskSchema } from '../data/datasetTasks';
import { TASK_NAMES } from '../data/tasks';
import { FieldProblemsError } from '../util/schemaError';
import { externalConfigSchema } from '../workflows/external';
import { mathConfigSchema } from '../workflows/math';
import { WORKFLOW_NAMES, type WorkflowName } from '../workflows/registry';
import { searchConfigSchema } from '../workflows/search';
import { singleConfigSchema } from '../workflows/single';
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
  return preset ? mergeWithSwitches(presetInput(preset), config) : config;
}

type Options = Record<string, unknown> & { workflow?: { name?: unknown; options?: Record<string, unknown> } };

/**
 * The preset's input with a config merged over it, where a switch starts afresh as `--set` does
 * (config/overrides.ts): a new workflow name takes only the options the config gives, and a new
 * K mode (`solvers.mode`: fixed to router) only the fields the config gives for it, so the old
 * mode's `k` is not left beside the new `maxK`.
 */
function mergeWithSwitches(base: Record<string, unknown>, config: Record<string, unknown>): Record<string, unknown> {
  const merged = mergeConfig(base, config) as Options;
  const from = (base as Options).workflow;
  const to = (config as Options).workflow;
  if (!to || !merged.workflow) return merged;
  if (to.name !== undefined && to.name !== from?.name) {
    merged.workflow.options = structuredClone(to.options ?? {});
    return merged;
  }
  for (const [key, value] of Object.entries(to.options ?? {})) {
    const old = from?.options?.[key] as { mode?: unknown } | undefined;
    const mode = value && typeof value === 'object' ? (value as { mode?: unknown }).mode : undefined;
    if (mode !== undefined && old?.mode !== undefined && old.mode !== mode) merged.workflow.options![key] = structuredClone(value);
  }
  return merged;
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
  const diff = preset ? configDiff(giveWayToModelFolder(presetConfig(preset)), resolved) : [];
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
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  description?: string;
  additionalProperties?: unknown;
};

/** Each workflow's options schema: the form shows `workflow.options` as one field per option of the chosen workflow. */
const WORKFLOW_OPTION_SCHEMAS = {
  math: mathConfigSchema,
  search: searchConfigSchema,
  single: singleConfigSchema,
  external: externalConfigSchema,
} satisfies Record<WorkflowName, z.ZodType>;

/** Fields filled when a run is created (content hashes): never typed, so never shown. */
const DERIVED_KEYS = new Set(['sha256', 'corpusSha256']);

const jsonSchemaOf = (schema: z.ZodType): JsonSchema => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;

/**
 * The editable leaves of a JSON schema under `prefix`. Objects become nested fields; a union of
 * objects told apart by a constant (`mode: 'fixed' | 'mixed' | 'router'`) becomes an enum of the
 * constants plus each variant's fields shown while it is chosen; a nullable object with such a
 * constant (policies.adapter) the same, its "none" making the object null.
 */
function schemaFields(root: JsonSchema, prefix: string, when: ConfigFieldCondition[] = []): ConfigField[] {
  const out: ConfigField[] = [];
  const walk = (s: JsonSchema, path: string, conds: ConfigFieldCondition[], inheritedNullable = false) => {
    let nullable = inheritedNullable;
    const alternatives = s.anyOf ?? s.oneOf;
    const nonNull = alternatives?.filter((a) => a.type !== 'null') ?? [];
    if (alternatives && nonNull.length > 1 && nonNull.every((a) => a.properties)) return variants(s, nonNull, path, conds);
    if (alternatives) {
      nullable = nullable || alternatives.some((a) => a.type === 'null');
      s = { description: s.description, ...(nonNull[0] ?? {}) };
    }
    let type = s.type;
    if (Array.isArray(type)) {
      nullable = nullable || type.includes('null');
      type = type.find((t) => t !== 'null');
    }
    const base: ConfigField = {
      path,
      kind: 'json',
      ...(nullable ? { nullable } : {}),
      ...(s.description ? { description: s.description } : {}),
      ...(conds.length ? { when: conds } : {}),
    };
    if (type === 'object' && s.properties) {
      const tag = Object.entries(s.properties).find(([, v]) => v.const !== undefined);
      if (nullable && tag) {
        // A nullable object with a constant tag: the tag is its switch ("none": null), the rest shows while it is on.
        const [key, v] = tag;
        out.push({
          ...base,
          path: `${path}.${key}`,
          kind: 'enum',
          options: [String(v.const)],
          nullable: true,
          noneNulls: path,
          description: v.description ?? s.description,
        });
        const on = [...conds, { path: `${path}.${key}`, in: [String(v.const)] }];
        for (const [k, sub] of Object.entries(s.properties)) if (k !== key && !DERIVED_KEYS.has(k)) walk(sub, `${path}.${k}`, on);
        return;
      }
      for (const [k, v] of Object.entries(s.properties)) if (!DERIVED_KEYS.has(k)) walk(v, path ? `${path}.${k}` : k, conds);
    } else if (type === 'object') out.push(base);
    else if (s.const !== undefined) out.push({ ...base, kind: 'enum', options: [String(s.const)] });
    else if (s.enum) out.push({ ...base, kind: 'enum', options: s.enum.map(String) });
    else if (type === 'array' && s.items?.enum) out.push({ ...base, kind: 'list', options: s.items.enum.map(String) });
    else if (type === 'array' && s.items?.type === 'string') out.push({ ...base, kind: 'lines' });
    else if (type === 'array') out.push(base);
    else if (type === 'integer' || type === 'number') out.push({ ...base, kind: type, ...bounds(s) });
    else if (type === 'boolean') out.push({ ...base, kind: 'boolean' });
    else if (type === 'string') out.push({ ...base, kind: 'string' });
    else out.push(base);
  };
  /** A union of objects with one constant key in common: the key as an enum, each variant's other keys while it is chosen. */
  const variants = (s: JsonSchema, options: JsonSchema[], path: string, conds: ConfigFieldCondition[]) => {
    const key = Object.keys(options[0].properties!).find((k) => options.every((o) => o.properties![k]?.const !== undefined));
    if (!key) return void out.push({ path, kind: 'json', ...(s.description ? { description: s.description } : {}), ...(conds.length ? { when: conds } : {}) });
    const tags = options.map((o) => String(o.properties![key].const));
    out.push({
      path: `${path}.${key}`,
      kind: 'enum',
      options: tags,
      ...(s.description ? { description: s.description } : {}),
      ...(conds.length ? { when: conds } : {}),
    });
    options.forEach((o, i) => {
      for (const [k, v] of Object.entries(o.properties!)) if (k !== key) walk(v, `${path}.${k}`, [...conds, { path: `${path}.${key}`, in: [tags[i]] }]);
    });
  };
  walk(root, prefix, when);
  return out;
}

const bounds = (s: JsonSchema) => ({
  ...(s.minimum !== undefined ? { min: s.minimum } : s.exclusiveMinimum !== undefined ? { min: s.exclusiveMinimum, exclusiveMin: true } : {}),
  ...(s.maximum !== undefined ? { max: s.maximum } : s.exclusiveMaximum !== undefined ? { max: s.exclusiveMaximum, exclusiveMax: true } : {}),
});

/** Every workflow's options as fields under `workflow.options`, each shown while its workflow is chosen (a field two workflows share is one field). */
function workflowOptionFields(): ConfigField[] {
  const byPath = new Map<string, ConfigField>();
  for (const name of WORKFLOW_NAMES) {
    const condition = { path: 'workflow.name', in: [name] };
    for (const f of schemaFields(jsonSchemaOf(WORKFLOW_OPTION_SCHEMAS[name]), 'workflow.options', [condition])) {
      const seen = byPath.get(f.path);
      const sameField = seen && seen.kind === f.kind && JSON.stringify(seen.when!.slice(1)) === JSON.stringify(f.when!.slice(1));
      if (seen && sameField) seen.when![0].in.push(name);
      // Own copies of the conditions: the workflow's condition object is shared by its fields.
      else byPath.set(seen ? `${f.path}@${name}` : f.path, { ...f, when: f.when!.map((c) => ({ ...c, in: [...c.in] })) }); // never two workflows' different fields under one path today
    }
  }
  return [...byPath.values()];
}

let fieldsCache: ConfigField[] | null = null;

/**
 * The run config's editable fields, from its JSON schema (zod's toJSONSchema of runConfigSchema):
 * its leaves, the task lists as `tasks` fields (built-in names, dataset-file entries), and
 * `workflow.options` as the chosen workflow's own options (WORKFLOW_OPTION_SCHEMAS).
 */
export function configFields(): ConfigField[] {
  if (fieldsCache) return fieldsCache;
  const root = jsonSchemaOf(runConfigSchema);
  const datasetEntry = schemaFields(jsonSchemaOf(datasetTaskSchema), '');
  const out: ConfigField[] = [];
  for (const f of schemaFields(root, '')) {
    if (f.path === 'workflow.options') out.push(...workflowOptionFields());
    else if (f.path === 'tasks.train' || f.path === 'tasks.eval') out.push({ ...f, kind: 'tasks', options: [...TASK_NAMES], entryFields: datasetEntry });
    else out.push(f);
  }
  fieldsCache = out;
  return out;
}
