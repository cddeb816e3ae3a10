/**
 * The LabApi contract: every query and command the UI can make and every push it can receive,
 * typed once. Each method has a zod schema for its input, validated where the call arrives (the
 * Electron main process's ipcMain handlers, the web server's POST /api/<method>) by
 * `parseApiInput`; outputs are the domain records of records.ts as the store returns them plus a
 * few computed views (run summary, series), turned into what a transport carries once, by
 * wire.ts (typed arrays become number arrays), so both transports carry the same values.
 * Results travel wrapped in `ApiResult`.
 *
 * Not here: the implementation (src/core/host/labService.ts), the transports (src/main,
 * src/preload, src/server), the client (src/renderer/src/api/client.ts). Browser-safe: no Node
 * imports (test/layering.test.ts). Tested by test/server/*.test.ts and test/e2e/lab.test.ts.
 */
import { z } from 'zod';
import { API_METHODS, type ApiMethod } from './apiMethods';
import type { CorpusProgress } from './corpusProgress';
import type { CheckpointInfo, EpisodeDetail, EventDetail, EventFilter, EventPage, RunStatus, StoredEvaluation, TokensWithText } from './records';
import type { SeriesMap, SeriesPoint } from './series';
import type { SuiteDetail, SuiteSummary } from './suites';
import type { Wire } from './wire';

export { API_METHODS, type ApiMethod } from './apiMethods';
export { RUN_STATUSES, type RunStatus, type EventFilter } from './records';
export type { SuiteDetail, SuiteEntry, SuiteSummary, SuiteTable, SuiteTableRow } from './suites';
export type { SeriesMap, SeriesPoint } from './series';
export type { Wire } from './wire';

// ---------------------------------------------------------------------------------------------
// Outputs: the domain records (records.ts) as the store returns them, and the views computed here

/** One row of the runs table. */
export interface RunSummary {
  id: number;
  name: string;
  preset: string | null;
  status: RunStatus;
  workflow: string;
  /** Objective algorithm (srpo, grpo_token, drmas …). */
  objective: string;
  /** Compute backend in use, null until the engine started. */
  backend: string | null;
  seed: number;
  /** Training steps the config asks for. */
  steps: number;
  /** Last committed step (-1 before the first). */
  lastStep: number;
  createdAt: number;
  startedAt: number | null;
  endedAt: number | null;
  error: string | null;
  /** Best `eval/macro/avg` so far and its step; null before the first evaluation. */
  bestEval: { step: number; value: number } | null;
  /** An engine of this host is running it now. */
  active: boolean;
}

export interface RunDetail extends RunSummary {
  /** The frozen, validated config snapshot. */
  config: Record<string, unknown>;
  checkpoints: CheckpointInfo[];
}

export interface PresetInfo {
  name: string;
  description: string;
  base: string | null;
  /** The preset's unresolved input (what the form starts from). */
  input: Record<string, unknown>;
  /** The preset resolved with every default (what a run from it gets). */
  config: Record<string, unknown>;
}

/**
 * How the form edits a field: `list` picks from `options`, `lines` is a list of free strings (one
 * a line), `tasks` is a task list (built-in names from `options`, dataset files described by
 * `entryFields`), `json` is a free-form record (names chosen by the user).
 */
export type ConfigFieldKind = 'number' | 'integer' | 'string' | 'boolean' | 'enum' | 'list' | 'lines' | 'tasks' | 'json';

/** A field shown (and sent) only while another field holds one of `in` (the chosen workflow, a K mode). */
export interface ConfigFieldCondition {
  path: string;
  in: string[];
}

/** One editable leaf of the run config, described for a generated form. */
export interface ConfigField {
  /** Dotted path, e.g. `rollout.groupSize`. */
  path: string;
  kind: ConfigFieldKind;
  /** Allowed values of an enum, or of a list's items. */
  options?: string[];
  min?: number;
  max?: number;
  /** The bound itself is not allowed (x > min rather than x >= min). */
  exclusiveMin?: boolean;
  exclusiveMax?: boolean;
  nullable?: boolean;
  description?: string;
  /** Shown and sent only while every condition holds. */
  when?: ConfigFieldCondition[];
  /** An enum whose empty choice ("none") makes this whole object null (policies.adapter.kind). */
  noneNulls?: string;
  /** `tasks`: the fields of a dataset-file entry, paths relative to the entry (`dataset`, `limit`, …). */
  entryFields?: ConfigField[];
}

export interface FieldError {
  /** Dotted path of the field ('' for the whole config). */
  path: string;
  message: string;
}

export interface ConfigDiffEntry {
  path: string;
  /** Value in the preset (undefined: absent). */
  before: unknown;
  after: unknown;
}

export interface ConfigValidation {
  ok: boolean;
  errors: FieldError[];
  /** The resolved config when ok. */
  config: Record<string, unknown> | null;
  /** Leaves that differ from the preset's resolved config (only when ok and a preset was given). */
  diff: ConfigDiffEntry[];
  /**
   * Data files still being hashed (off the API's thread) when the answer was given: ok is false
   * and each one's field has an error saying so; validating again later gives the result.
   */
  pending?: { field: string; file: string; bytes: number; done: number }[];
}

