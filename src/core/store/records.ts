/**
 * The store-only shapes: one training step's write batch (StepRecord), run rows and the fields
 * that change over a run's life, metric points, and the inputs of the read queries (pages). The
 * domain records the store writes and returns (member, event, episode, evaluation, checkpoint),
 * the run status and the trace filter are src/shared/records.ts's, re-exported here so store code
 * imports one module.
 * Browser-safe types only. Checked by tsc and the store tests (test/core/store/*.test.ts).
 */
import type { EpisodeRecord, EvaluationRecord, EventCursor, StoredRunStatus } from '../../shared/records';

export type * from '../../shared/records';

export interface RunRecord {
  id: number;
  name: string;
  /** Preset the config started from, if any. */
  preset: string | null;
  /** Frozen config snapshot (the full, validated run config), as stored. */
  config: unknown;
  status: StoredRunStatus;
  /** Backend in use (`node-gpu`, `wasm` …), null until the engine starts. */
  backend: string | null;
  seed: number;
  workflow: string;
  algorithm: string;
  createdAt: number; // ms since epoch
  startedAt: number | null;
  endedAt: number | null;
  /** Failure or interruption reason. */
  error: string | null;
  /** Last committed training step (-1 before the first). */
  lastStep: number;
}

export interface StepRecord {
  step: number;
  /** Wall-clock time of the step's end, ms since epoch. */
  wallTime: number;
  metrics: Record<string, number>;
  /** Episodes of the step; token-level member detail may be omitted (sampled steps) via `tokens`. */
  episodes: EpisodeRecord[];
  /** Whether member token blobs are stored for this step (token detail every Nth step). */
  tokens: boolean;
  evaluations?: EvaluationRecord[];
  checkpoint?: { path: string };
}

// ---------------------------------------------------------------------------------------------
// Run rows, and the inputs of the read queries.

/** A new run, as the host creates it (status defaults to 'created', createdAt to now). */
export interface NewRunRecord {
  name: string;
  preset?: string | null;
  config: unknown;
  seed: number;
  workflow: string;
  algorithm: string;
  status?: StoredRunStatus;
  createdAt?: number;
}

/** Fields the host and engine change over a run's life; absent or undefined = unchanged, null = cleared. */
export interface RunPatch {
  status?: StoredRunStatus;
  backend?: string | null;
  error?: string | null;
  startedAt?: number | null;
  endedAt?: number | null;
}

/** One point of a metric series. NaN values are stored as NULL and read back as NaN. */
export interface MetricPoint {
  step: number;
  value: number;
  wallTime: number;
}

export interface MetricSeriesOptions {
  fromStep?: number;
  toStep?: number;
  /** At most this many points (>= 2): min/max per bucket, spikes kept. Absent: every point. */
  maxPoints?: number;
}

export interface EventPageRequest {
  /** Rows per page, 1..1000. */
  limit: number;
  /** Continue after this row (the previous page's `next`). */
  after?: EventCursor | null;
}
