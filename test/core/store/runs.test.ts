/**
 * Runs: create, read back the frozen config, list newest first, patch semantics, interruption
 * of live runs only, and a delete that cascades to everything the run owns and nothing else.
 */
import { describe, expect, it } from 'vitest';
import { LabStore } from '../../../src/core/store';
import { makeStep, newRun } from './fixtures/makeStep';
import { integrity, rowCounts, STEP_TABLES } from './helpers';

describe('runs', () => {
  it('creates and reads back a run with its config snapshot', () => {
    const s = LabStore.open(':memory:');
    const cfg = { lr: 1e-5, nested: { k: [1, 2] } };
    const id = s.createRun({ ...newRun('a'), config: cfg, createdAt: 123 });
    cfg.lr = 99; // the stored snapshot is frozen
    expect(s.getRun(id)).toEqual({
      id,
      name: 'a',
      preset: 'tiny-math',
      config: { lr: 1e-5, nested: { k: [1, 2] } },
      status: 'created',
      backend: null,
      seed: 7,
      workflow: 'math',
      algorithm: 'srpo',
      createdAt: 123,
      startedAt: null,
      endedAt: null,
      error: null,
      lastStep: -1,
    });
    expect(s.getRun(id + 1)).toBeNull();
  });

  it('lists runs newest first', () => {
    const s = LabStore.open(':memory:');
    const a = s.createRun({ ...newRun('a'), createdAt: 1000 });
    const b = s.createRun({ ...newRun('b'), createdAt: 3000 });
    const c = s.createRun({ ...newRun('c'), createdAt: 2000 });
    const d = s.createRun({ ...newRun('d'), createdAt: 3000 });
    expect(s.listRuns().map((r) => r.id)).toEqual([d, b, c, a]);
  });

  it('updates only the fields a patch names; null clears', () => {
    const s = LabStore.open(':memory:');
    const id = s.createRun(newRun());
    s.updateRun(id, { status: 'running', backend: 'wasm', startedAt: 5 });
    s.updateRun(id, { error: 'oops' });
    expect(s.getRun(id)).toMatchObject({ status: 'running', backend: 'wasm', startedAt: 5, error: 'oops', endedAt: null });
    s.updateRun(id, { error: null, status: 'completed', endedAt: 9 });
    expect(s.getRun(id)).toMatchObject({ status: 'completed', backend: 'wasm', startedAt: 5, error: null, endedAt: 9 });
    expect(() => s.updateRun(id + 1, { status: 'failed' })).toThrow(/no run with id/);
    expect(() => s.updateRun(id, { status: 'bogus' as 'failed' })).toThrow(/CHECK constraint/);
  });

  it('marks only live runs interrupted, with the reason', () => {
    const s = LabStore.open(':memory:');
    const live = s.createRun(newRun());
    s.updateRun(live, { status: 'running' });
    const done = s.createRun(newRun());
    s.updateRun(done, { status: 'completed', endedAt: 1 });
    expect(s.markInterrupted(live, 'engine exited with SIGKILL')).toBe(true);
    expect(s.markInterrupted(done, 'late')).toBe(false);
    expect(s.getRun(live)).toMatchObject({ status: 'interrupted', error: 'engine exited with SIGKILL' });
    expect(s.getRun(live)!.endedAt).toBeGreaterThan(0);
    expect(s.getRun(done)).toMatchObject({ status: 'completed', error: null, endedAt: 1 });
  });

  it('deletes a run with everything it owns, leaving other runs intact', () => {
    const s = LabStore.open(':memory:');
    const a = s.createRun(newRun('a'));
    const b = s.createRun(newRun('b'));
    for (let step = 0; step < 4; step++) {
      s.writeStep(a, makeStep(step));
      s.writeStep(b, makeStep(step, undefined, 1));
    }
    const before = rowCounts(s.db, b);
    expect(rowCounts(s.db, a).members).toBeGreaterThan(0);
    expect(s.deleteRun(a)).toBe(true);
    expect(s.deleteRun(a)).toBe(false);
    expect(s.getRun(a)).toBeNull();
    for (const t of STEP_TABLES) expect(rowCounts(s.db, a)[t], t).toBe(0);
    // events and members have no foreign key to runs: they must go through episodes' cascade
    expect(s.db.raw.prepare('SELECT count(*) FROM members WHERE event_id NOT IN (SELECT id FROM events)').pluck().get()).toBe(0);
    expect(rowCounts(s.db, b)).toEqual(before);
    expect(integrity(s.db)).toBe('ok');
  });
});
