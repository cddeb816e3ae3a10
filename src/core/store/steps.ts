/**
 * The write path of a training step: writeStep stores one StepRecord (metrics, episodes, their
 * events and members, evaluations, a checkpoint row, runs.last_step and the `steps` ledger row)
 * in ONE immediate transaction, so a step is all there or not there at all, also after kill -9.
 * truncateAfter removes every step after a given one (resuming from an older checkpoint), also in
 * one transaction. writeEvaluation stores a step's scheduled evaluation ahead of the step (its own
 * transaction, no `steps` row: its metrics, evaluation rows and its episodes of split 'eval'):
 * the only rows of a step that may exist before it is committed.
 * Not the read side (series.ts, traces.ts, results.ts).
 *
 * Rules the trainer relies on:
 * - Steps of a run are written in increasing order. A step already committed is refused
 *   (LabStoreError 'duplicate_step'), a step below the last committed one too
 *   ('step_out_of_order'); to redo steps, truncateAfter first. Gaps are allowed.
 * - Any failing insert (a CHECK, a duplicate event key, a non-finite reward) rolls the whole step
 *   back and rethrows with the episode/event/member it was writing prepended to the message.
 * - Metric values may be NaN or +-Infinity (NaN is stored as NULL and read back as NaN); rewards
 *   must be numbers (NaN is refused by NOT NULL).
 * - Token blobs are written only when `record.tokens`; token counts always. A member's logpCur
 *   (migration 2) is written with them when present, else NULL; its length must be the output's.
 *
 * Tests: test/core/store/steps.test.ts (round trip, atomicity, duplicates, truncation),
 * crash.test.ts (SIGKILL mid-run). Ingest speed: bench/store.bench.ts.
 */
import type { LabDb } from './db';
import { encodeFloat32, encodeInt32, encodeUint8 } from './blobs';
import { LabStoreError } from './errors';
import { METRIC_BLOCK_SHIFT } from './migrations/007_metric_blocks';
import type { EpisodeRecord, EventRecord, MemberRecord, StepRecord } from './records';

const LAST_STEP = 'SELECT last_step AS lastStep FROM runs WHERE id = ?';
const STEP_EXISTS = 'SELECT 1 AS one FROM steps WHERE run_id = ? AND step = ?';
const INSERT_STEP = 'INSERT INTO steps (run_id, step, wall_time, tokens) VALUES (?, ?, ?, ?)';
const INSERT_METRIC = 'INSERT INTO metrics (run_id, key, step, value, wall_time) VALUES (?, ?, ?, ?, ?)';
const INSERT_EPISODE = `INSERT INTO episodes (run_id, step, key, split, task_id, benchmark, rollout, final_answer,
  reward, correct, generated_tokens, calls, tool_calls, latency_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const INSERT_EVENT = `INSERT INTO events (episode_id, run_id, step, key, seq, kind, state_id, group_key, expected_k,
  member_count, invalid_members, complete, drop_reason, reward, advantage, log_ratio, ratio, clipped, split)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const INSERT_MEMBER = `INSERT INTO members (event_id, run_id, step, member_index, role, policy_id, policy_version,
  valid, parse_error, log_ratio, prompt_len, output_len, prompt, output, prompt_tokens, output_tokens, logp_old, mask, logp_cur)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const INSERT_EVALUATION = `INSERT INTO evaluations (run_id, step, benchmark, n, queries, avg_at_n, pass_at_n,
  tokens_per_query, calls_per_query, tool_calls_per_query, successes_per_mtok, latency_p50_ms, latency_p95_ms)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const INSERT_CHECKPOINT = 'INSERT INTO checkpoints (run_id, step, path, wall_time) VALUES (?, ?, ?, ?)';
const SET_LAST_STEP = 'UPDATE runs SET last_step = ? WHERE id = ?';

