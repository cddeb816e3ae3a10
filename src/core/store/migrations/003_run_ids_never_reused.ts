/**
 * Migration 3: run ids are never reused. Without AUTOINCREMENT SQLite gives a new row
 * max(id) + 1, so deleting the newest run handed its id to the next one, and anything that still
 * said "run 7" (a folder of checkpoints, an exported report, a note) then meant another run.
 * AUTOINCREMENT keeps the highest id ever used in sqlite_sequence and never goes below it. Not to
 * be edited once shipped.
 *
 * SQLite cannot add AUTOINCREMENT to an existing column, so `runs` is rebuilt with SQLite's
 * procedure (https://sqlite.org/lang_altertable.html#otheralter): create the new table, copy the
 * rows with their ids, drop the old, rename. db.ts runs migrations with foreign keys off (else
 * dropping the old table would cascade to every row of every run) and checks them before the
 * commit. Ids deleted before this migration are not known any more; from here on the highest id
 * ever seen (including the copied rows) is the floor.
 *
 * Tested by test/core/store/runIds.test.ts (ids after deleting the newest run; a version-2
 * database migrated with its runs, steps and ids intact).
 */
import type { Database } from 'better-sqlite3';

export function up(db: Database): void {
  db.exec(`
    CREATE TABLE runs_new (
      id          INTEGER PRIMARY KEY AUTOINCREMENT,
      name        TEXT    NOT NULL,
      preset      TEXT,
      config      TEXT    NOT NULL CHECK (json_valid(config)),
      status      TEXT    NOT NULL CHECK (status IN ('created','running','paused','completed','failed','interrupted','stopped')),
      backend     TEXT,
      seed        INTEGER NOT NULL,
      workflow    TEXT    NOT NULL,
      algorithm   TEXT    NOT NULL,
      created_at  INTEGER NOT NULL,
      started_at  INTEGER,
      ended_at    INTEGER,
      error       TEXT,
      last_step   INTEGER NOT NULL DEFAULT -1
    ) STRICT;
    INSERT INTO runs_new (id, name, preset, config, status, backend, seed, workflow, algorithm, created_at, started_at, ended_at, error, last_step)
      SELECT id, name, preset, config, status, backend, seed, workflow, algorithm, created_at, started_at, ended_at, error, last_step FROM runs;
    DROP TABLE runs;
    ALTER TABLE runs_new RENAME TO runs;
    CREATE INDEX runs_by_created ON runs (created_at, id);
  `);
}
