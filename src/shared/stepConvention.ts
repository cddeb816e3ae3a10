/**
 * The lab's one step convention, used by every surface that counts or labels steps (the UI's runs
 * table, dashboard and trace viewer, the CLI's `runs`, `show` and progress line, the reports):
 *
 * - A run of `steps` = S plans S updates. "Steps done" is the number of updates committed: a
 *   completed 30-step run reads 30/30; a run stopped after 5 committed updates of 8 reads 5/8.
 * - The store numbers its step records s = 0 .. S. Record s < S is update s + 1: its training
 *   metrics (rollouts, loss, clip, …) are plotted at x = s, because the policy that produced its
 *   rollouts had s updates behind it; its evaluation (when scheduled) ran before that update, so
 *   it too measures the policy after s updates. Record S is eval-only: the final evaluation,
 *   after the last update. So on every axis x = s means "the policy after s updates": training
 *   curves end at S - 1, evaluation at S.
 * - A checkpoint written by record s holds the weights after update s + 1 (after s + 1 updates).
 *
 * Pure and browser-safe (no Node built-ins). Tests: test/shared/stepConvention.test.ts, and
 * test/e2e/trace.test.ts / test/cli/help.test.ts compare the surfaces on one real run.
 */

/**
 * Updates committed, given the store's last committed step record (`runs.last_step`, -1: none)
 * and the planned steps: 0 .. steps (the final eval-only record S counts no extra update).
 */
export function updatesDone(lastStep: number, steps: number): number {
  return Math.max(0, Math.min(lastStep + 1, steps));
}

/** "done/planned", the one progress text: `5/8`, `30/30`. */
export function stepsText(lastStep: number, steps: number): string {
  return `${updatesDone(lastStep, steps)}/${steps}`;
}

/**
 * The store step record a progress push reports as just committed -> the run's last_step (a
 * push carries the record index; the final eval-only one is `steps`).
 */
export function lastStepAfterPush(push: { step: number }, lastStep: number): number {
  return Math.max(lastStep, push.step);
}

/** Updates a checkpoint written by step record `step` holds. */
export function checkpointUpdates(step: number): number {
  return step + 1;
}

/** How a checkpoint is named to a user: `after 10 updates (step 9)`. */
export function checkpointLabel(step: number): string {
  const n = checkpointUpdates(step);
  return `after ${n} update${n === 1 ? '' : 's'} (step ${step})`;
}

/** How an evaluation recorded at step record `step` of an S-step run is named: `after 10 updates`, `final (after 30 updates)`. */
export function evaluationLabel(step: number, steps: number): string {
  const base = `after ${step} update${step === 1 ? '' : 's'}`;
  return step >= steps ? `final (${base})` : base;
}
