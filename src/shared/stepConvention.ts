/**
 * The lab's one step convention: a step number is the number of updates done. Every surface that
 * counts, labels or plots steps uses it (the UI's runs table, dashboard, Compare, reports and
 * trace viewer; the CLI's `runs`, `show`, progress line, `eval --checkpoint N`, `export-model
 * --step N`, `serve-model --step N`; the resume plan; the metric series API and the CSV exports).
 *
 * - A run of `steps` = S plans S updates. "Steps done" is the number of updates committed: a
 *   completed 30-step run reads 30/30; a run stopped after 5 committed updates of 8 reads 5/8.
 * - Step N of training is the N-th update: its training metrics (rollouts, loss, clip, time, …)
 *   are plotted at x = N, so training curves run 1..S. Decision: the x of a training metric is
 *   the update it belongs to, as W&B and TensorBoard users expect (`global_step` after the
 *   optimizer step), not the number of updates behind the policy that sampled its rollouts
 *   (that is N - 1).
 * - An evaluation at step N measured the policy after N updates: evaluation curves run 0..S (0:
 *   before any update; S: the final evaluation).
 * - Checkpoint N holds the weights after N updates (`eval --checkpoint 6`: after 6 updates).
 * - A trace event of training step N was sampled for update N; an evaluation episode at step N
 *   was sampled from the policy after N updates.
 *
 * How the store maps to it (read time; nothing stored changes, so every old database reads right):
 * the store numbers its step records r = 0 .. S. Record r < S holds update r + 1 (its training
 * metrics, its training events, its checkpoint) and the evaluation that ran before that update
 * (after r updates). Record S (or the record after a budget's last update) is eval-only: the
 * final evaluation. So a training metric, event or checkpoint of record r is step r + 1, an
 * evaluation's of record r is step r; the eval-only record's engine bookkeeping (its time and
 * memory figures) belongs to no update and is left out of the training series. The API's run
 * fields `lastStep` and `checkpoints[].step` stay store records (updatesDone, checkpointUpdates
 * turn them into steps); series points, trace events and episodes come back in steps.
 *
 * Pure and browser-safe (no Node built-ins). Tests: test/shared/stepConvention.test.ts, and
 * test/e2e/stepAgreement.test.ts compares every surface on one real run.
 */
import { lookupMetric } from './metricCatalogue';

/** Which clock a stored row follows: a training update's, or an evaluation's. */
export type StepKind = 'train' | 'eval';

/**
 * Updates committed, given the store's last committed step record (`runs.last_step`, -1: none)
 * and the planned steps: 0 .. steps (the final eval-only record S counts no extra update).
 */
export function updatesDone(lastStep: number, steps: number): number {
  return Math.max(0, Math.min(lastStep + 1, steps));
}

/**
 * Updates a run has done, knowing its status: a completed run's last record is its eval-only
 * final record, whose index is the number of updates (fewer than planned when a budget ended it).
 */
export function runUpdatesDone(run: { status: string; lastStep: number }, steps: number): number {
  return run.status === 'completed' ? Math.max(0, Math.min(run.lastStep, steps)) : updatesDone(run.lastStep, steps);
}

/**
 * "done/planned", the one progress text: `5/8`, `30/30`. With the run's status, a completed run
 * that a budget ended early reads its real updates (`4/6`), not S/S (runUpdatesDone).
 */
export function stepsText(lastStep: number, steps: number, status?: string): string {
  return `${status === undefined ? updatesDone(lastStep, steps) : runUpdatesDone({ status, lastStep }, steps)}/${steps}`;
}

/**
 * The store step record a progress push reports as just committed -> the run's last_step (a
 * push carries the record index; the final eval-only one is `steps`).
 */
export function lastStepAfterPush(push: { step: number }, lastStep: number): number {
  return Math.max(lastStep, push.step);
}

/** The step (updates done) of a row of store record `record`: training rows are the record's update, evaluations before it. */
export function stepOfRecord(record: number, kind: StepKind): number {
  return kind === 'eval' ? record : record + 1;
}