export const REPORT_FORMATS = ['html', 'markdown', 'csv-metrics', 'csv-events', 'pdf'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];
/** What exportReport takes: the run reports' formats, and the suite table as CSV (csv-table). */
export const EXPORT_FORMATS = [...REPORT_FORMATS, 'csv-table'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface ReportFile {
  filename: string;
  mime: string;
  /** utf8 text, or base64 for binary formats (pdf). */
  encoding: 'utf8' | 'base64';
  content: string;
}

// ---------------------------------------------------------------------------------------------
// Pushes

export type LabPush =
  /** The push channel is connected (web mode sends it first on each socket). */
  | { type: 'hello' }
  /** A step was committed: its key metrics (NaN as null). */
  | { type: 'progress'; runId: number; step: number; totalSteps: number; final: boolean; wallMs: number | null; metrics: Record<string, number | null> }
  /** Every metric point the step wrote, for live curves. */
  | { type: 'points'; runId: number; step: number; points: Record<string, SeriesPoint> }
  | { type: 'status'; runId: number; status: RunStatus; error: string | null }
  /** Runs were created or deleted: refresh the list. */
  | { type: 'runs' }
  | { type: 'log'; runId: number; level: 'info' | 'warn' | 'error'; line: string }
  /** The run's engine is indexing its corpus file (before its first step): the dashboard's bar. */
  | ({ type: 'indexProgress'; runId: number } & CorpusProgress);

// ---------------------------------------------------------------------------------------------
// Inputs (validated at the boundary)

const id = z.number().int().positive();
const step = z.number().int().min(0);
const runRef = z.object({ runId: id }).strict();
const eventFilterSchema = z
  .object({
    fromStep: step.optional(),
    toStep: step.optional(),
    kind: z.union([z.string().min(1), z.array(z.string().min(1)).max(32)]).optional(),
    k: z.number().int().min(1).max(64).optional(),
    minReward: z.number().optional(),
    maxReward: z.number().optional(),
    clipped: z.enum(['low', 'high', 'any', 'none']).optional(),
    role: z.string().min(1).optional(),
    complete: z.boolean().optional(),
    parseFailures: z.boolean().optional(),
    split: z.enum(['train', 'eval']).optional(),
  })
  .strict() satisfies z.ZodType<EventFilter>; // records.ts's EventFilter: the store's query type, validated here

export const apiInputSchemas = {
  listRuns: z.object({}).strict(),
  getRun: runRef,
  deleteRun: runRef,
  presets: z.object({}).strict(),
  configSchema: z.object({}).strict(),
  /** `config`: a partial config merged over the preset (or over the defaults without one). */
  validateConfig: z.object({ preset: z.string().nullable().optional(), config: z.record(z.string(), z.unknown()) }).strict(),
  createRun: z.object({ preset: z.string().nullable().optional(), config: z.record(z.string(), z.unknown()), start: z.boolean().optional() }).strict(),
  startRun: runRef,
  resumeRun: z.object({ runId: id, force: z.boolean().optional() }).strict(),
  pauseRun: runRef,
  stopRun: runRef,
  metricKeys: runRef,
  metricSeries: z
    .object({
      runId: id,
      keys: z.array(z.string().min(1).max(200)).min(1).max(64),
      fromStep: step.optional(),
      toStep: step.optional(),
      maxPoints: z.number().int().min(2).max(1_000_000).optional(),
    })
    .strict(),
  evaluations: runRef,
  listEvents: z
    .object({
      runId: id,
      filter: eventFilterSchema.optional(),
      limit: z.number().int().min(1).max(1000),
      after: z.object({ step, id }).strict().nullable().optional(),
    })
    .strict(),
  getEvent: z.object({ eventId: id }).strict(),
  getEpisode: z.object({ episodeId: id }).strict(),
  /** runIds, or suiteId (the suite's completed runs, its tables leading the report); csv-table: the tables as CSV. */
  exportReport: z
    .object({ runIds: z.array(id).min(1).max(16).optional(), suiteId: id.optional(), baseline: z.string().max(200).optional(), format: z.enum(EXPORT_FORMATS) })
    .strict()
    .refine((x) => (x.runIds === undefined) !== (x.suiteId === undefined), { message: 'give runIds or suiteId, not both' }),
  listSuites: z.object({}).strict(),
  /** baseline: the row the paired differences are taken against (default: the suite's). */
  getSuite: z.object({ suiteId: id, baseline: z.string().max(200).optional() }).strict(),
  /** spec: a suite spec (src/core/suites/spec.ts: rows, seeds, vary, sets, baseline); start: queue its runs. */
  createSuite: z.object({ spec: z.record(z.string(), z.unknown()), start: z.boolean().optional() }).strict(),
  /** Queues every run of the suite that is not completed (resuming interrupted ones). */
  startSuite: z.object({ suiteId: id }).strict(),
} satisfies Record<ApiMethod, z.ZodType>;

export type ApiInput<M extends ApiMethod> = z.input<(typeof apiInputSchemas)[M]>;
export type ApiParsedInput<M extends ApiMethod> = z.output<(typeof apiInputSchemas)[M]>;

/** What each handler returns: the store's domain records as read, and the host's computed views. */
export interface ApiResults {
  listRuns: RunSummary[];
  getRun: RunDetail;
  deleteRun: { deleted: boolean };
  presets: PresetInfo[];
  configSchema: ConfigField[];
  validateConfig: ConfigValidation;
  createRun: { runId: number };
  startRun: { ok: true };
  resumeRun: { ok: true };
  pauseRun: { ok: true };
  stopRun: { ok: true };
  metricKeys: string[];
  metricSeries: SeriesMap;
  evaluations: StoredEvaluation[];
  listEvents: EventPage;
  /** Members' output tokens decoded to text by the host (it knows the tokenizer). */
  getEvent: EventDetail<TokensWithText>;
  /** Events without their members (empty; open one with getEvent). */
  getEpisode: EpisodeDetail;
  exportReport: ReportFile;
  listSuites: SuiteSummary[];
  getSuite: SuiteDetail;
  createSuite: { suiteId: number };
  startSuite: { queued: number };
}

/** What a client receives: each result as the transport carries it (wire.ts: typed arrays as arrays, once, in LabService.call). */
export type ApiOutputs = { [M in ApiMethod]: Wire<ApiResults[M]> };

/** The API as the renderer sees it: one async function per method. */
export type LabApi = { [M in ApiMethod]: (input: ApiInput<M>) => Promise<ApiOutputs[M]> };

/** What the renderer's client offers: the API, the pushes, and which transport it uses. */
export interface LabClient extends LabApi {
  readonly transport: 'ipc' | 'http';
  subscribe(listener: (push: LabPush) => void): () => void;
}

/** The implementation side (LabService): validated inputs in. */
export type LabApiHandlers = { [M in ApiMethod]: (input: ApiParsedInput<M>) => Promise<ApiResults[M]> | ApiResults[M] };

// ---------------------------------------------------------------------------------------------
// Errors and the wire envelope

export type ApiErrorCode = 'invalid_input' | 'unknown_method' | 'not_found' | 'conflict' | 'unsupported' | 'unauthorized' | 'internal';

export interface ApiErrorDto {
  code: ApiErrorCode;
  message: string;
  /** Field problems of an invalid input or config. */
  issues?: FieldError[];
}

export type ApiResult<T> = { ok: true; value: T } | { ok: false; error: ApiErrorDto };

/** An error with a code the transports map to a status (HTTP 400/404/409 …). */
export class LabApiError extends Error {
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly issues?: FieldError[],
  ) {
    super(message);
    this.name = 'LabApiError';
  }

  toDto(): ApiErrorDto {
    return { code: this.code, message: this.message, ...(this.issues ? { issues: this.issues } : {}) };
  }
}

