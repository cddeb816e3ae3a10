/**
 * Metric series for charts: every point under maxPoints, min/max buckets above it (at most
 * maxPoints points, spikes and NaNs kept, step order), step ranges, and the key list.
 */
import { describe, expect, it } from 'vitest';
import { LabStore, type MetricPoint } from '../../../src/core/store';
import { downsampleInSql, downsamplePoints, MetricSeriesCache, type Scheduler } from '../../../src/core/store/series';
import { newRun } from './fixtures/makeStep';

function storeWithSeries(values: number[], steps = values.map((_, i) => i)): { s: LabStore; run: number } {
  const s = LabStore.open(':memory:');
  const run = s.createRun(newRun());
  values.forEach((v, i) =>
    s.writeStep(run, { step: steps[i], wallTime: 1000 + steps[i], metrics: { loss: v, 'clip/frac_high': i % 7 }, episodes: [], tokens: false }),
  );
  return { s, run };
}

/**
 * Slow reference of the bucket rule: floor(maxPoints/2) = B runs of points by index; but a long
 * contiguous series (steps first .. first + n - 1, n >= 64 (B - 1)) cut at multiples of a width
 * in steps, the least multiple of 16 of at least n / (B - 1) (`byIndex`: always by index, the
 * rule of downsampleInSql alone). Each bucket keeps its extremes.
 */
function referenceDownsample(points: MetricPoint[], maxPoints: number, byIndex = false): MetricPoint[] {
  const n = points.length;
  if (n <= maxPoints) return points;
  const buckets = Math.floor(maxPoints / 2);
  const contiguous = points.every((p, i) => p.step === points[0].step + i);
  const width = !byIndex && contiguous && buckets >= 2 && n >= 64 * (buckets - 1) ? 16 * Math.ceil(n / (buckets - 1) / 16) : 0;
  const groups = new Map<number, MetricPoint[]>();
  points.forEach((p, i) => {
    const b = width ? Math.floor(p.step / width) : Math.floor((i * buckets) / n);
    groups.set(b, [...(groups.get(b) ?? []), p]);
  });
  const out: MetricPoint[] = [];
  for (const inBucket of groups.values()) {
    const key = (p: MetricPoint) => (Number.isNaN(p.value) ? -Infinity : p.value);
    const min = inBucket.reduce((a, p) => (key(p) < key(a) ? p : a));
    const finite = inBucket.filter((p) => !Number.isNaN(p.value));
    const max = finite.length ? finite.reduce((a, p) => (p.value > a.value ? p : a)) : min;
    out.push(...[...new Set([min, max])].sort((x, y) => x.step - y.step));
  }
  return out;
}

const noisy = (n: number, seed = 1): number[] => {
  let s = seed;
  return Array.from({ length: n }, (_, i) => Math.sin(i / 50) + ((s = (s * 16807) % 2147483647) / 2147483647 - 0.5) * 0.1);
};

/** Runs background loads at once: the cache then answers from memory from the first read. */
const now: Scheduler = (work) => work();

