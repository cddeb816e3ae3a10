/**
 * metric_blocks (migration 7): each block of 16 steps of a series holds its row count and its
 * extremes, kept by triggers whatever writes; truncation and deletion keep them true; a version-6
 * file gets them built from its rows; and long series read through them equal the slow reference,
 * the rows path and the in-memory cache (test/core/store/series.test.ts has the reference rule).
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LabStore, SCHEMA_VERSION, type MetricPoint } from '../../../src/core/store';
import { downsamplePoints, MetricSeriesCache, type Scheduler } from '../../../src/core/store/series';
import { compactSeries } from '../../../src/shared/seriesWindow';
import { newRun } from './fixtures/makeStep';

type Block = [runId: number, key: string, block: number, rows: number, ...rest: (number | null)[]];

/** The blocks recomputed from the rows, as the migration defines them (first extreme in step order; NULL lowest; highest non-NULL). */
function blocksFromRows(db: Database.Database): Block[] {
  const rows = db.prepare('SELECT run_id, key, step, value, wall_time FROM metrics ORDER BY run_id, key, step').raw(true).all() as [
    number,
    string,
    number,
    number | null,
    number,
  ][];
  const out = new Map<string, Block>();
  const rank = (v: number | null) => (v === null ? -Infinity : v);
  for (const [runId, key, step, value, wall] of rows) {
    const id = `${runId}/${key}/${step >> 4}`;
    const b = out.get(id);
    if (!b) {
      out.set(id, [runId, key, step >> 4, 1, step, value, wall, value === null ? null : step, value, value === null ? null : wall]);
      continue;
    }
    b[3]++;
    if (rank(value) < rank(b[5] as number | null)) [b[4], b[5], b[6]] = [step, value, wall];
    if (value !== null && (b[8] === null || value > (b[8] as number))) [b[7], b[8], b[9]] = [step, value, wall];
  }
  return [...out.values()];
}

const storedBlocks = (db: Database.Database) =>
  db
    .prepare('SELECT run_id, key, block, rows, lo_step, lo_value, lo_wall, hi_step, hi_value, hi_wall FROM metric_blocks ORDER BY run_id, key, block')
    .raw(true)
    .all();