export function isApiMethod(name: string): name is ApiMethod {
  return (API_METHODS as readonly string[]).includes(name);
}

/** Field errors of a zod error, with dotted paths. */
export function fieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.map((i) => {
    const path = i.path.map(String).join('.');
    if (i.code === 'unrecognized_keys') return { path, message: `unknown field${i.keys.length > 1 ? 's' : ''} ${i.keys.join(', ')}` };
    return { path, message: i.message };
  });
}

/** Validates a method's raw input; throws LabApiError('invalid_input' | 'unknown_method'). */
export function parseApiInput<M extends ApiMethod>(method: M, raw: unknown): ApiParsedInput<M>;
export function parseApiInput(method: string, raw: unknown): unknown;
export function parseApiInput(method: string, raw: unknown): unknown {
  if (!isApiMethod(method)) throw new LabApiError('unknown_method', `unknown API method "${method}"; valid: ${API_METHODS.join(', ')}`);
  const r = (apiInputSchemas[method] as z.ZodType).safeParse(raw ?? {});
  if (!r.success) {
    const issues = fieldErrors(r.error);
    throw new LabApiError('invalid_input', `${method}: ${issues.map((i) => `${i.path || '(input)'}: ${i.message}`).join('; ')}`, issues);
  }
  return r.data;
}

/** Turns anything thrown into the wire error. */
export function toApiError(err: unknown): ApiErrorDto {
  if (err instanceof LabApiError) return err.toDto();
  if (
    err &&
    typeof err === 'object' &&
    'code' in err &&
    'message' in err &&
    typeof (err as ApiErrorDto).code === 'string' &&
    (err as { name?: string }).name === 'LabApiError'
  ) {
    return err as ApiErrorDto;
  }
  return { code: 'internal', message: err instanceof Error ? err.message : String(err) };
}

/** HTTP status of an error code. */
export const HTTP_STATUS: Record<ApiErrorCode, number> = {
  invalid_input: 400,
  unknown_method: 404,
  not_found: 404,
  conflict: 409,
  unsupported: 501,
  unauthorized: 401,
  internal: 500,
};
