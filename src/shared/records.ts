/**
 * The domain records, one type per concept from the store to the screen: what the trainer hands
 * the store (member, event, episode, evaluation records; the event vocabulary of the design
 * card, ../shared/design/ARCHITECTURE.md "The event") and what the store's read queries return (event summary and detail,
 * stored member, episode, evaluation, checkpoint). The store returns these, the LabApi ships them
 * unchanged (src/shared/api.ts; typed arrays become number arrays once, in wire.ts), and the
 * renderer reads the same types. Ids are the database's row ids.
 *
 * Also the vocabularies every layer shares: a run's status (RUN_STATUSES, the one list the
 * store, host, engine protocol, API and screens use) and the trace list's filter (EventFilter:
 * the store's query, the API's validated input and the viewer's form all have this type).
 *
 * Not here: the store-only shapes (a step's write batch, run rows and patches, page requests:
 * src/core/store/records.ts) and the API's computed views (run summary, series: api.ts).
 * Browser-safe: no Node imports (test/layering.test.ts). Types and one constant list; checked by
 * tsc and by the store and API tests that read them (test/core/store/*.test.ts,
 * test/server/server.test.ts).
 */

// ---------------------------------------------------------------------------------------------
// Runs

/**
 * A run's status. The runs table stores every one but `queued` (its CHECK constraint, migrations 1
 * and 3); `queued` is a run waiting for an engine slot of its lab host (host/engineLimit.ts),
 * derived by the host from the run's live `queued` lease (store/leases.ts), so it ends with the
 * host that queued it. In the order the runs list offers them as filters.
 */
export const RUN_STATUSES = ['created', 'queued', 'running', 'paused', 'completed', 'stopped', 'interrupted', 'failed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
/** The statuses a runs row can hold: every one but the host-derived `queued`. */
export type StoredRunStatus = Exclude<RunStatus, 'queued'>;
/** Statuses a run can be resumed from (with its checkpoint and exact-resume state). */
export const RESUMABLE_STATUSES: readonly RunStatus[] = ['interrupted', 'stopped', 'failed'];
/** The statuses an engine ends a run with. */
export const FINAL_STATUSES = ['completed', 'stopped', 'failed'] as const satisfies readonly StoredRunStatus[];
export type FinalStatus = (typeof FINAL_STATUSES)[number];
export const isFinalStatus = (s: string): s is FinalStatus => (FINAL_STATUSES as readonly string[]).includes(s);

/**
 * The status a run shows (runs list, run page, suite tables alike): `queued` while it holds a live
 * queued lease and no engine of this host runs it, else its stored status.
 */
export function shownStatus(stored: StoredRunStatus, queued: boolean, active = false): RunStatus {
  return queued && !active ? 'queued' : stored;
}

// ---------------------------------------------------------------------------------------------
// Written by the trainer (one step's episodes, through the store's StepRecord)

/** One member output of an event (design card ARCHITECTURE.md "The event"). */
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

// ---------------------------------------------------------------------------------------------
// Read back by the store and shipped by the API

/** Keyset position in the trace list (ordered by step, then insertion). */
export interface EventCursor {
  step: number;
  id: number;
}

/** Filters of the trace list; every field optional, all given fields must hold (api.ts validates it). */
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
  split?: EpisodeRecord['split'];
}

/** An event without its members: one row of the trace list. */
export interface EventSummary extends Omit<EventRecord, 'members'> {
  id: number;
  runId: number;
  step: number;
  episodeId: number;
  memberCount: number;
  /** Members whose output failed to parse. */
  invalidMembers: number;
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

/**
 * A member as stored: MemberRecord with the token arrays grouped and optional. `T` is the token
 * detail's shape: the store's MemberTokens, or the API's TokensWithText (the host adds the text).
 */
export interface StoredMember<T extends MemberTokens = MemberTokens> extends Omit<
  MemberRecord,
  'promptTokens' | 'outputTokens' | 'logpOld' | 'mask' | 'logpCur'
> {
  id: number;
  promptLength: number;
  outputLength: number;
  /** Token detail; null for steps stored without it (tokenDetailEvery). */
  tokens: T | null;
}

/** Member token detail with the output decoded into text pieces (one per token; special tokens as `<eos>` etc.): what getEvent ships. */
export interface TokensWithText extends MemberTokens {
  outputText: string[];
}

export interface EventDetail<T extends MemberTokens = MemberTokens> extends EventSummary {
  members: StoredMember<T>[];
}

export interface EpisodeDetail extends Omit<EpisodeRecord, 'events'> {
  id: number;
  runId: number;
  step: number;
  /** In episode order (seq); members empty when read without them (the viewer's timeline). */
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
