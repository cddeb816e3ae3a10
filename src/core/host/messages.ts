/**
 * The host <-> engine protocol: every message either side can send, typed once (zod) and
 * validated where it arrives (the launcher validates engine messages, the engine validates host
 * messages), so a bad message is a clear error, never a half-understood object. Messages travel
 * by structured clone (child_process `serialization: 'advanced'`, Electron utilityProcess), so
 * metric values keep NaN and +-Infinity.
 *
 * Not here: how an engine is started (launcher.ts), what the host does with the messages
 * (runs.ts), the engine loop (src/engine/). Tested through test/engine/*.test.ts.
 */
import { z } from 'zod';
import type { StoredRunStatus } from '../../shared/records';

/** Any JS number, NaN and +-Infinity included (a diverged loss must reach the UI as NaN). */
const anyNumber = z.custom<number>((v) => typeof v === 'number', 'expected a number');

/** Final and intermediate run statuses the engine reports (records.ts RunStatus minus the host's own). */
export const ENGINE_STATUSES = ['running', 'paused', 'completed', 'stopped', 'failed'] as const satisfies readonly StoredRunStatus[];
export type EngineStatus = (typeof ENGINE_STATUSES)[number];

const backendReport = z.object({
  name: z.string(),
  tfjsBackend: z.string(),
  skipped: z.array(z.object({ name: z.string(), reason: z.string() })),
});

export const engineMessageSchema = z.discriminatedUnion('type', [
  /** The backend is up and the trainer built: training starts at `startStep` (the final eval-only step is `totalSteps`). */
  z.object({ type: z.literal('ready'), runId: z.number().int(), backend: backendReport, startStep: z.number().int(), totalSteps: z.number().int() }),
  /** A step was committed to the store (sent after its transaction). `metrics`: the KEY_METRICS the step has. */
  z.object({
    type: z.literal('step'),
    step: z.number().int(),
    /** The eval-only step after the last training step. */
    final: z.boolean(),
    totalSteps: z.number().int(),
    metrics: z.record(z.string(), anyNumber),
    /** Wall time of the step, ms. */
    wallMs: anyNumber,
    /** Checkpoint written with this step, if any. */
    checkpoint: z.string().nullable(),
  }),
  /** A step's scheduled evaluation was committed ahead of the step (its eval metrics and rows; the step is not committed yet). */
  z.object({ type: z.literal('evaluation'), step: z.number().int() }),
  /** The run's status changed (the engine wrote it to the store first). `error` with failed. */
  z.object({ type: z.literal('status'), status: z.enum(ENGINE_STATUSES), error: z.string().optional() }),
  z.object({ type: z.literal('log'), level: z.enum(['info', 'warn', 'error']), line: z.string() }),
  /** A corpus index build's progress (src/shared/corpusProgress.ts), before ready; `done` on its last report. */
  z.object({
    type: z.literal('indexProgress'),
    passages: z.number().int().nonnegative(),
    bytesRead: z.number().nonnegative(),
    totalBytes: z.number().nonnegative(),
    elapsedMs: z.number().nonnegative(),
    done: z.boolean(),
  }),
]);
export type EngineMessage = z.infer<typeof engineMessageSchema>;

export const hostMessageSchema = z.discriminatedUnion('type', [
  /** Pause before the next step (the current one finishes and commits). */
  z.object({ type: z.literal('pause') }),
  z.object({ type: z.literal('resume') }),
  /**
   * Stop as soon as possible without losing anything: between steps, before a step's update (the step is dropped,
   * weights untouched), or after the update in progress commits; the last committed step is then checkpointed.
   */
  z.object({ type: z.literal('stop') }),
]);
export type HostMessage = z.infer<typeof hostMessageSchema>;

/** Metrics a step message carries (when the step has them); the store has every metric. */
export const KEY_METRICS = [
  'reward/mean',
  'eval/macro/avg',
  'eval/macro/pass',
  'loss/total',
  'clip/frac_low',
  'clip/frac_high',
  'kl/approx',
  'time/step',
  // What the CLI's health warnings read (src/shared/runHealth.ts), with every role's valid rate (isKeyMetric).
  'groups/zero_std_frac',
  'reward/std',
  'clip/frac',
  'grad/norm',
  'update/skipped',
] as const;

/** Whether a step message carries this metric: a KEY_METRICS key or a role's valid rate (the health warnings read it). */
export function isKeyMetric(key: string): boolean {
  return (KEY_METRICS as readonly string[]).includes(key) || /^role\/[^/]+\/valid_rate$/.test(key);
}

export function parseEngineMessage(raw: unknown): EngineMessage {
  const r = engineMessageSchema.safeParse(raw);
  if (!r.success)
    throw new Error(`invalid engine message ${safeJson(raw)}: ${r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  return r.data;
}

export function parseHostMessage(raw: unknown): HostMessage {
  const r = hostMessageSchema.safeParse(raw);
  if (!r.success) throw new Error(`invalid host message ${safeJson(raw)}: expected { type: 'pause' | 'resume' | 'stop' }`);
  return r.data;
}

function safeJson(x: unknown): string {
  try {
    return (JSON.stringify(x) ?? String(x)).slice(0, 200);
  } catch {
    return String(x);
  }
}