const TRUNCATE = [
  'DELETE FROM episodes WHERE run_id = ? AND step > ?', // cascades to events and members
  'DELETE FROM evaluations WHERE run_id = ? AND step > ?',
  'DELETE FROM checkpoints WHERE run_id = ? AND step > ?',
];
const TRUNCATE_STEPS = 'DELETE FROM steps WHERE run_id = ? AND step > ?';
/**
 * Metrics are truncated from the first step of the block the truncation cuts through (migration 7:
 * blocks of 16 steps), after reading that block's rows up to the step kept; those rows are then
 * written again, so the block trigger rebuilds the block from them (the delete trigger dropped it).
 */
const BLOCK_LEFT = `SELECT run_id, key, step, value, wall_time FROM metrics WHERE run_id = :runId AND step BETWEEN (:step >> ${METRIC_BLOCK_SHIFT}) << ${METRIC_BLOCK_SHIFT} AND :step`;
const TRUNCATE_METRICS = `DELETE FROM metrics WHERE run_id = :runId AND step >= (:step >> ${METRIC_BLOCK_SHIFT}) << ${METRIC_BLOCK_SHIFT}`;
const RESET_LAST_STEP = 'UPDATE runs SET last_step = coalesce((SELECT max(step) FROM steps WHERE run_id = :runId), -1) WHERE id = :runId';
const COMMITTED_STEPS = 'SELECT step FROM steps WHERE run_id = ? ORDER BY step';

/** SQLite stores NaN as NULL anyway; say so explicitly. */
const nullable = (x: number | null): number | null => (x === null || Number.isNaN(x) ? null : x);

/** Prefixes where in the step an insert failed, keeping the error's class and code. */
function annotate(e: unknown, where: string): never {
  if (e instanceof Error && !(e instanceof LabStoreError) && !e.message.startsWith('writeStep')) e.message = `${where}: ${e.message}`;
  throw e;
}

function checkStepOrder(db: LabDb, runId: number, step: number): void {
  const run = db.stmt<[number], { lastStep: number }>(LAST_STEP).get(runId);
  if (!run) throw new LabStoreError('run_not_found', `writeStep: no run with id ${runId}`);
  if (step > run.lastStep) return;
  if (db.stmt<[number, number], { one: number }>(STEP_EXISTS).get(runId, step)) {
    throw new LabStoreError(
      'duplicate_step',
      `writeStep: step ${step} of run ${runId} is already committed (last committed step ${run.lastStep}); ` +
        `to redo it, truncateAfter(${runId}, ${step - 1}) first`,
    );
  }
  throw new LabStoreError(
    'step_out_of_order',
    `writeStep: step ${step} of run ${runId} is below the last committed step ${run.lastStep}; steps are written in increasing order (truncateAfter to rewind)`,
  );
}

function insertMember(db: LabDb, eventId: number, runId: number, step: number, m: MemberRecord, tokens: boolean): void {
  const logpCur = tokens && m.logpCur ? m.logpCur : null;
  if (logpCur && logpCur.length !== m.outputTokens.length) {
    throw new Error(`logpCur has ${logpCur.length} values for ${m.outputTokens.length} output tokens`);
  }
  db.stmt(INSERT_MEMBER).run(
    eventId,
    runId,
    step,
    m.memberIndex,
    m.role,
    m.policyId,
    m.policyVersion,
    +m.valid,
    m.parseError,
    nullable(m.logRatio),
    m.promptTokens.length,
    m.outputTokens.length,
    m.prompt,
    m.output,
    tokens ? encodeInt32(m.promptTokens) : null,
    tokens ? encodeInt32(m.outputTokens) : null,
    tokens ? encodeFloat32(m.logpOld) : null,
    tokens ? encodeUint8(m.mask) : null,
    logpCur ? encodeFloat32(logpCur) : null,
  );
}

