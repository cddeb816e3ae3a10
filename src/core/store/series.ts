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
