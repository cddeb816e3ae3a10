/**
 * Metric reads for the charts: the keys a run has, and one series over a step range, optionally
 * downsampled to at most maxPoints by min/max buckets. Not the write path (steps.ts).
 *
 * Downsampling: the n points in range (step order) are cut into B = floor(maxPoints / 2) buckets
 * of consecutive points (bucket of point i = floor(i * B / n)); each bucket returns its minimum
 * and its maximum point (one point when they coincide), in step order. A single spike is always
 * one of its bucket's extremes, so it survives; the result has at most 2B <= maxPoints points;
 * with n <= maxPoints every point comes back. NaN (stored NULL) counts as a bucket's minimum, so
 * a diverged loss stays visible. Done in one pass over the primary-key range (run, key, step),
 * after a count over the same range.
 *
 * Tests: test/core/store/series.test.ts (against a slow per-bucket reference).
 */
import type { LabDb } from './db';
import type { MetricPoint, MetricSeriesOptions } from './records';

type Row = [step: number, value: number | null, wallTime: number];

const RANGE = 'run_id = :runId AND key = :key AND step BETWEEN :fromStep AND :toStep';
const COUNT = `SELECT count(*) FROM metrics WHERE ${RANGE}`;
const POINTS = `SELECT step, value, wall_time FROM metrics WHERE ${RANGE} ORDER BY step`;
// Distinct keys by hopping along the primary key (one index seek per key), not a scan of rows.
const KEYS = `WITH RECURSIVE k(key) AS (
    SELECT min(key) FROM metrics WHERE run_id = :runId
    UNION ALL
    SELECT (SELECT min(key) FROM metrics WHERE run_id = :runId AND key > k.key) FROM k WHERE k.key IS NOT NULL
  ) SELECT key FROM k WHERE key IS NOT NULL`;

const toPoint = (r: Row): MetricPoint => ({ step: r[0], value: r[1] ?? NaN, wallTime: r[2] });

/** Ordering key: NaN (NULL) below everything, so it is a bucket's minimum and never its maximum. */
const rank = (v: number | null): number => (v === null ? -Infinity : v);

const LATEST = 'SELECT step, value, wall_time FROM metrics WHERE run_id = ? AND key = ? ORDER BY step DESC LIMIT 1';

/** Each metric's latest recorded point (eval metrics exist only at eval steps): one index seek per key. */
export function latestMetrics(db: LabDb, runId: number): Record<string, MetricPoint> {
  const out: Record<string, MetricPoint> = {};
  const latest = db.stmt<[number, string], Row>(LATEST).raw(true);
  for (const key of metricKeys(db, runId)) {
    const row = latest.get(runId, key);
    if (row) out[key] = toPoint(row);
  }
  return out;
}

export function metricKeys(db: LabDb, runId: number): string[] {
  return db.stmt(KEYS).pluck().all({ runId }) as string[];
}

export function metricSeries(db: LabDb, runId: number, key: string, options: MetricSeriesOptions = {}): MetricPoint[] {
  const { fromStep = 0, toStep = Number.MAX_SAFE_INTEGER, maxPoints } = options;
  if (maxPoints !== undefined && !(Number.isInteger(maxPoints) && maxPoints >= 2)) {
    throw new Error(`metricSeries: maxPoints must be an integer >= 2, got ${maxPoints}`);
  }
  const args = { runId, key, fromStep, toStep };
  const points = db.stmt<[typeof args], Row>(POINTS).raw(true);
  const n = maxPoints === undefined ? 0 : (db.stmt(COUNT).pluck().get(args) as number);
  if (maxPoints === undefined || n <= maxPoints) return points.all(args).map(toPoint);

  const buckets = Math.floor(maxPoints / 2);
  const out: MetricPoint[] = [];
  let bucket = 0;
  let min: Row | null = null;
  let max: Row | null = null;
  const flush = (): void => {
    if (!min || !max) return;
    if (min === max) out.push(toPoint(min));
    else if (min[0] < max[0]) out.push(toPoint(min), toPoint(max));
    else out.push(toPoint(max), toPoint(min));
    min = max = null;
  };
  let i = 0;
  for (const r of points.iterate(args)) {
    const b = Math.floor((i++ * buckets) / n);
    if (b !== bucket) {
      flush();
      bucket = b;
    }
    if (!min || rank(r[1]) < rank(min[1])) min = r;
    if (!max || (r[1] !== null && rank(r[1]) > rank(max[1]))) max = r;
  }
  flush();
  return out;
}

