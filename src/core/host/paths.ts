/**
 * Where a run's files live, shared by the host and the engine: `<dir of the database>/runs/<runId>/`
 * holds `checkpoints/step-NNNNNN/` (written by the trainer) and, while a stop is pending, the
 * `STOP` flag file. A lab database and its runs/ folder move together.
 *
 * Why a flag file: Trainer.step is synchronous, so while a step runs the engine's event loop is
 * blocked and IPC messages wait; the engine's per-mini-batch check (onMiniBatch) can only see
 * something it reads synchronously. The host writes the flag and sends `stop`; whichever the
 * engine sees first stops it. Tested by test/engine/control.test.ts.
 */
import { dirname, join, resolve } from 'node:path';

export function runDirFor(dbPath: string, runId: number): string {
  return join(dirname(resolve(dbPath)), 'runs', String(runId));
}

export function stopFlagPath(runDir: string): string {
  return join(runDir, 'STOP');
}
