/**
 * Where a run's files live, shared by the host and the engine: `<dir>/<db file name>.runs/<runId>/`
 * beside the database (`lab.db` -> `lab.db.runs/3/`) holds `checkpoints/step-NNNNNN/` (written by
 * the trainer) and, while a stop is pending, the `STOP` flag file. Not the moving of folders from
 * the old layout (runFolders.ts).
 *
 * Why named after the database file: run ids are per database, so `A.db` and `B.db` in one
 * folder both have a run 1; a shared `<dir>/runs/1/` (the layout before this one) let B's run
 * overwrite A's checkpoints, share its STOP flag, and be deleted with it. A folder named after
 * the file is visible in a file manager next to what it belongs to, needs nothing stored in the
 * database, and cannot collide between two files of one folder. The cost: a database and its
 * `.runs` folder are moved or renamed together (`mv A.db B.db` also needs
 * `mv A.db.runs B.db.runs`); a copy of a database without its folder finds no checkpoints and
 * says so. A database id stored in the database was the alternative, rejected because a copied
 * file keeps its id and two copies in one folder would share folders again.
 *
 * Why a flag file: Trainer.step is synchronous, so while a step runs the engine's event loop is
 * blocked and IPC messages wait; the engine's per-mini-batch check (onMiniBatch) can only see
 * something it reads synchronously. The host writes the flag and sends `stop`; whichever the
 * engine sees first stops it. Tested by test/engine/control.test.ts and
 * test/core/host/runFolders.test.ts (two databases in one folder).
 */
import { basename, dirname, join, resolve } from 'node:path';

/** `<dir>/<db file name>.runs`: the folder holding one sub-folder per run of this database. */
export function runsRootFor(dbPath: string): string {
  const abs = resolve(dbPath);
  return join(dirname(abs), `${basename(abs)}.runs`);
}

export function runDirFor(dbPath: string, runId: number): string {
  return join(runsRootFor(dbPath), String(runId));
}

/** `<dir>/runs`: where every database of the folder kept its run folders before runsRootFor. */
export function legacyRunsRootFor(dbPath: string): string {
  return join(dirname(resolve(dbPath)), 'runs');
}

export function stopFlagPath(runDir: string): string {
  return join(runDir, 'STOP');
}
