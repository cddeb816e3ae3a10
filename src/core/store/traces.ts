/**
 * Trace reads for the trace viewer: the event list (filtered, keyset-paged in step order), one
 * event with its members and decoded tokens, one episode with its events in order. Not the write
 * path (steps.ts) and not metrics (series.ts).
 *
 * The list is ordered by (step, id): id grows with insertion, so within a step events come in
 * episode order then seq. Paging is keyset (`after` = the previous page's last row), so a page
 * costs the same at the end of a long run as at the start, and rows written meanwhile never shift
 * a page. Filters are AND-ed; the SQL text depends only on which filters are set, so each
 * combination is prepared once per connection.
 *
 * Tests: test/core/store/traces.test.ts.
 */
import { decodeFloat32, decodeInt32, decodeUint8 } from './blobs';
import type { LabDb } from './db';
import type { EpisodeDetail, EventDetail, EventFilter, EventPage, EventPageRequest, EventSummary, StoredMember } from './records';

/**
 * The events and episodes columns under their record names (snake_case to the record's camelCase),
 * so a row is its record but for the 0/1 booleans (`complete`, `correct`).
 */
const EVENT_COLUMNS = `id, run_id AS runId, step, episode_id AS episodeId, key, seq, kind, state_id AS stateId,
  group_key AS "group", expected_k AS expectedK, member_count AS memberCount, invalid_members AS invalidMembers,
  complete, drop_reason AS dropReason, reward, advantage, log_ratio AS logRatio, ratio, clipped`;
const EPISODE_COLUMNS = `id, run_id AS runId, step, key, split, task_id AS taskId, benchmark, rollout,
  final_answer AS finalAnswer, reward, correct, generated_tokens AS generatedTokens, calls, tool_calls AS toolCalls,
  latency_ms AS latencyMs`;

type EventRow = Omit<EventSummary, 'complete'> & { complete: number };
type EpisodeRow = Omit<EpisodeDetail, 'events' | 'correct'> & { correct: number };

interface MemberRow {
  id: number;
  event_id: number;
  member_index: number;
  role: string;
  policy_id: string;
  policy_version: number;
  valid: number;
  parse_error: string | null;
  log_ratio: number | null;
  prompt_len: number;
  output_len: number;
  prompt: string;
  output: string;
  prompt_tokens: Buffer | null;
  output_tokens: Buffer | null;
  logp_old: Buffer | null;
  mask: Buffer | null;
  /** Added by migration 2; NULL on older rows. */
  logp_cur: Buffer | null;
}

/**
 * The detail reads, one parameter each (an id). Each is a search on a primary key or a UNIQUE
 * index and needs no sort (members UNIQUE (event_id, member_index), events UNIQUE (episode_id,
 * seq)), so one event with its members costs the same in a million-member run as in a small one;
 * traces.test.ts checks the query plans.
 */
export const DETAIL_SQL = {
  event: `SELECT ${EVENT_COLUMNS} FROM events WHERE id = ?`,
  eventMembers: 'SELECT * FROM members WHERE event_id = ? ORDER BY member_index',
  episode: `SELECT ${EPISODE_COLUMNS} FROM episodes WHERE id = ?`,
  episodeEvents: `SELECT ${EVENT_COLUMNS} FROM events WHERE episode_id = ? ORDER BY seq`,
  episodeMembers: `SELECT m.* FROM members m JOIN events e ON e.id = m.event_id
  WHERE e.episode_id = ? ORDER BY e.seq, m.member_index`,
} as const;
const EVENT = DETAIL_SQL.event;
const EVENT_MEMBERS = DETAIL_SQL.eventMembers;
const EPISODE = DETAIL_SQL.episode;
const EPISODE_EVENTS = DETAIL_SQL.episodeEvents;
const EPISODE_MEMBERS = DETAIL_SQL.episodeMembers;

const MAX_PAGE = 1000;

const toSummary = (r: EventRow): EventSummary => ({ ...r, complete: r.complete === 1 });

function toMember(r: MemberRow): StoredMember {
  return {
    id: r.id,
    memberIndex: r.member_index,
    role: r.role,
    policyId: r.policy_id,
    policyVersion: r.policy_version,
    prompt: r.prompt,
    output: r.output,
    valid: r.valid === 1,
    parseError: r.parse_error,
    logRatio: r.log_ratio,
    promptLength: r.prompt_len,
    outputLength: r.output_len,
    tokens:
      r.prompt_tokens && r.output_tokens && r.logp_old && r.mask
        ? {
            promptTokens: decodeInt32(r.prompt_tokens),
            outputTokens: decodeInt32(r.output_tokens),
            logpOld: decodeFloat32(r.logp_old),
            mask: decodeUint8(r.mask),
            logpCur: r.logp_cur ? decodeFloat32(r.logp_cur) : null,
          }
        : null,
  };
}

