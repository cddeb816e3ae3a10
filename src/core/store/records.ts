/**
 * What the engine hands the store for one training step, and what the store's read queries
 * return: the event vocabulary of docs/ARCHITECTURE.md as plain records. The trainer builds
 * these; the store writes one StepRecord in one transaction. Browser-safe types only (the
 * renderer's DTOs will mirror the read shapes).
 */

export type RunStatus = 'created' | 'running' | 'paused' | 'completed' | 'failed' | 'interrupted' | 'stopped';

export interface RunRecord {
  id: number;
  name: string;
  /** Preset the config started from, if any. */
  preset: string | null;
  /** Frozen config snapshot (the full, validated run config), as stored. */
  config: unknown;
  status: RunStatus;
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

/** One member output of an event (ARCHITECTURE.md "The event"). */
export interface MemberRecord {
  /** Index of the member within its active set, 0..K-1. */
  memberIndex: number;
  role: string;
  policyId: string;
  policyVersion: number;
  prompt: string;
  output: string;
  /** Whether the output parsed; otherwise parseError says why. */
  valid: boolean;
  parseError: string | null;
  /** Token ids of the prompt and of the generated output. */
  promptTokens: Int32Array;
  outputTokens: Int32Array;
  /** Behaviour log-prob of each generated token (nats). */
  logpOld: Float32Array;
  /** Loss mask of each generated token (0/1). */
  mask: Uint8Array;
  /** Member log-ratio l_{e,j} at the last update epoch (nats), if computed. */
  logRatio: number | null;
  /**
   * Current-policy log-prob of each generated token at the member's last update (nats; the
   * values that update's loss saw, before its optimizer step), one per output token, masked ones
   * included; logpCur - logpOld is the token's log-ratio and its masked sum is `logRatio`.
   * Absent or null when the member took part in no update (dropped event, eval, no update run).
   * Stored only with token detail (StepRecord.tokens), like logpOld.
   */
  logpCur?: Float32Array | null;
}

export interface EventRecord {
  /** Event id, unique within the run (e.g. `s12/t3/r1/e4`). */
  key: string;
  /** Position of the event in its episode, 0-based. */
  seq: number;
  kind: string;
  /** Pre-action state id. */
  stateId: string;
  /** Group key of comparable events. */
  group: string;
  expectedK: number;
  complete: boolean;
  dropReason: string | null;
  reward: number;
  advantage: number | null;
  /** Set log-ratio, ratio and clip state from the last update epoch (per-event variants). */
  logRatio: number | null;
  ratio: number | null;
  clipped: 'low' | 'high' | null;
  members: MemberRecord[];
}

export interface EpisodeRecord {
  /** Episode key, unique within the run. */
  key: string;
  split: 'train' | 'eval';
  taskId: string;
  benchmark: string;
  /** Rollout index within the task's group (0..G-1). */
  rollout: number;
  finalAnswer: string | null;
  reward: number;
  correct: boolean;
  generatedTokens: number;
  calls: number;
  toolCalls: number;
  latencyMs: number;
  events: EventRecord[];
}

export interface EvaluationRecord {
  benchmark: string;
  /** Samples per query. */
  n: number;
  queries: number;
  avgAtN: number;
  passAtN: number;
  tokensPerQuery: number;
  callsPerQuery: number;
  toolCallsPerQuery: number;
  successesPerMTok: number;
  latencyP50Ms: number;
  latencyP95Ms: number;
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
// Read shapes (added by the store): what the store's read queries return, and their inputs.
// Browser-safe like the records above; ids are the database's row ids.

/** A new run, as the host creates it (status defaults to 'created', createdAt to now). */
export interface NewRunRecord {
  name: string;
  preset?: string | null;
  config: unknown;
  seed: number;
  workflow: string;
  algorithm: string;
  status?: RunStatus;
  createdAt?: number;
}

/** Fields the host and engine change over a run's life; absent or undefined = unchanged, null = cleared. */
export interface RunPatch {
  status?: RunStatus;
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

/** Filters of the trace list; every field optional, all given fields must hold. */
export interface EventFilter {
  fromStep?: number;
  toStep?: number;
  kind?: string | string[];
  /** Expected cardinality K. */
  k?: number;
  minReward?: number;
  maxReward?: number;
  /** 'any': clipped low or high; 'none': not clipped. */
  clipped?: 'low' | 'high' | 'any' | 'none';
  /** Events with at least one member of this role. */
  role?: string;
  /** Event validity: complete (true) or dropped (false). */
  complete?: boolean;
  /** true: at least one member's output failed to parse; false: every member parsed. */
  parseFailures?: boolean;
  split?: 'train' | 'eval';
}

/** Keyset position in the trace list (ordered by step, then insertion). */
export interface EventCursor {
  step: number;
  id: number;
}

export interface EventPageRequest {
  /** Rows per page, 1..1000. */
  limit: number;
  /** Continue after this row (the previous page's `next`). */
  after?: EventCursor | null;
}

/** An event without its members: one row of the trace list. */
export interface EventSummary {
  id: number;
  runId: number;
  step: number;
  episodeId: number;
  key: string;
  seq: number;
  kind: string;
  stateId: string;
  group: string;
  expectedK: number;
  memberCount: number;
  /** Members whose output failed to parse. */
  invalidMembers: number;
  complete: boolean;
  dropReason: string | null;
  reward: number;
  advantage: number | null;
  logRatio: number | null;
  ratio: number | null;
  clipped: 'low' | 'high' | null;
}

export interface EventPage {
  events: EventSummary[];
  /** Cursor for the next page; null on the last page. */
  next: EventCursor | null;
}

/** Token-level detail of a member, present only for steps that stored tokens. */
export interface MemberTokens {
  promptTokens: Int32Array;
  outputTokens: Int32Array;
  logpOld: Float32Array;
  mask: Uint8Array;
  /** Current log-probs at the member's last update (MemberRecord.logpCur); null when not recorded. */
  logpCur: Float32Array | null;
}

/** A member as stored: MemberRecord with the token arrays grouped and optional. */
export interface StoredMember extends Omit<MemberRecord, 'promptTokens' | 'outputTokens' | 'logpOld' | 'mask' | 'logpCur'> {
  id: number;
  promptLength: number;
  outputLength: number;
  tokens: MemberTokens | null;
}

export interface EventDetail extends EventSummary {
  members: StoredMember[];
}

export interface EpisodeDetail extends Omit<EpisodeRecord, 'events'> {
  id: number;
  runId: number;
  step: number;
  /** In episode order (seq). */
  events: EventDetail[];
}

export interface StoredEvaluation extends EvaluationRecord {
  step: number;
}

export interface CheckpointInfo {
  runId: number;
  step: number;
  path: string;
  wallTime: number;
}