describe('metricSeries', () => {
  it('returns every point, in step order, when there are no more than maxPoints', () => {
    const { s, run } = storeWithSeries([3, 1, 2]);
    expect(s.metricSeries(run, 'loss')).toEqual([
      { step: 0, value: 3, wallTime: 1000 },
      { step: 1, value: 1, wallTime: 1001 },
      { step: 2, value: 2, wallTime: 1002 },
    ]);
    expect(s.metricSeries(run, 'loss', { maxPoints: 3 })).toHaveLength(3);
    expect(s.metricSeries(run, 'nope')).toEqual([]);
  });

  it('keeps a single spike and returns at most maxPoints points', () => {
    const values = noisy(5000);
    values[3217] = 50; // one spike
    values[1234] = -40; // one dip
    const { s, run } = storeWithSeries(values);
    for (const maxPoints of [2, 3, 100, 101, 1000]) {
      const got = s.metricSeries(run, 'loss', { maxPoints });
      expect(got.length).toBeLessThanOrEqual(maxPoints);
      // Buckets by index give maxPoints - 1 or maxPoints points; by step at least 0.8 (B - 1) buckets of one or two.
      expect(got.length).toBeGreaterThanOrEqual(0.8 * (Math.floor(maxPoints / 2) - 1));
      expect(got.some((p) => p.step === 3217 && p.value === 50)).toBe(true);
      if (maxPoints > 2) expect(got.some((p) => p.step === 1234 && p.value === -40)).toBe(true);
      const steps = got.map((p) => p.step);
      expect(steps).toEqual([...steps].sort((a, b) => a - b));
    }
  });

  it('matches the slow per-bucket reference, NaNs included', () => {
    const values = noisy(997, 3);
    values[10] = NaN;
    values[500] = NaN;
    values[501] = Infinity;
    const steps = values.map((_, i) => i * 3 + (i % 2)); // sparse, uneven steps
    const { s, run } = storeWithSeries(values, steps);
    const all = s.metricSeries(run, 'loss');
    expect(all).toHaveLength(997);
    for (const maxPoints of [2, 10, 99, 400]) {
      expect(s.metricSeries(run, 'loss', { maxPoints })).toEqual(referenceDownsample(all, maxPoints));
    }
    const got = s.metricSeries(run, 'loss', { maxPoints: 50 });
    expect(got.some((p) => p.step === steps[10] && Number.isNaN(p.value))).toBe(true);
    expect(got.some((p) => p.value === Infinity)).toBe(true);
  });

  it('restricts to a step range, then downsamples within it', () => {
    const { s, run } = storeWithSeries(noisy(300));
    expect(s.metricSeries(run, 'loss', { fromStep: 10, toStep: 19 }).map((p) => p.step)).toEqual(Array.from({ length: 10 }, (_, i) => 10 + i));
    const got = s.metricSeries(run, 'loss', { fromStep: 100, toStep: 199, maxPoints: 20 });
    expect(got.length).toBe(20);
    expect(got.every((p) => p.step >= 100 && p.step <= 199)).toBe(true);
    expect(() => s.metricSeries(run, 'loss', { maxPoints: 1 })).toThrow(/maxPoints must be an integer >= 2/);
  });
});

describe('downsampling in SQL (contiguous steps)', () => {
  it('matches the per-bucket reference and the in-memory path: NaNs, infinities, ties, plateaus', () => {
    const values = noisy(5003, 7);
    values[10] = NaN;
    values[11] = NaN;
    values[2000] = Infinity;
    values[2001] = -Infinity;
    for (let i = 3000; i < 3400; i++) values[i] = 0.25; // a plateau: ties inside whole buckets
    for (let i = 4000; i < 4010; i++) values[i] = NaN; // a bucket that may be all NaN
    const { s, run } = storeWithSeries(values);
    const all = s.metricSeries(run, 'loss');
    const cols = { steps: all.map((p) => p.step), values: all.map((p) => p.value), wallTimes: all.map((p) => p.wallTime) };
    for (const maxPoints of [2, 3, 10, 99, 400, 1000, 2001]) {
      expect(downsampleInSql(s.db, run, 'loss', 0, all.length, maxPoints)).toEqual(referenceDownsample(all, maxPoints, true));
      const want = referenceDownsample(all, maxPoints);
      expect(downsamplePoints(cols.steps, cols.values, cols.wallTimes, 0, all.length, maxPoints)).toEqual(want);
      expect(s.metricSeries(run, 'loss', { maxPoints })).toEqual(want);
    }
    // A step range inside the series: buckets over that range only.
    const inRange = all.filter((p) => p.step >= 1000 && p.step <= 2999);
    expect(s.metricSeries(run, 'loss', { fromStep: 1000, toStep: 2999, maxPoints: 64 })).toEqual(referenceDownsample(inRange, 64));
    s.close();
  });

  it('gives the brute-force bucket envelopes on random series: ties, NaNs, infinities, offsets, sub-ranges', () => {
    let seed = 12345;
    const rand = (): number => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const s = LabStore.open(':memory:');
    const insert = s.db.raw.prepare('INSERT INTO metrics (run_id, key, step, value, wall_time) VALUES (?, ?, ?, ?, ?)');
    for (let trial = 0; trial < 24; trial++) {
      const run = s.createRun(newRun());
      const n = 3 + Math.floor(rand() * 2500);
      const first = Math.floor(rand() * 1000); // contiguous steps first .. first + n - 1
      // Few distinct values (ties within buckets), NaN (stored NULL), the infinities, NaN runs.
      const levels = 1 + Math.floor(rand() * 6);
      const points: MetricPoint[] = Array.from({ length: n }, (_, i) => {
        const r = rand();
        const value = r < 0.05 ? NaN : r < 0.06 ? Infinity : r < 0.07 ? -Infinity : trial % 3 === 0 ? Math.floor(rand() * levels) : rand() * 2 - 1;
        return { step: first + i, value, wallTime: 1_000_000 + 7 * i + trial };
      });
      if (trial % 4 === 1) for (let i = Math.floor(n / 3); i < Math.min(n, Math.floor(n / 3) + 40); i++) points[i].value = NaN;
      s.db.raw.transaction(() => points.forEach((p) => insert.run(run, 'm', p.step, Number.isNaN(p.value) ? null : p.value, p.wallTime)))();
      for (const maxPoints of [2, 3 + Math.floor(rand() * (n - 2)), Math.max(2, n - 1)]) {
        if (n > maxPoints) expect(downsampleInSql(s.db, run, 'm', first, n, maxPoints)).toEqual(referenceDownsample(points, maxPoints, true));
        expect(s.metricSeries(run, 'm', { maxPoints })).toEqual(referenceDownsample(points, maxPoints));
      }
      // A random step range: buckets over the points inside it only.
      const a = first + Math.floor(rand() * n);
      const b = a + Math.floor(rand() * (first + n - a));
      const inRange = points.filter((p) => p.step >= a && p.step <= b);
      const maxPoints = 2 + Math.floor(rand() * 50);
      expect(s.metricSeries(run, 'm', { fromStep: a, toStep: b, maxPoints })).toEqual(referenceDownsample(inRange, maxPoints));
    }
    s.close();
  });

  it('tells a range with one missing step from a contiguous one (buckets by index, not by step)', () => {
    // 2,000 steps with one step missing near the start: bucketed by step range, every later bucket
    // would be shifted by one point against the index buckets the reference cuts.
    const steps = Array.from({ length: 2000 }, (_, i) => (i < 7 ? i : i + 1));
    const values = noisy(2000, 11);
    const { s, run } = storeWithSeries(values, steps);
    const all = s.metricSeries(run, 'loss');
    expect(all).toHaveLength(2000);
    for (const maxPoints of [10, 64, 999]) expect(s.metricSeries(run, 'loss', { maxPoints })).toEqual(referenceDownsample(all, maxPoints));
    // Few points over a long span of steps: every point, whatever the span.
    const few = storeWithSeries([1, 2, 3, 4], [0, 10_000, 50_000, 99_999]);
    expect(few.s.metricSeries(few.run, 'loss', { maxPoints: 2 }).map((p) => p.step)).toEqual([0, 99_999]);
    expect(few.s.metricSeries(few.run, 'loss', { maxPoints: 4 }).map((p) => p.step)).toEqual([0, 10_000, 50_000, 99_999]);
    s.close();
  });

  it('keeps an all-NaN bucket as one NaN point', () => {
    const values = Array.from({ length: 40 }, (_, i) => (i >= 10 && i < 20 ? NaN : i));
    const { s, run } = storeWithSeries(values);
    const got = s.metricSeries(run, 'loss', { maxPoints: 8 }); // 4 buckets of 10
    expect(got.map((p) => p.step)).toEqual([0, 9, 10, 20, 29, 30, 39]);
    expect(Number.isNaN(got[2].value)).toBe(true);
    s.close();
  });
});