/** WHERE clause and named parameters for a filter; the SQL depends only on which fields are set. */
function whereClause(runId: number, f: EventFilter): { sql: string; params: Record<string, unknown> } {
  const clauses = ['e.run_id = :runId'];
  const params: Record<string, unknown> = { runId };
  const add = (sql: string, name?: string, value?: unknown): void => {
    clauses.push(sql);
    if (name) params[name] = value;
  };
  if (f.fromStep !== undefined) add('e.step >= :fromStep', 'fromStep', f.fromStep);
  if (f.toStep !== undefined) add('e.step <= :toStep', 'toStep', f.toStep);
  if (typeof f.kind === 'string') add('e.kind = :kind', 'kind', f.kind);
  else if (f.kind) add('e.kind IN (SELECT value FROM json_each(:kinds))', 'kinds', JSON.stringify(f.kind));
  if (f.k !== undefined) add('e.expected_k = :k', 'k', f.k);
  if (f.minReward !== undefined) add('e.reward >= :minReward', 'minReward', f.minReward);
  if (f.maxReward !== undefined) add('e.reward <= :maxReward', 'maxReward', f.maxReward);
  if (f.clipped === 'any') add('e.clipped IS NOT NULL');
  else if (f.clipped === 'none') add('e.clipped IS NULL');
  else if (f.clipped) add('e.clipped = :clipped', 'clipped', f.clipped);
  if (f.role !== undefined) add('EXISTS (SELECT 1 FROM members m WHERE m.event_id = e.id AND m.role = :role)', 'role', f.role);
  if (f.complete !== undefined) add('e.complete = :complete', 'complete', +f.complete);
  if (f.parseFailures === true) add('e.invalid_members > 0');
  else if (f.parseFailures === false) add('e.invalid_members = 0');
  if (f.split !== undefined) add('e.split = :split', 'split', f.split); // the episode's split (migration 6); see eventsTable
  return { sql: clauses.join(' AND '), params };
}

/**
 * The list's and count's table. With a split (the viewer always sends one) the read must go
 * through events_by_split (migration 6): equal on (run_id, split), then in (step, id) order, it
 * reads only matching rows. Without statistics (nothing runs ANALYZE) SQLite's default estimates
 * tie it with events_by_step as soon as two terms bound the step (fromStep and toStep, or a step
 * bound and the page cursor), and the tie goes to the narrower events_by_step, which walks the
 * other split's events too (a split=eval page from step 500 read every training event up to the
 * next evaluation). The tie cannot be broken with a unary `+`: both indexes need the step terms.
 * INDEXED BY makes it a requirement; eventSplit.test.ts checks the plans.
 */
const eventsTable = (f: EventFilter): string => (f.split === undefined ? 'events e' : 'events e INDEXED BY events_by_split');

/** One page of event summaries matching `filter`, in (step, id) order. */
export function listEvents(db: LabDb, runId: number, filter: EventFilter = {}, page: EventPageRequest): EventPage {
  if (!(Number.isInteger(page.limit) && page.limit >= 1 && page.limit <= MAX_PAGE)) {
    throw new Error(`listEvents: page.limit must be an integer in 1..${MAX_PAGE}, got ${page.limit}`);
  }
  const { sql, params } = whereClause(runId, filter);
  const after = page.after ? ' AND (e.step, e.id) > (:afterStep, :afterId)' : '';
  if (page.after) Object.assign(params, { afterStep: page.after.step, afterId: page.after.id });
  params.limit = page.limit + 1; // one extra row says whether a next page exists
  const rows = db
    .stmt<[Record<string, unknown>], EventRow>(`SELECT ${EVENT_COLUMNS} FROM ${eventsTable(filter)} WHERE ${sql}${after} ORDER BY e.step, e.id LIMIT :limit`)
    .all(params);
  const events = rows.slice(0, page.limit).map(toSummary);
  const last = events[events.length - 1];
  return { events, next: rows.length > page.limit ? { step: last.step, id: last.id } : null };
}

/** How many events match `filter` (for "n events" in the trace list; scans the matches). */
export function countEvents(db: LabDb, runId: number, filter: EventFilter = {}): number {
  const { sql, params } = whereClause(runId, filter);
  return db
    .stmt(`SELECT count(*) FROM ${eventsTable(filter)} WHERE ${sql}`)
    .pluck()
    .get(params) as number;
}

/** An event's split (its episode's: migration 6 copies it onto the event); null if absent. The API maps its step by it (src/shared/stepConvention.ts). */
export function eventSplit(db: LabDb, eventId: number): 'train' | 'eval' | null {
  return db.stmt<[number], { split: 'train' | 'eval' }>('SELECT split FROM events WHERE id = ?').get(eventId)?.split ?? null;
}

/** One event with its members (tokens decoded when the step stored them); null if absent. */
export function getEvent(db: LabDb, eventId: number): EventDetail | null {
  const row = db.stmt<[number], EventRow>(EVENT).get(eventId);
  if (!row) return null;
  const members = db.stmt<[number], MemberRow>(EVENT_MEMBERS).all(eventId).map(toMember);
  return { ...toSummary(row), members };
}

export interface EpisodeReadOptions {
  /**
   * Read each event's members too (default true). The trace viewer's episode timeline needs only
   * the events: without members no member row and no token blob is read or decoded.
   */
  members?: boolean;
}

/** One episode with its events in seq order, each with its members (empty with `members: false`); null if absent. */
export function getEpisode(db: LabDb, episodeId: number, options: EpisodeReadOptions = {}): EpisodeDetail | null {
  const ep = db.stmt<[number], EpisodeRow>(EPISODE).get(episodeId);
  if (!ep) return null;
  const byEvent = new Map<number, StoredMember[]>();
  if (options.members ?? true) {
    for (const m of db.stmt<[number], MemberRow>(EPISODE_MEMBERS).all(episodeId)) {
      const list = byEvent.get(m.event_id) ?? [];
      list.push(toMember(m));
      byEvent.set(m.event_id, list);
    }
  }
  const events = db
    .stmt<[number], EventRow>(EPISODE_EVENTS)
    .all(episodeId)
    .map((r) => ({ ...toSummary(r), members: byEvent.get(r.id) ?? [] }));
  return { ...ep, correct: ep.correct === 1, events };
}