let seed = 97;
const rand = (): number => (seed = (seed * 16807) % 2147483647) / 2147483647;
/** Few levels (ties), NaN (NULL) and the infinities. */
const value = (): number | null => {
  const r = rand();
  return r < 0.08 ? null : r < 0.1 ? Infinity : r < 0.12 ? -Infinity : Math.floor(rand() * 5) / 4;
};

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('metric_blocks', () => {
  it('holds each block’s row count and first extremes after inserts in any order, NaNs, infinities and ties included', () => {
    const s = LabStore.open(':memory:');
    const runs = [s.createRun(newRun()), s.createRun(newRun())];
    const insert = s.db.raw.prepare('INSERT INTO metrics (run_id, key, step, value, wall_time) VALUES (?, ?, ?, ?, ?)');
    const rows: [number, string, number, number | null, number][] = [];
    for (const run of runs)
      for (const key of ['a', 'b/c']) for (let step = 3; step < 300; step++) if (rand() > 0.1) rows.push([run, key, step, value(), 1000 + step]);
    for (let i = rows.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [rows[i], rows[j]] = [rows[j], rows[i]];
    }
    s.db.raw.transaction(() => rows.forEach((r) => insert.run(...r)))();
    const want = blocksFromRows(s.db.raw);
    expect(want.length).toBeGreaterThan(60);
    expect(storedBlocks(s.db.raw)).toEqual(want);
    s.close();
  });

  it('stays true through a truncation that cuts a block, the rewritten steps, and a run deletion', () => {
    const s = LabStore.open(':memory:');
    const run = s.createRun(newRun());
    const other = s.createRun(newRun());
    const write = (r: number, step: number, v: number) =>
      s.writeStep(r, { step, wallTime: 5000 + step, metrics: { loss: v, 'x/y': -v }, episodes: [], tokens: false });
    for (let step = 0; step < 100; step++) {
      write(run, step, (step * 37) % 11);
      write(other, step, step);
    }
    expect(storedBlocks(s.db.raw)).toEqual(blocksFromRows(s.db.raw));
    s.truncateAfter(run, 37); // block 2 (steps 32..47) keeps 32..37
    expect(storedBlocks(s.db.raw)).toEqual(blocksFromRows(s.db.raw));
    expect(s.db.raw.prepare("SELECT rows FROM metric_blocks WHERE run_id = ? AND key = 'loss' AND block = 2").pluck().get(run)).toBe(6);
    for (let step = 38; step < 60; step++) write(run, step, -step);
    expect(storedBlocks(s.db.raw)).toEqual(blocksFromRows(s.db.raw));
    s.truncateAfter(run, -1);
    expect(s.db.raw.prepare('SELECT count(*) FROM metric_blocks WHERE run_id = ?').pluck().get(run)).toBe(0);
    write(run, 0, 1);
    s.deleteRun(run);
    expect(s.db.raw.prepare('SELECT count(*) FROM metric_blocks WHERE run_id = ?').pluck().get(run)).toBe(0);
    expect(storedBlocks(s.db.raw)).toEqual(blocksFromRows(s.db.raw));
    s.close();
  });

  it('is built from the rows of a version-6 file when it is migrated', () => {
    const dir = mkdtempSync(join(tmpdir(), 'srpo-blocks-'));
    dirs.push(dir);
    const path = join(dir, 'lab.db');
    const s = LabStore.open(path);
    const run = s.createRun(newRun());
    for (let step = 0; step < 90; step++)
      s.writeStep(run, { step, wallTime: step, metrics: { loss: value() ?? NaN, r: step % 5 }, episodes: [], tokens: false });
    s.close();
    // Back to version 6: the schema without migration 7's table and triggers.
    const raw = new Database(path);
    raw.exec('DROP TRIGGER metric_blocks_insert; DROP TRIGGER metric_blocks_delete; DROP TABLE metric_blocks; PRAGMA user_version = 6;');
    const rows = raw.prepare('SELECT * FROM metrics ORDER BY run_id, key, step').all();
    raw.close();
    const migrated = LabStore.open(path);
    expect(migrated.db.raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(migrated.db.raw.prepare('SELECT * FROM metrics ORDER BY run_id, key, step').all()).toEqual(rows);
    expect(storedBlocks(migrated.db.raw)).toEqual(blocksFromRows(migrated.db.raw));
    expect(storedBlocks(migrated.db.raw).length).toBe(2 * 6); // 2 keys x 90 steps in blocks of 16
    migrated.close();
  });
});

/** The rule of src/shared/seriesWindow.ts written out again: by step on a long contiguous range, else by index. */
function reference(points: MetricPoint[], maxPoints: number): MetricPoint[] {
  const n = points.length;
  if (n <= maxPoints) return points;
  const buckets = Math.floor(maxPoints / 2);
  const contiguous = points.every((p, i) => p.step === points[0].step + i);
  const width = contiguous && buckets >= 2 && n >= 64 * (buckets - 1) ? 16 * Math.ceil(n / (buckets - 1) / 16) : 0;
  const out: MetricPoint[] = [];
  const groups = new Map<number, MetricPoint[]>();
  points.forEach((p, i) => {
    const b = width ? Math.floor(p.step / width) : Math.floor((i * buckets) / n);
    groups.set(b, [...(groups.get(b) ?? []), p]);
  });
  const key = (p: MetricPoint) => (Number.isNaN(p.value) ? -Infinity : p.value);
  for (const g of groups.values()) {
    const min = g.reduce((a, p) => (key(p) < key(a) ? p : a));
    const finite = g.filter((p) => !Number.isNaN(p.value));
    const max = finite.length ? finite.reduce((a, p) => (p.value > a.value ? p : a)) : min;
    out.push(...[...new Set([min, max])].sort((x, y) => x.step - y.step));
  }
  return out;
}

const now: Scheduler = (work) => work();

describe('long series read through the blocks', () => {
  it('equal the reference, the cache and compactSeries: offsets, sub-ranges cutting blocks, NaN runs, ties', () => {
    const s = LabStore.open(':memory:');
    const insert = s.db.raw.prepare('INSERT INTO metrics (run_id, key, step, value, wall_time) VALUES (?, ?, ?, ?, ?)');
    let longRanges = 0;
    for (let trial = 0; trial < 16; trial++) {
      const run = s.createRun(newRun());
      const n = 2000 + Math.floor(rand() * 6000);
      const first = Math.floor(rand() * 100);
      const points: MetricPoint[] = Array.from({ length: n }, (_, i) => {
        const v = trial % 2 ? value() : rand();
        return { step: first + i, value: v ?? NaN, wallTime: 7 * i + trial };
      });
      if (trial % 4 === 1) for (let i = 500; i < 700; i++) points[i].value = NaN; // whole blocks of NaN
      s.db.raw.transaction(() => points.forEach((p) => insert.run(run, 'm', p.step, Number.isNaN(p.value) ? null : p.value, p.wallTime)))();
      const cache = new MetricSeriesCache(s.db, 3_000_000, now);
      cache.series(run, 'm'); // loaded at once
      for (let r = 0; r < 4; r++) {
        const a = r === 0 ? 0 : first + Math.floor(rand() * (n / 3));
        const b = r === 0 ? Number.MAX_SAFE_INTEGER : a + 1000 + Math.floor(rand() * (first + n - a - 1000));
        const inRange = points.filter((p) => p.step >= a && p.step <= b);
        const maxPoints = 4 + Math.floor(rand() * (inRange.length / 32));
        const want = reference(inRange, maxPoints);
        if (inRange.length >= 64 * (Math.floor(maxPoints / 2) - 1)) longRanges++;
        const got = s.metricSeries(run, 'm', { fromStep: a, toStep: b, maxPoints });
        expect(got).toEqual(want);
        expect(got.length).toBeLessThanOrEqual(maxPoints);
        expect(cache.series(run, 'm', { fromStep: a, toStep: b, maxPoints })).toEqual(want);
        const steps = inRange.map((p) => p.step);
        expect(
          downsamplePoints(
            steps,
            inRange.map((p) => p.value),
            inRange.map((p) => p.wallTime),
            0,
            inRange.length,
            maxPoints,
          ),
        ).toEqual(want);
        const shared = compactSeries(
          inRange.map((p) => ({ ...p, value: Number.isNaN(p.value) ? null : p.value })),
          maxPoints,
        );
        expect(shared.map((p) => p.step)).toEqual(want.map((p) => p.step));
      }
    }
    expect(longRanges).toBeGreaterThan(40); // most ranges take the block path
    s.close();
  });

  it('reads the rows instead where a block is missing or a step is, with the same answer', () => {
    const s = LabStore.open(':memory:');
    const run = s.createRun(newRun());
    const insert = s.db.raw.prepare('INSERT INTO metrics (run_id, key, step, value, wall_time) VALUES (?, ?, ?, ?, ?)');
    const points: MetricPoint[] = Array.from({ length: 20_000 }, (_, i) => ({ step: i, value: Math.sin(i / 300) + (i === 12_345 ? 9 : 0), wallTime: i }));
    s.db.raw.transaction(() => points.forEach((p) => insert.run(run, 'm', p.step, p.value, p.wallTime)))();
    const want = reference(points, 200);
    expect(s.metricSeries(run, 'm', { maxPoints: 200 })).toEqual(want);
    expect(want.some((p) => p.step === 12_345)).toBe(true);
    s.db.raw.prepare('DELETE FROM metric_blocks WHERE run_id = ? AND block = 700').run(run); // a block lost
    expect(s.metricSeries(run, 'm', { maxPoints: 200 })).toEqual(want);
    s.db.raw.prepare('DELETE FROM metrics WHERE run_id = ? AND step = 5000').run(run); // a gap: buckets by index
    const gapped = points.filter((p) => p.step !== 5000);
    expect(s.metricSeries(run, 'm', { maxPoints: 200 })).toEqual(reference(gapped, 200));
    s.close();
  });
});