describe('metricKeys', () => {
  it('lists the distinct keys of a run, sorted, and nothing of other runs', () => {
    const { s, run } = storeWithSeries([1, 2, 3]);
    const other = s.createRun(newRun());
    s.writeStep(other, { step: 0, wallTime: 0, metrics: { 'other/x': 1 }, episodes: [], tokens: false });
    expect(s.metricKeys(run)).toEqual(['clip/frac_high', 'loss']);
    expect(s.metricKeys(other)).toEqual(['other/x']);
    expect(s.metricKeys(999)).toEqual([]);
  });
});

describe('MetricSeriesCache', () => {
  it('returns what metricSeries returns, ranges and NaNs included, and follows appends', () => {
    const values = noisy(997, 5);
    values[10] = NaN;
    values[11] = NaN;
    values[500] = -Infinity;
    values[501] = Infinity;
    const steps = values.map((_, i) => i * 3 + (i % 2));
    const { s, run } = storeWithSeries(values.slice(0, 900), steps.slice(0, 900));
    const cache = new MetricSeriesCache(s.db, undefined, now);
    const same = () => {
      for (const o of [
        {},
        { maxPoints: 2 },
        { maxPoints: 3 },
        { maxPoints: 99 },
        { maxPoints: 400 },
        { fromStep: 100, toStep: 1999, maxPoints: 50 },
        { fromStep: 30, toStep: 40 },
        { fromStep: 99999 },
      ]) {
        expect(cache.series(run, 'loss', o)).toEqual(s.metricSeries(run, 'loss', o));
      }
    };
    same();
    values
      .slice(900)
      .forEach((v, j) => s.writeStep(run, { step: steps[900 + j], wallTime: 1000 + steps[900 + j], metrics: { loss: v }, episodes: [], tokens: false }));
    same();
    expect(cache.series(run, 'loss')).toHaveLength(997);
    expect(cache.series(run, 'nope')).toEqual([]);
    expect(() => cache.series(run, 'loss', { maxPoints: 1 })).toThrow(/maxPoints must be an integer >= 2/);
  });

  it('answers a first read from the store and loads the series in background slices', () => {
    const { s, run } = storeWithSeries(noisy(50_500));
    const queued: (() => void)[] = [];
    const delays: number[] = [];
    const cache = new MetricSeriesCache(s.db, undefined, (work, delayMs) => (queued.push(work), delays.push(delayMs)));
    const want = s.metricSeries(run, 'loss', { maxPoints: 300 });
    expect(cache.series(run, 'loss', { maxPoints: 300 })).toEqual(want); // from the store: nothing loaded yet
    expect(queued).toHaveLength(1);
    // The first slice waits (the page is drawing the first answer), the others follow at once.
    expect(delays[0]).toBeGreaterThan(0);
    let slices = 0;
    while (queued.length) {
      queued.shift()!();
      slices++;
    }
    expect(slices).toBe(3); // 20,000 + 20,000 + 10,500 rows
    expect(delays.slice(1)).toEqual([0, 0]);
    // Loaded: a new point is picked up by the tail check, and the answer still equals the store's.
    s.writeStep(run, { step: 50_500, wallTime: 1, metrics: { loss: 99 }, episodes: [], tokens: false });
    expect(cache.series(run, 'loss', { maxPoints: 300 })).toEqual(s.metricSeries(run, 'loss', { maxPoints: 300 }));
    expect(cache.series(run, 'loss', { maxPoints: 300 }).some((p) => p.value === 99)).toBe(true);
    expect(queued).toHaveLength(0);
    // A clear while loading stops the load.
    cache.clear(run);
    cache.series(run, 'loss');
    cache.clear(run);
    queued.shift()!();
    expect(queued).toHaveLength(0);
    s.close();
  });

  it('reads again after a truncation and rewrite, a deletion, or eviction', () => {
    const { s, run } = storeWithSeries(noisy(300));
    const cache = new MetricSeriesCache(s.db, 400, now);
    expect(cache.series(run, 'loss')).toHaveLength(300);
    s.truncateAfter(run, 149);
    expect(cache.series(run, 'loss')).toEqual(s.metricSeries(run, 'loss'));
    expect(cache.series(run, 'loss')).toHaveLength(150);
    // Rewritten steps (a resume) with the same values but new wall times.
    for (let step = 150; step < 200; step++) s.writeStep(run, { step, wallTime: 5000 + step, metrics: { loss: step }, episodes: [], tokens: false });
    expect(cache.series(run, 'loss', { maxPoints: 40 })).toEqual(s.metricSeries(run, 'loss', { maxPoints: 40 }));
    s.truncateAfter(run, 198);
    s.writeStep(run, { step: 199, wallTime: 9999, metrics: { loss: -1 }, episodes: [], tokens: false });
    expect(cache.series(run, 'loss').at(-1)).toEqual({ step: 199, value: -1, wallTime: 9999 });
    // Two series over the 400-point budget: the older is dropped and read again when asked.
    expect(cache.series(run, 'clip/frac_high')).toEqual(s.metricSeries(run, 'clip/frac_high'));
    expect(cache.series(run, 'loss')).toEqual(s.metricSeries(run, 'loss'));
    s.deleteRun(run);
    expect(cache.series(run, 'loss')).toEqual([]);
  });
});

describe('latestMetrics', () => {
  it("is each key's last recorded point, also for keys recorded only at some steps", () => {
    const s = LabStore.open(':memory:');
    const run = s.createRun(newRun());
    for (let step = 0; step < 12; step++) {
      const metrics: Record<string, number> = { loss: 10 - step, 'clip/frac_high': step % 3 };
      if (step % 5 === 0) metrics['eval/macro/avg'] = step / 100;
      s.writeStep(run, { step, wallTime: 1000 + step, metrics, episodes: [], tokens: false });
    }
    const latest = s.latestMetrics(run);
    expect(Object.keys(latest).sort()).toEqual(['clip/frac_high', 'eval/macro/avg', 'loss']);
    expect(latest.loss).toEqual({ step: 11, value: -1, wallTime: 1011 });
    expect(latest['clip/frac_high'].value).toBe(11 % 3);
    expect(latest['eval/macro/avg']).toEqual({ step: 10, value: 0.1, wallTime: 1010 });
    expect(s.latestMetrics(s.createRun(newRun()))).toEqual({});
    s.close();
  });
});
