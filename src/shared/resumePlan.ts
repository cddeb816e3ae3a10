/**
 * What a Resume will do, said before it does it (the CLI's `train --resume` and the UI's Resume
 * both show this text first): a resume restarts from the run's latest checkpoint, and every step
 * committed after that checkpoint is removed and recomputed (the engine's prepareStart). A stop
 * checkpoints the last committed step, so after a stop nothing is redone; after a crash or a
 * failure the steps after the last scheduled checkpoint are.
 *
 * Steps are updates done (src/shared/stepConvention.ts): "continues at step 6 from the checkpoint
 * of step 5" after a stop at 5 updates, the same numbers `show` and `eval --checkpoint` use.
 *
 * Not here: the truncation itself (src/engine/runEngine.ts prepareStart). Pure and browser-safe.
 * Tests: test/engine/stopResume.test.ts (against real stopped runs), test/shared/resumePlan.test.ts.
 */
import { checkpointUpdates } from './stepConvention';

/** The plan, in steps (updates done: src/shared/stepConvention.ts). */
export interface ResumePlan {
  /** The first update the resumed engine runs (1 on a fresh start). */
  fromStep: number;
  /** The step of the checkpoint it starts from: the updates it holds (null: none, a fresh start). */
  checkpointStep: number | null;
  /** Committed steps that will be removed and recomputed. */
  redo: number[];
  /** One or two sentences for a person. */
  text: string;
}

const span = (steps: number[]): string =>
  steps.length === 1 ? `step ${steps[0]} (1 step) was` : `steps ${steps[0]}-${steps[steps.length - 1]} (${steps.length} steps) were`;

/**
 * The plan, from the run's last committed step record (-1: none) and its checkpoints' step
 * records (the store's numbering, as the API's run detail carries them); the plan is in steps.
 */
export function resumePlan(lastStep: number, checkpointRecords: readonly number[]): ResumePlan {
  const usable = checkpointRecords.filter((s) => s <= lastStep);
  const checkpointStep = usable.length ? checkpointUpdates(Math.max(...usable)) : null;
  const fromStep = (checkpointStep ?? 0) + 1;
  const redo: number[] = [];
  // Record r holds update r + 1: committed records after the checkpoint's are steps fromStep .. lastStep + 1.
  for (let s = fromStep; s <= lastStep + 1; s++) redo.push(s);
  let text: string;
  if (checkpointStep === null) {
    text = redo.length
      ? `Resume restarts the run at step 1: it has no checkpoint, so ${span(redo)} committed and will be removed and recomputed.`
      : 'Resume starts the run at step 1 (nothing is committed yet).';
  } else {
    text =
      `Resume continues at step ${fromStep} from the checkpoint of step ${checkpointStep} (after ${checkpointStep} update${checkpointStep === 1 ? '' : 's'}); ` +
      (redo.length ? `${span(redo)} committed after it and will be recomputed (their points are replaced).` : 'nothing committed is redone.');
  }
  return { fromStep, checkpointStep, redo, text };
}

/**
 * Whether a failed run's error is a config error (a field that cannot work: a missing
 * `policies.init`, heads that do not divide the width, a bad option): resuming it would fail the
 * same way, so the UI offers "Clone and edit" instead of Resume. Errors of the core's config
 * boundaries name `run config:` / `model config:` / `objective config:` / `... workflow config:`
 * or a `field "policies.…"` (src/core/util/schemaError.ts, src/core/config/initPath.ts).
 */
export function isConfigError(error: string | null | undefined): boolean {
  return !!error && /\b(run|model|objective|workflow) config: |field "policies\.[\w.]+"/.test(error);
}
