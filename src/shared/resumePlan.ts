/**
 * What a Resume will do, said before it does it (the CLI's `train --resume` and the UI's Resume
 * both show this text first): a resume restarts from the run's latest checkpoint, and every step
 * committed after that checkpoint is removed and recomputed (the engine's prepareStart). A stop
 * checkpoints the last committed step, so after a stop nothing is redone; after a crash or a
 * failure the steps after the last scheduled checkpoint are.
 *
 * Not here: the truncation itself (src/engine/runEngine.ts prepareStart). Pure and browser-safe.
 * Tests: test/engine/stopResume.test.ts (against real stopped runs), test/shared/resumePlan.test.ts.
 */
import { checkpointLabel } from './stepConvention';

export interface ResumePlan {
  /** The first step record the resumed engine runs. */
  fromStep: number;
  /** The step record of the checkpoint it starts from (null: none, a fresh start at step 0). */
  checkpointStep: number | null;
  /** Committed step records that will be removed and recomputed. */
  redo: number[];
  /** One or two sentences for a person. */
  text: string;
}

const span = (steps: number[]): string =>
  steps.length === 1 ? `step ${steps[0]} (1 step) was` : `steps ${steps[0]}-${steps[steps.length - 1]} (${steps.length} steps) were`;

/** The plan, from the run's last committed step record (-1: none) and its checkpoints' step records. */
export function resumePlan(lastStep: number, checkpointSteps: readonly number[]): ResumePlan {
  const usable = checkpointSteps.filter((s) => s <= lastStep);
  const checkpointStep = usable.length ? Math.max(...usable) : null;
  const fromStep = checkpointStep === null ? 0 : checkpointStep + 1;
  const redo: number[] = [];
  for (let s = fromStep; s <= lastStep; s++) redo.push(s);
  let text: string;
  if (checkpointStep === null) {
    text = redo.length
      ? `Resume restarts the run at step 0: it has no checkpoint, so ${span(redo)} committed and will be removed and recomputed.`
      : 'Resume starts the run at step 0 (nothing is committed yet).';
  } else {
    text =
      `Resume continues at step ${fromStep} from the checkpoint ${checkpointLabel(checkpointStep)}; ` +
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