/** The store record that holds step `step`'s rows of `kind` (the inverse of stepOfRecord). */
export function recordOfStep(step: number, kind: StepKind): number {
  return kind === 'eval' ? step : step - 1;
}

/** Whether a metric key is an evaluation's (catalogue producer `eval`; `eval/…` keys outside the catalogue too). */
export function metricStepKind(key: string): StepKind {
  const producer = lookupMetric(key)?.info.producer;
  return producer === 'eval' || (producer === undefined && key.startsWith('eval/')) ? 'eval' : 'train';
}

/**
 * The eval-only record of a run (its final evaluation), or null when it has none yet: a completed
 * run's last record is always eval-only (the trainer ends every run that way), a stopped or
 * failed one has none.
 */
export function evalOnlyRecord(run: { status: string; lastStep: number }): number | null {
  return run.status === 'completed' && run.lastStep >= 0 ? run.lastStep : null;
}

/**
 * A stored series of `key` as steps: each point's record mapped to its step; a training key's
 * point at the eval-only record (`finalRecord`, null: none) dropped (it belongs to no update).
 */
export function seriesInSteps<P extends { step: number }>(key: string, points: readonly P[], finalRecord: number | null): P[] {
  const kind = metricStepKind(key);
  const out: P[] = [];
  for (const p of points) {
    if (kind === 'train' && finalRecord !== null && p.step >= finalRecord) continue;
    out.push({ ...p, step: stepOfRecord(p.step, kind) });
  }
  return out;
}

/** A step range of `key` (either end optional) as the store's record range, for reading a series in steps. */
export function recordRange(key: string, range: { fromStep?: number; toStep?: number }): { fromStep?: number; toStep?: number } {
  const kind = metricStepKind(key);
  return {
    ...(range.fromStep !== undefined ? { fromStep: recordOfStep(range.fromStep, kind) } : {}),
    ...(range.toStep !== undefined ? { toStep: recordOfStep(range.toStep, kind) } : {}),
  };
}

/** Updates a checkpoint written by step record `record` holds: its step. */
export function checkpointUpdates(record: number): number {
  return record + 1;
}

/** The store record of checkpoint step `step` (the updates it holds). */
export function checkpointRecord(step: number): number {
  return step - 1;
}

/** How a checkpoint is named to a user: `step 10 (after 10 updates)`. */
export function checkpointLabel(record: number): string {
  const n = checkpointUpdates(record);
  return `step ${n} (after ${n} update${n === 1 ? '' : 's'})`;
}

/** How an evaluation at step `step` of an S-step run is named: `after 10 updates`, `final (after 30 updates)`. */
export function evaluationLabel(step: number, steps: number): string {
  const base = `after ${step} update${step === 1 ? '' : 's'}`;
  return step >= steps ? `final (${base})` : base;
}

/** The checkpoint steps of a run, as `eval --checkpoint`, `export-model --step` and `serve-model --step` take them. */
export function checkpointSteps(checkpoints: readonly { step: number }[]): number[] {
  return checkpoints.map((c) => checkpointUpdates(c.step));
}

/**
 * The checkpoint a user named by its step (`--checkpoint 6`, `--step 6`), else the last; an
 * error that names the steps that exist. `what`: the run, for the message.
 */
export function pickCheckpoint<C extends { step: number }>(checkpoints: readonly C[], wanted: string | undefined, what: string, flag: string): C {
  if (checkpoints.length === 0) throw new Error(`${what} has no checkpoints yet`);
  if (wanted === undefined) return checkpoints[checkpoints.length - 1];
  const hit = checkpoints.find((c) => String(checkpointUpdates(c.step)) === wanted.trim());
  if (!hit)
    throw new Error(
      `${what} has no checkpoint at step ${wanted} (${flag}); checkpoints at steps ${checkpointSteps(checkpoints).join(', ')} (a checkpoint's step is the updates it holds)`,
    );
  return hit;
}
