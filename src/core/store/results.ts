/**
 * Evaluation and checkpoint reads: a run's evaluation rows in step order, its checkpoints, and the
 * latest one (where a resume starts). Rows are written by writeStep (steps.ts) in the step's
 * transaction, so a checkpoint listed here belongs to a committed step. Not checkpoint file I/O
 * (src/core/models). Tests: test/core/store/steps.test.ts.
 */
import type { LabDb } from './db';
import type { CheckpointInfo, StoredEvaluation } from './records';

interface EvaluationRow {
  step: number;
  benchmark: string;
  n: number;
  queries: number;
  avg_at_n: number;
  pass_at_n: number;
  tokens_per_query: number;
  calls_per_query: number;
  tool_calls_per_query: number;
  successes_per_mtok: number;
  latency_p50_ms: number;
  latency_p95_ms: number;
}

const EVALUATIONS = 'SELECT * FROM evaluations WHERE run_id = ? ORDER BY step, benchmark';
const CHECKPOINTS = 'SELECT run_id AS runId, step, path, wall_time AS wallTime FROM checkpoints WHERE run_id = ? ORDER BY step';
const LATEST_CHECKPOINT = `SELECT run_id AS runId, step, path, wall_time AS wallTime FROM checkpoints
  WHERE run_id = ? ORDER BY step DESC LIMIT 1`;

export function evaluations(db: LabDb, runId: number): StoredEvaluation[] {
  return db
    .stmt<[number], EvaluationRow>(EVALUATIONS)
    .all(runId)
    .map((r) => ({
      step: r.step,
      benchmark: r.benchmark,
      n: r.n,
      queries: r.queries,
      avgAtN: r.avg_at_n,
      passAtN: r.pass_at_n,
      tokensPerQuery: r.tokens_per_query,
      callsPerQuery: r.calls_per_query,
      toolCallsPerQuery: r.tool_calls_per_query,
      successesPerMTok: r.successes_per_mtok,
      latencyP50Ms: r.latency_p50_ms,
      latencyP95Ms: r.latency_p95_ms,
    }));
}

export function checkpoints(db: LabDb, runId: number): CheckpointInfo[] {
  return db.stmt<[number], CheckpointInfo>(CHECKPOINTS).all(runId);
}

export function latestCheckpoint(db: LabDb, runId: number): CheckpointInfo | null {
  return db.stmt<[number], CheckpointInfo>(LATEST_CHECKPOINT).get(runId) ?? null;
}