/** `split` is the episode's: events carry it (migration 6) so the trace list filters on an index. */
function insertEvent(db: LabDb, episodeId: number, runId: number, step: number, split: EpisodeRecord['split'], ev: EventRecord, tokens: boolean): void {
  const info = db.stmt(INSERT_EVENT).run(
    episodeId,
    runId,
    step,
    ev.key,
    ev.seq,
    ev.kind,
    ev.stateId,
    ev.group,
    ev.expectedK,
    ev.members.length,
    ev.members.reduce((n, m) => n + (m.valid ? 0 : 1), 0),
    +ev.complete,
    ev.dropReason,
    ev.reward,
    nullable(ev.advantage),
    nullable(ev.logRatio),
    nullable(ev.ratio),
    ev.clipped,
    split,
  );
  const eventId = Number(info.lastInsertRowid);
  for (const m of ev.members) {
    try {
      insertMember(db, eventId, runId, step, m, tokens);
    } catch (e) {
      annotate(e, `member ${m.memberIndex}`);
    }
  }
}

function insertEpisode(db: LabDb, runId: number, step: number, ep: EpisodeRecord, tokens: boolean): void {
  const info = db
    .stmt(INSERT_EPISODE)
    .run(
      runId,
      step,
      ep.key,
      ep.split,
      ep.taskId,
      ep.benchmark,
      ep.rollout,
      ep.finalAnswer,
      ep.reward,
      +ep.correct,
      ep.generatedTokens,
      ep.calls,
      ep.toolCalls,
      ep.latencyMs,
    );
  const episodeId = Number(info.lastInsertRowid);
  for (const ev of ep.events) {
    try {
      insertEvent(db, episodeId, runId, step, ep.split, ev, tokens);
    } catch (e) {
      annotate(e, `event "${ev.key}"`);
    }
  }
}

function writeStepBody(db: LabDb, runId: number, r: StepRecord): void {
  checkStepOrder(db, runId, r.step);
  const wall = Math.round(r.wallTime);
  db.stmt(INSERT_STEP).run(runId, r.step, wall, +r.tokens);
  const metric = db.stmt(INSERT_METRIC);
  for (const [key, value] of Object.entries(r.metrics)) {
    try {
      metric.run(runId, key, r.step, nullable(value), wall);
    } catch (e) {
      annotate(e, `metric "${key}"`);
    }
  }
  for (const ep of r.episodes) {
    try {
      insertEpisode(db, runId, r.step, ep, r.tokens);
    } catch (e) {
      annotate(e, `episode "${ep.key}"`);
    }
  }
  for (const ev of r.evaluations ?? []) insertEvaluation(db, runId, r.step, ev);
  if (r.checkpoint) db.stmt(INSERT_CHECKPOINT).run(runId, r.step, r.checkpoint.path, wall);
  db.stmt(SET_LAST_STEP).run(r.step, runId);
}

function insertEvaluation(db: LabDb, runId: number, step: number, ev: NonNullable<StepRecord['evaluations']>[number]): void {
  db.stmt(INSERT_EVALUATION).run(
    runId,
    step,
    ev.benchmark,
    ev.n,
    ev.queries,
    ev.avgAtN,
    ev.passAtN,
    ev.tokensPerQuery,
    ev.callsPerQuery,
    ev.toolCallsPerQuery,
    ev.successesPerMTok,
    ev.latencyP50Ms,
    ev.latencyP95Ms,
  );
}

/** Writes one training step in one transaction: all of it or nothing. See the file header. */
export function writeStep(db: LabDb, runId: number, record: StepRecord): void {
  if (!Number.isInteger(record.step) || record.step < 0) {
    throw new LabStoreError('step_out_of_order', `writeStep: step must be an integer >= 0, got ${record.step}`);
  }
  try {
    db.raw.transaction(() => writeStepBody(db, runId, record)).immediate();
  } catch (e) {
    annotate(e, `writeStep run ${runId} step ${record.step}`);
  }
}

/** What writeEvaluation stores: a step's evaluation, with its episodes (split 'eval' only) if any. */
export type EvaluationWrite = Pick<StepRecord, 'step' | 'wallTime' | 'metrics' | 'evaluations'> & Partial<Pick<StepRecord, 'episodes' | 'tokens'>>;

