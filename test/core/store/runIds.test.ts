/**
 * Run ids are never reused: after the newest run is deleted, the next run gets a new id, so
 * "run 3" in a log, a report or a folder name never comes to mean another run. A database of
 * schema version 2 (before AUTOINCREMENT) is migrated with its runs, their ids and everything
 * they own intact, deletes still cascading.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { APPLICATION_ID, LabStore, MIGRATIONS, SCHEMA_VERSION } from '../../../src/core/store';
import { makeStep, stepCounts } from './fixtures/makeStep';
import { integrity, rowCounts, tempDbPath } from './helpers';

const RUN = { config: {}, seed: 1, workflow: 'math', algorithm: 'srpo' };

describe('run ids', () => {
  it('are not reused after the newest run is deleted', () => {
    const s = LabStore.open(tempDbPath());
    const ids = ['a', 'b', 'c'].map((name) => s.createRun({ ...RUN, name }));
    expect(ids).toEqual([1, 2, 3]);
    expect(s.deleteRun(3)).toBe(true);
    expect(s.createRun({ ...RUN, name: 'd' })).toBe(4);
    for (const r of s.listRuns()) s.deleteRun(r.id);
    expect(s.createRun({ ...RUN, name: 'e' })).toBe(5);
    s.close();
  });

  it('survive a reopen: the highest id ever used is kept in the file', () => {
    const path = tempDbPath();
    const a = LabStore.open(path);
    a.createRun({ ...RUN, name: 'a' });
    a.createRun({ ...RUN, name: 'b' });
    a.deleteRun(2);
    a.close();
    const b = LabStore.open(path);
    expect(b.createRun({ ...RUN, name: 'c' })).toBe(3);
    b.close();
  });

  it('a version-2 database migrates with its runs, ids and rows intact, and no longer reuses ids', () => {
    const path = tempDbPath('v2.db');
    const raw = new Database(path);
    raw.pragma('journal_mode = WAL');
    for (const m of MIGRATIONS.slice(0, 2)) {
      raw.transaction(() => {
        m.up(raw);
        if (m.version === 1) raw.pragma(`application_id = ${APPLICATION_ID}`);
        raw.pragma(`user_version = ${m.version}`);
      })();
    }
    raw.close();
    // Two runs (ids 1 and 5) with a step each, written straight into the version-2 schema.
    const old = new Database(path);
    old.exec(`
      INSERT INTO runs (id, name, config, status, seed, workflow, algorithm, created_at) VALUES (1, 'one', '{}', 'completed', 1, 'math', 'srpo', 1);
      INSERT INTO runs (id, name, config, status, seed, workflow, algorithm, created_at) VALUES (5, 'five', '{}', 'stopped', 2, 'math', 'srpo', 2);
      INSERT INTO steps (run_id, step, wall_time, tokens) VALUES (1, 0, 0, 0), (5, 0, 0, 0);
      INSERT INTO metrics (run_id, key, step, value, wall_time) VALUES (1, 'reward/mean', 0, 0.5, 0), (5, 'reward/mean', 0, 0.25, 0);
      INSERT INTO checkpoints (run_id, step, path, wall_time) VALUES (1, 0, '/ckpt/1/0', 0);
      UPDATE runs SET last_step = 0;
    `);
    old.close();

    const s = LabStore.open(path);
    expect(s.db.raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(s.listRuns().map((r) => [r.id, r.name, r.status])).toEqual([
      [5, 'five', 'stopped'],
      [1, 'one', 'completed'],
    ]);
    // Dropping the old table did not cascade: every row of both runs is still there.
    expect(rowCounts(s.db, 1)).toMatchObject({ steps: 1, metrics: 1, checkpoints: 1 });
    expect(rowCounts(s.db, 5)).toMatchObject({ steps: 1, metrics: 1 });
    expect(s.metricSeries(5, 'reward/mean').map((p) => p.value)).toEqual([0.25]);
    const step = makeStep(1);
    s.writeStep(5, step);
    expect(rowCounts(s.db, 5, 1).metrics).toBe(stepCounts(step).metrics);
    expect(integrity(s.db)).toBe('ok');
    expect(s.db.raw.pragma('foreign_key_check')).toEqual([]);
    expect(s.db.raw.pragma('foreign_keys', { simple: true })).toBe(1);

    // Deleting still cascades (the rebuilt table is still the parent of every run-owned row).
    expect(s.deleteRun(5)).toBe(true);
    expect(Object.values(rowCounts(s.db, 5)).every((n) => n === 0)).toBe(true);
    expect(s.createRun({ ...RUN, name: 'six' })).toBe(6);
    s.close();
  });
});
