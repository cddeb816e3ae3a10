/**
 * Migration 5: experiment suites (src/core/suites). A suite is a matrix of runs, rows (a preset
 * plus overrides) x seeds, stored as its validated spec; suite_runs holds one entry per cell in
 * queue order and the run that cell became, once it was created. Not to be edited once shipped.
 *
 * - The spec is JSON (the rows, seeds, overrides and baseline as the user gave them): the suite is
 *   re-expanded from it when a run is still to be created, so a resumed suite creates exactly
 *   the runs it would have.
 * - run_id is NULL until the cell's run exists, and again if that run is deleted (ON DELETE SET
 *   NULL): a resumed suite then creates it afresh.
 *
 * Tested by test/core/suites/suites.test.ts (store, queue, resume) and test/core/store/db.test.ts.
 */
import type { Database } from 'better-sqlite3';

export function up(db: Database): void {
  db.exec(`
    CREATE TABLE suites (
      id          INTEGER PRIMARY KEY AUTOINCREMENT,
      name        TEXT    NOT NULL,
      spec        TEXT    NOT NULL CHECK (json_valid(spec)),
      created_at  INTEGER NOT NULL
    ) STRICT;
    CREATE TABLE suite_runs (
      suite_id    INTEGER NOT NULL REFERENCES suites (id) ON DELETE CASCADE,
      position    INTEGER NOT NULL,
      row_label   TEXT    NOT NULL,
      seed        INTEGER NOT NULL,
      run_id      INTEGER REFERENCES runs (id) ON DELETE SET NULL,
      PRIMARY KEY (suite_id, position)
    ) STRICT;
    CREATE INDEX suite_runs_run ON suite_runs (run_id);
  `);
}
