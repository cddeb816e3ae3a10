/**
 * Migration 4: run_leases, who may write a run right now (../leases.ts). At most one row per run:
 * the process that holds it (pid, host name, a random holder token telling apart two holders in
 * one process), what it holds it for (`queued` by a lab host waiting for an engine slot,
 * `starting` by a host that is launching the run's engine, `engine` by the engine that trains
 * it), when it was acquired and its last heartbeat. Not to be edited once shipped.
 *
 * - A lease is a row, not a column of runs: it changes every few seconds while the run's step
 *   data is written by one transaction per step, and it is not part of what a run *is* (an
 *   export or a copy of the database does not need it).
 * - Deleting a run removes its lease (ON DELETE CASCADE); the host refuses to delete a run
 *   whose lease is alive before it gets there.
 *
 * Tested by test/core/store/leases.test.ts (and every engine test, which takes leases).
 */
import type { Database } from 'better-sqlite3';

export function up(db: Database): void {
  db.exec(`
    CREATE TABLE run_leases (
      run_id        INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
      kind          TEXT    NOT NULL CHECK (kind IN ('queued', 'starting', 'engine')),
      holder        TEXT    NOT NULL,
      pid           INTEGER NOT NULL,
      host          TEXT    NOT NULL,
      acquired_at   INTEGER NOT NULL,
      heartbeat_at  INTEGER NOT NULL
    ) STRICT;
  `);
}