/**
 * Writes a step's scheduled evaluation (its eval metrics, evaluation rows and eval episodes with
 * their events and members) before the step itself is committed, in its own transaction, so the
 * curves and the trace viewer's eval split show it while the step's rollouts and update still
 * run (step 0's evaluation of math-quick takes ~20 s). It adds no `steps` row and leaves
 * runs.last_step alone: the step is not committed until writeStep, whose record must then not
 * repeat these metric keys or episodes. An evaluation left without its step (a stop, crash or
 * failure before the step commits) is removed by the resume's truncateAfter like any row after
 * the checkpoint (its episodes cascade to their events and members), and is redone with the
 * step; written twice without that, the duplicate metric or episode key refuses the second
 * write whole. Training episodes are refused here: they belong to the step's own transaction.
 */
export function writeEvaluation(db: LabDb, runId: number, r: EvaluationWrite): void {
  try {
    db.raw
      .transaction(() => {
        checkStepOrder(db, runId, r.step);
        const wall = Math.round(r.wallTime);
        const metric = db.stmt(INSERT_METRIC);
        for (const [key, value] of Object.entries(r.metrics)) metric.run(runId, key, r.step, nullable(value), wall);
        for (const ev of r.evaluations ?? []) insertEvaluation(db, runId, r.step, ev);
        for (const ep of r.episodes ?? []) {
          if (ep.split !== 'eval') throw new Error(`episode "${ep.key}" has split "${ep.split}": only eval episodes are written ahead of their step`);
          try {
            insertEpisode(db, runId, r.step, ep, r.tokens ?? false);
          } catch (e) {
            annotate(e, `episode "${ep.key}"`);
          }
        }
      })
      .immediate();
  } catch (e) {
    annotate(e, `writeEvaluation run ${runId} step ${r.step}`);
  }
}

/**
 * Records a checkpoint of an already committed step (a stop between scheduled checkpoints:
 * the engine saves the policies as they are after that step, so a resume loses nothing).
 */
export function addCheckpoint(db: LabDb, runId: number, step: number, path: string, wallTime = Date.now()): void {
  if (!db.stmt<[number, number], { one: number }>(STEP_EXISTS).get(runId, step)) {
    throw new LabStoreError('step_not_committed', `addCheckpoint: step ${step} of run ${runId} is not committed`);
  }
  db.stmt(INSERT_CHECKPOINT).run(runId, step, path, Math.round(wallTime));
}

/**
 * Deletes everything recorded after `step` (-1: every step) and sets runs.last_step to the last
 * step left, in one transaction. Returns the number of steps removed. For resuming from a
 * checkpoint older than the last committed step: truncateAfter(run, checkpoint.step).
 */
export function truncateAfter(db: LabDb, runId: number, step: number): number {
  return db.raw
    .transaction(() => {
      if (!db.stmt(LAST_STEP).get(runId)) throw new LabStoreError('run_not_found', `truncateAfter: no run with id ${runId}`);
      const left = db.stmt<[{ runId: number; step: number }], unknown[]>(BLOCK_LEFT).raw(true).all({ runId, step });
      db.stmt(TRUNCATE_METRICS).run({ runId, step });
      for (const row of left) db.stmt(INSERT_METRIC).run(...row);
      for (const sql of TRUNCATE) db.stmt(sql).run(runId, step);
      const removed = db.stmt(TRUNCATE_STEPS).run(runId, step).changes;
      db.stmt(RESET_LAST_STEP).run({ runId });
      return removed;
    })
    .immediate();
}

/** The committed step numbers of a run, ascending. */
export function committedSteps(db: LabDb, runId: number): number[] {
  return db
    .stmt<[number], { step: number }>(COMMITTED_STEPS)
    .all(runId)
    .map((r) => r.step);
}
