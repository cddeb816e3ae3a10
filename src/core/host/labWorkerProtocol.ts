/**
 * The protocol between LabWorkerClient (the thread that serves IPC or HTTP) and the lab worker
 * (labWorker.ts, a worker_threads Worker that owns the LabService and its SQLite connection):
 * requests with an id answered once, pushes, and the few things the worker asks its parent to do
 * because only the parent can (launch an engine: in Electron a utility process can only be forked
 * from the main process; print a PDF: BrowserWindow). Every message is typed once here (zod) and
 * validated where it arrives, like the engine protocol (messages.ts), so a bad message is a clear
 * error naming the problem. Messages travel by structured clone (NaN, typed arrays kept).
 *
 * Not validated here: a call's result value (LabService built it from its own DTO types) and an
 * engine's message (validated by the EngineHandle on both sides, messages.ts).
 *
 * Tested by test/core/host/labWorker.test.ts.
 */
import { z } from 'zod';
import type { ApiErrorCode, ApiErrorDto, LabPush } from '../../shared/api';
import { hostMessageSchema } from './messages';

/** Every ApiErrorCode, checked both ways against the contract's union at compile time. */
const API_ERROR_CODES = [
  'invalid_input',
  'unknown_method',
  'not_found',
  'conflict',
  'unsupported',
  'unauthorized',
  'internal',
] as const satisfies readonly ApiErrorCode[];
type MissingCode = Exclude<ApiErrorCode, (typeof API_ERROR_CODES)[number]>;
const allCodesListed: MissingCode extends never ? true : false = true;
void allCodesListed;

const PUSH_TYPES = ['hello', 'progress', 'points', 'status', 'runs', 'log', 'indexProgress'] as const satisfies readonly LabPush['type'][];

const requestId = z.number().int().nonnegative();
const handleId = z.number().int().positive();
const signal = z.string().regex(/^SIG[A-Z0-9]+$/) as unknown as z.ZodType<NodeJS.Signals>;

export const apiErrorSchema: z.ZodType<ApiErrorDto> = z.object({
  code: z.enum(API_ERROR_CODES),
  message: z.string(),
  issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});

/** What the worker is started with (`workerData`). */
export const workerInitSchema = z
  .object({
    dbPath: z.string().min(1),
    /** The parent can print PDFs (the worker then asks it with `printPdf`). */
    printPdf: z.boolean(),
    /** Web mode: the folders a client's paths must lie in (LabServiceOptions.pathRoots); absent: any path. */
    pathRoots: z.array(z.string().min(1)).max(64).optional(),
  })
  .strict();
export type WorkerInit = z.infer<typeof workerInitSchema>;

/** Parent -> worker. */
export const toWorkerSchema = z.discriminatedUnion('type', [
  /** Run one API method; answered by one `result` with the same id. `input` is validated by LabService.call. */
  z.object({ type: z.literal('call'), id: requestId, method: z.string(), input: z.unknown() }),
  /** Stop the engines (up to timeoutMs each), close the store, answer `closed`. */
  z.object({ type: z.literal('close'), timeoutMs: z.number().int().positive() }),
  /** The engine of a `launch` started (pid when the launcher knows it). */
  z.object({ type: z.literal('engineStarted'), handle: handleId, pid: z.number().int().nullable() }),
  /** The launcher threw: the engine never ran. */
  z.object({ type: z.literal('engineFailed'), handle: handleId, message: z.string() }),
  /** A message from the engine, as it arrived (validated again by the worker's handle). */
  z.object({ type: z.literal('engineMessage'), handle: handleId, message: z.unknown() }),
  z.object({ type: z.literal('engineExit'), handle: handleId, code: z.number().int().nullable(), signal: signal.nullable() }),
  z.discriminatedUnion('ok', [
    z.object({
      type: z.literal('pdfResult'),
      id: requestId,
      ok: z.literal(true),
      bytes: z.custom<Uint8Array>((v) => v instanceof Uint8Array, 'expected a Uint8Array'),
    }),
    z.object({ type: z.literal('pdfResult'), id: requestId, ok: z.literal(false), message: z.string() }),
  ]),
]);
export type ToWorker = z.infer<typeof toWorkerSchema>;

/** Worker -> parent. */
export const fromWorkerSchema = z.discriminatedUnion('type', [
  /** The database is open and calls are served. */
  z.object({ type: z.literal('ready') }),
  /** The worker could not open the lab (bad path, newer schema …); it exits after this. */
  z.object({ type: z.literal('failed'), message: z.string() }),
  /** Answer to `call`: the method's value, or its error (code, message, field issues). */
  z.discriminatedUnion('ok', [
    z.object({ type: z.literal('result'), id: requestId, ok: z.literal(true), value: z.unknown() }),
    z.object({ type: z.literal('result'), id: requestId, ok: z.literal(false), error: apiErrorSchema }),
  ]),
  z.object({ type: z.literal('push'), push: z.looseObject({ type: z.enum(PUSH_TYPES) }) as unknown as z.ZodType<LabPush> }),
  /** Start an engine with the parent's launcher; the parent answers engineStarted or engineFailed, then relays. */
  z.object({
    type: z.literal('launch'),
    handle: handleId,
    request: z.object({ dbPath: z.string().min(1), runId: z.number().int().positive(), mode: z.enum(['start', 'resume']) }).strict(),
  }),
  z.object({ type: z.literal('engineSend'), handle: handleId, message: hostMessageSchema }),
  z.object({ type: z.literal('engineKill'), handle: handleId, signal }),
  z.object({ type: z.literal('printPdf'), id: requestId, html: z.string() }),
  /** Answer to `close`: engines stopped, store closed. */
  z.object({ type: z.literal('closed') }),
]);
export type FromWorker = z.infer<typeof fromWorkerSchema>;

function problem(what: string, raw: unknown, error: z.ZodError): Error {
  const type = raw && typeof raw === 'object' && 'type' in raw ? String((raw as { type: unknown }).type) : typeof raw;
  return new Error(`invalid ${what} message (type ${type}): ${error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
}

export function parseToWorker(raw: unknown): ToWorker {
  const r = toWorkerSchema.safeParse(raw);
  if (!r.success) throw problem('parent -> lab worker', raw, r.error);
  return r.data;
}

export function parseFromWorker(raw: unknown): FromWorker {
  const r = fromWorkerSchema.safeParse(raw);
  if (!r.success) throw problem('lab worker -> parent', raw, r.error);
  return r.data;
}

export function parseWorkerInit(raw: unknown): WorkerInit {
  const r = workerInitSchema.safeParse(raw);
  if (!r.success) throw problem('lab worker init', raw, r.error);
  return r.data;
}