/** The downsampling above over points already in memory (step order): same buckets, same picks. */
export function downsamplePoints(steps: ArrayLike<number>, values: ArrayLike<number>, wallTimes: ArrayLike<number>, start: number, end: number, maxPoints?: number): MetricPoint[] {
  const n = end - start;
  const out: MetricPoint[] = [];
  const at = (i: number): MetricPoint => ({ step: steps[i], value: values[i], wallTime: wallTimes[i] });
  if (maxPoints === undefined || n <= maxPoints) {
    for (let i = start; i < end; i++) out.push(at(i));
    return out;
  }
  const buckets = Math.floor(maxPoints / 2);
  // Bucket b holds the points i (relative to start) with floor(i * buckets / n) = b.
  let lo = 0;
  for (let b = 0; b < buckets; b++) {
    const hi = Math.ceil(((b + 1) * n) / buckets); // first index of the next bucket
    let min = -1;
    let max = -1;
    let minRank = Infinity;
    let maxValue = -Infinity;
    for (let i = start + lo; i < start + hi; i++) {
      const v = values[i];
      const r = v !== v ? -Infinity : v; // NaN (NULL) below everything
      if (min < 0 || r < minRank) {
        min = i;
        minRank = r;
      }
      if (v === v && (max < 0 || v > maxValue)) {
        max = i;
        maxValue = v;
      }
    }
    if (max < 0) max = min;
    if (min === max) out.push(at(min));
    else if (min < max) out.push(at(min), at(max));
    else out.push(at(max), at(min));
    lo = hi;
  }
  return out;
}

const TAIL = 'SELECT step, value, wall_time FROM metrics WHERE run_id = ? AND key = ? AND step >= ? ORDER BY step';

interface Columns {
  n: number;
  steps: Float64Array;
  values: Float64Array; // NaN for NULL
  wallTimes: Float64Array;
}

/**
 * Whole metric series kept in memory per (run, key), so a chart's repeated reads of a long series
 * cost a binary search and a pass over numbers, not a scan of rows. Each read checks the cache
 * against the store with one primary-key seek: the cached last row must still be there unchanged
 * (steps are only appended, or truncated and rewritten on resume, which changes that row's wall
 * time or removes it; a deleted run removes it), and rows after it are appended. Otherwise the
 * series is read again. Least recently used series are dropped above maxPoints points in all.
 * Results equal metricSeries (tested in test/core/store/series.test.ts).
 */
export class MetricSeriesCache {
  private readonly entries = new Map<string, Columns>();
  private total = 0;

  constructor(private readonly db: LabDb, private readonly maxPoints = 3_000_000) {}

  series(runId: number, key: string, options: MetricSeriesOptions = {}): MetricPoint[] {
    const { fromStep = 0, toStep = Number.MAX_SAFE_INTEGER, maxPoints } = options;
    if (maxPoints !== undefined && !(Number.isInteger(maxPoints) && maxPoints >= 2)) {
      throw new Error(`metricSeries: maxPoints must be an integer >= 2, got ${maxPoints}`);
    }
    const c = this.columns(runId, key);
    const start = lowerBound(c.steps, c.n, fromStep);
    const end = lowerBound(c.steps, c.n, toStep + 1);
    return downsamplePoints(c.steps, c.values, c.wallTimes, start, Math.max(start, end), maxPoints);
  }

  /** Forgets a run's series (or everything). */
  clear(runId?: number): void {
    for (const [k, c] of this.entries) {
      if (runId === undefined || k.startsWith(`${runId}\u0000`)) {
        this.entries.delete(k);
        this.total -= c.n;
      }
    }
  }

  private columns(runId: number, key: string): Columns {
    const id = `${runId}\u0000${key}`;
    let c = this.entries.get(id);
    const tail = this.db.stmt<[number, string, number], Row>(TAIL).raw(true);
    if (c && c.n > 0) {
      const last = c.n - 1;
      const rows = tail.all(runId, key, c.steps[last]);
      const first = rows[0];
      if (first && first[0] === c.steps[last] && first[2] === c.wallTimes[last] && sameValue(first[1], c.values[last])) {
        for (let i = 1; i < rows.length; i++) this.push(c, rows[i]);
      } else c = undefined;
    } else if (c) {
      for (const r of tail.all(runId, key, Number.MIN_SAFE_INTEGER)) this.push(c, r);
    }
    if (!c) {
      const old = this.entries.get(id);
      if (old) this.total -= old.n;
      c = { n: 0, steps: new Float64Array(64), values: new Float64Array(64), wallTimes: new Float64Array(64) };
      for (const r of tail.iterate(runId, key, Number.MIN_SAFE_INTEGER)) this.push(c, r);
    }
    // Most recently used last; evict from the front.
    this.entries.delete(id);
    this.entries.set(id, c);
    for (const [k, e] of this.entries) {
      if (this.total <= this.maxPoints || e === c) break;
      this.entries.delete(k);
      this.total -= e.n;
    }
    return c;
  }

  private push(c: Columns, r: Row): void {
    if (c.n === c.steps.length) {
      const grow = (a: Float64Array) => {
        const b = new Float64Array(a.length * 2);
        b.set(a);
        return b;
      };
      c.steps = grow(c.steps);
      c.values = grow(c.values);
      c.wallTimes = grow(c.wallTimes);
    }
    c.steps[c.n] = r[0];
    c.values[c.n] = r[1] ?? NaN;
    c.wallTimes[c.n] = r[2];
    c.n++;
    this.total++;
  }
}

const sameValue = (stored: number | null, cached: number): boolean => (stored === null ? Number.isNaN(cached) : stored === cached);

/** First index in a[0, n) with a[i] >= x (a ascending). */
function lowerBound(a: Float64Array, n: number, x: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
