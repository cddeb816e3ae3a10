/**
 * Metric reads for the charts: the keys a run has, and one series over a step range, optionally
 * downsampled to at most maxPoints by min/max buckets; every key's point at one step (the host's
 * live push after each step). Not the write path (steps.ts).
 *
 * Downsampling (the rule is src/shared/seriesWindow.ts `stepBucketWidth`, shared with the
 * renderer's compactSeries): the n points in range (step order) are cut into at most B =
 * floor(maxPoints / 2) buckets, by index (bucket of point i = floor(i * B / n)) or, on a long
 * contiguous series, by step ranges of a width that is a multiple of 16; each bucket returns its
 * minimum and its maximum point (one point when they coincide, the first of equal points), in
 * step order. A single spike is always one of its bucket's extremes, so it survives; the result
 * has at most 2B <= maxPoints points; with n <= maxPoints every point comes back. NaN (stored
 * NULL) counts as a bucket's minimum, so a diverged loss stays visible.
 *
 * Three ways to the same answer, none reading every row of a long contiguous range (a training
 * series: point i is step first + i). The range's first and last steps are two index seeks and a
 * count capped at maxPoints + 1 tells "every point" from "downsample". Then:
 * - long (step buckets): the range's blocks of 16 steps (metric_blocks, kept by a trigger,
 *   migration 7: each block's row count and extremes) reduced to each bucket's extremes by one
 *   statement, plus the rows of the partial blocks at its two ends, merged here: ~n / 16 block
 *   rows visited, ~2 rows a bucket read (docs/decisions/073-metric-blocks.md);
 * - shorter (index buckets): one SQL statement computes every bucket's extremes (per bucket, two
 *   aggregate reads over its primary-key range: min() / max() with bare columns, which take the
 *   first row reaching the extreme) and only the picked rows cross into JavaScript (decisions 049, 070);
 * - otherwise every row of the range, downsampled in memory (`downsamplePoints`): a range with
 *   gaps (eval series), which the two above tell by their row counts not adding up to last -
 *   first + 1 (also what a missing block looks like).
 *
 * Tests: test/core/store/series.test.ts (every path against a slow per-bucket reference, and
 * against each other), test/core/store/metricBlocks.test.ts (the blocks).
 */
import { SERIES_BLOCK_STEPS, stepBucketWidth } from '../../shared/seriesWindow';
import type { LabDb } from './db';
import { METRIC_BLOCK_SHIFT } from './migrations/007_metric_blocks';
import type { MetricPoint, MetricSeriesOptions } from './records';

if (1 << METRIC_BLOCK_SHIFT !== SERIES_BLOCK_STEPS) throw new Error('series.ts: metric_blocks width differs from SERIES_BLOCK_STEPS');

type Row = [step: number, value: number | null, wallTime: number];

const RANGE = 'run_id = :runId AND key = :key AND step BETWEEN :fromStep AND :toStep';
/**
 * The range's first and last steps (index seeks) and its row count up to :cap (a scan of at most
 * :cap rows): enough to tell "every point" from "downsample" without counting a long series.
 */
const HEAD = `SELECT (SELECT min(step) FROM metrics WHERE ${RANGE}), (SELECT max(step) FROM metrics WHERE ${RANGE}),
  (SELECT count(*) FROM (SELECT 1 FROM metrics WHERE ${RANGE} LIMIT :cap))`;
const IN_BUCKET = 'FROM metrics WHERE run_id = :runId AND key = :key AND step BETWEEN b.lo AND b.hi';
/**
 * Every min/max bucket of the steps first .. first + n - 1 taken as contiguous, in one statement:
 * the buckets as step ranges (bucket i = steps first + ceil(i n / B) .. first + ceil((i + 1) n / B) - 1,
 * integer arithmetic: better-sqlite3 binds numbers as REAL, hence the casts), per bucket its
 * lowest row (NULL lowest: -9e999 is -Infinity to SQLite) with the bucket's row count, and its
 * highest non-NULL row (NULL when the bucket is all NULL), each as a JSON array of the row's
 * columns taken as bare columns of its aggregate. One row per bucket: ['[step, value, wall time,
 * rows]', '[step, value, wall time]' or NULL]. JSON, not a join back to the picked rows by step:
 * a CTE column read twice is computed twice (its subquery runs again), and SQLite's JSON writes a
 * REAL with the digits that read back to the same double. Not MATERIALIZED: the materialised CTE
 * measured ~40% slower.
 */
const BUCKETS = `WITH RECURSIVE
  p(first, n, nb) AS (SELECT CAST(:first AS INTEGER), CAST(:n AS INTEGER), CAST(:buckets AS INTEGER)),
  b(i, lo, hi) AS (
    SELECT 0, first, first + (n + nb - 1) / nb - 1 FROM p
    UNION ALL
    SELECT i + 1, first + ((i + 1) * n + nb - 1) / nb, first + ((i + 2) * n + nb - 1) / nb - 1 FROM b, p WHERE i + 1 < nb
  ),
  e(i, lowest, highest) AS (
    SELECT i,
      (SELECT json_array(step, value, wall_time, rows) FROM (SELECT step, value, wall_time, min(coalesce(value, -9e999)), count(*) AS rows ${IN_BUCKET})),
      (SELECT json_array(step, value, wall_time) FROM (SELECT step, value, wall_time, max(value) AS top ${IN_BUCKET}) WHERE top IS NOT NULL)
    FROM b WHERE hi >= lo
  )
SELECT lowest, highest FROM e ORDER BY i`;
const POINTS = `SELECT step, value, wall_time FROM metrics WHERE ${RANGE} ORDER BY step`;
// Distinct keys by hopping along the primary key (one index seek per key), not a scan of rows.
const KEY_HOP = `WITH RECURSIVE k(key) AS (
    SELECT min(key) FROM metrics WHERE run_id = :runId
    UNION ALL
    SELECT (SELECT min(key) FROM metrics WHERE run_id = :runId AND key > k.key) FROM k WHERE k.key IS NOT NULL
  )`;
const KEYS = `${KEY_HOP} SELECT key FROM k WHERE key IS NOT NULL`;
// One step's row of every key: the key hop joined to (run, key, step), a primary-key seek per key.
// Not `WHERE run_id = ? AND step = ?`: the key leads step in the primary key, so that scans the run.
const AT_STEP = `${KEY_HOP} SELECT m.key, m.step, m.value, m.wall_time FROM k JOIN metrics m ON m.run_id = :runId AND m.key = k.key AND m.step = :step`;

const toPoint = (r: Readonly<[number, number | null, number, ...unknown[]]>): MetricPoint => ({ step: r[0], value: r[1] ?? NaN, wallTime: r[2] });

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

/** Every metric point of one step, by key (what a live chart appends after the step): one statement. */
export function metricsAtStep(db: LabDb, runId: number, step: number): Record<string, MetricPoint> {
  const out: Record<string, MetricPoint> = {};
  for (const [key, ...row] of db.stmt<[{ runId: number; step: number }], [string, ...Row]>(AT_STEP).raw(true).all({ runId, step })) out[key] = toPoint(row);
  return out;
}

export function metricKeys(db: LabDb, runId: number): string[] {
  return db.stmt(KEYS).pluck().all({ runId }) as string[];
}

export function metricSeries(db: LabDb, runId: number, key: string, options: MetricSeriesOptions = {}): MetricPoint[] {
  const { fromStep = 0, toStep = Number.MAX_SAFE_INTEGER, maxPoints } = options;
  checkMaxPoints(maxPoints);
  const args = { runId, key, fromStep, toStep };
  const rows = () => db.stmt<[typeof args], Row>(POINTS).raw(true).all(args);
  if (maxPoints === undefined) return rows().map(toPoint);
  const head = db.stmt<[typeof args & { cap: number }], [number | null, number | null, number]>(HEAD).raw(true);
  const [first, last, few] = head.get({ ...args, cap: maxPoints + 1 })!;
  if (first === null || last === null || few <= maxPoints) return rows().map(toPoint);
  const span = last - first + 1;
  const width = stepBucketWidth(span, Math.floor(maxPoints / 2), true);
  // As many rows as steps from first to last: contiguous, the buckets are right. Else gaps: from the rows.
  const got = width ? blockBuckets(db, runId, key, first, last, width) : bucketsInSql(db, runId, key, first, span, maxPoints);
  if (got.rows === span) return got.points;
  const all = rows();
  const columns = (c: number) => Float64Array.from(all, (r) => r[c] ?? NaN);
  return downsamplePoints(columns(0), columns(1), columns(2), 0, all.length, maxPoints);
}

const IN_BLOCK_BUCKET = 'm.run_id = :runId AND m.key = :key AND m.block BETWEEN max(p.f, x.g * p.per) AND min(p.t, x.g * p.per + p.per - 1)';
/**
 * The step buckets over whole blocks :from .. :to (bucket g = blocks g * per .. g * per + per - 1,
 * cut to the range), in one statement: a GROUP BY over the range's blocks gives each bucket's
 * lowest value (NULL lowest: -9e999 is -Infinity to SQLite), highest non-NULL value and row count;
 * then, per bucket, of its blocks whose extreme equals that value, the one with the smallest step,
 * its value and wall time taken as bare columns of that min(step): they are the one row holding
 * it, as steps are unique (the first GROUP BY's bare columns would be any one of tied rows). Rows
 * [0 lowest / 1 highest, bucket, rows (lowest only), step, value, wall time], by bucket. About 2
 * rows a bucket cross into JavaScript, not the n / 16 block rows: better-sqlite3 builds every value
 * it returns, and reading all 8 columns of every block took ~2x as long as this statement. CROSS
 * JOIN keeps the join in bucket order, each bucket a primary-key range of blocks.
 */
const BLOCK_BUCKETS = `WITH
  p(per, f, t) AS (SELECT CAST(:per AS INTEGER), CAST(:from AS INTEGER), CAST(:to AS INTEGER)),
  x(g, lv, hv, n) AS MATERIALIZED (
    SELECT block / p.per, min(coalesce(lo_value, -9e999)), max(hi_value), sum(rows) FROM p CROSS JOIN metric_blocks
    WHERE run_id = :runId AND key = :key AND block BETWEEN p.f AND p.t GROUP BY 1
  )
SELECT 0 AS side, x.g AS g, x.n, min(m.lo_step), m.lo_value, m.lo_wall FROM x CROSS JOIN p CROSS JOIN metric_blocks m ON ${IN_BLOCK_BUCKET} AND coalesce(m.lo_value, -9e999) = x.lv GROUP BY x.g
UNION ALL
SELECT 1, x.g, NULL, min(m.hi_step), m.hi_value, m.hi_wall FROM x CROSS JOIN p CROSS JOIN metric_blocks m ON ${IN_BLOCK_BUCKET} AND m.hi_value = x.hv GROUP BY x.g
ORDER BY g, side`;
type BucketRow = [side: 0 | 1, bucket: number, rows: number | null, ...extreme: Row];
const EDGE = 'SELECT step, value, wall_time FROM metrics WHERE run_id = ? AND key = ? AND step BETWEEN ? AND ? ORDER BY step';

/**
 * The step buckets of width `width` (a multiple of the block width) over steps first .. last,
 * from the range's whole blocks (BLOCK_BUCKETS) and the rows of its partial end blocks, with the
 * number of rows they hold (last - first + 1 when the range is contiguous and its blocks are all there).
 */
function blockBuckets(db: LabDb, runId: number, key: string, first: number, last: number, width: number): { points: MetricPoint[]; rows: number } {
  const w = SERIES_BLOCK_STEPS;
  // A range this long (at least 64 steps: stepBucketWidth) holds whole blocks from..to, with partial ones around them.
  const from = Math.ceil(first / w); // first whole block
  const to = Math.floor((last + 1) / w) - 1; // last whole block
  const edge = db.stmt<[number, string, number, number], Row>(EDGE).raw(true);
  const head = edge.all(runId, key, first, from * w - 1);
  const args = { runId, key, per: width / w, from, to };
  const buckets = db.stmt<[typeof args], BucketRow>(BLOCK_BUCKETS).raw(true).all(args);
  const tail = edge.all(runId, key, (to + 1) * w, last);
  const points: MetricPoint[] = [];
  let rows = head.length + tail.length;
  let bucket = NaN;
  let min: Row | null = null;
  let max: Row | null = null;
  const flush = (): void => {
    if (min) pushExtremes(points, min, max);
    min = max = null;
  };
  // Candidates in step order, so that on a tie the first stays; a row is its own lowest and highest.
  const take = (at: number, lowest: Row | null, highest: Row | null): void => {
    const b = Math.floor(at / width);
    if (b !== bucket) {
      flush();
      bucket = b;
    }
    if (lowest && (!min || rank(lowest[1]) < rank(min[1]))) min = lowest;
    if (highest && highest[1] !== null && (!max || highest[1] > max[1]!)) max = highest;
  };
  for (const r of head) take(r[0], r, r);
  for (const [side, g, n, ...extreme] of buckets) {
    if (side === 0) {
      rows += n!;
      take(g * width, extreme, null);
    } else take(g * width, null, extreme);
  }
  for (const r of tail) take(r[0], r, r);
  flush();
  return { points, rows };
}

/** A bucket's minimum and maximum rows as points, in step order (one when they are the same step; the minimum when no value is a number). */
function pushExtremes(out: MetricPoint[], min: Row, max: Row | null): void {
  if (!max || max[0] === min[0]) out.push(toPoint(min));
  else if (min[0] < max[0]) out.push(toPoint(min), toPoint(max));
  else out.push(toPoint(max), toPoint(min));
}

/**
 * The min/max buckets of a contiguous range (steps first .. first + n - 1) computed by SQLite
 * (BUCKETS): per bucket, the row with the least value (NULL lowest) and the row with the greatest
 * non-NULL value, the first such row in step order (the aggregate keeps its first extreme while
 * the primary-key scan runs in step order). Only 2 rows per bucket are read into JavaScript.
 */
export function downsampleInSql(db: LabDb, runId: number, key: string, first: number, n: number, maxPoints: number): MetricPoint[] {
  return bucketsInSql(db, runId, key, first, n, maxPoints).points;
}

/** downsampleInSql's buckets, and how many rows the steps first .. first + n - 1 hold (n when contiguous). */
function bucketsInSql(db: LabDb, runId: number, key: string, first: number, n: number, maxPoints: number): { points: MetricPoint[]; rows: number } {
  const picked = db
    .stmt<[Record<string, number | string>], [string, string | null]>(BUCKETS)
    .raw(true)
    .all({ runId, key, first, n, buckets: Math.floor(maxPoints / 2) });
  const points: MetricPoint[] = [];
  let rows = 0;
  for (const [lowest, highest] of picked) {
    // [step, value, wall time, rows]; step and wall time NULL when the step range has no rows (gaps).
    const [step, value, wallTime, count] = JSON.parse(lowest) as [number | null, number | null, number | null, number];
    rows += count;
    if (step === null || wallTime === null) continue;
    const min = toPoint([step, value, wallTime]);
    // Every value NULL: the bucket is its first NULL.
    const max = highest === null ? min : toPoint(JSON.parse(highest) as Row);
    if (min.step === max.step) points.push(min);
    else if (min.step < max.step) points.push(min, max);
    else points.push(max, min);
  }
  return { points, rows };
}

function checkMaxPoints(maxPoints: number | undefined): void {
  if (maxPoints !== undefined && !(Number.isInteger(maxPoints) && maxPoints >= 2)) {
    throw new Error(`metricSeries: maxPoints must be an integer >= 2, got ${maxPoints}`);
  }
}

/** The downsampling above over points already in memory (step order): same buckets, same picks. */
export function downsamplePoints(
  steps: ArrayLike<number>,
  values: ArrayLike<number>,
  wallTimes: ArrayLike<number>,
  start: number,
  end: number,
  maxPoints?: number,
): MetricPoint[] {
  const n = end - start;
  const out: MetricPoint[] = [];
  const at = (i: number): MetricPoint => ({ step: steps[i], value: values[i], wallTime: wallTimes[i] });
  if (maxPoints === undefined || n <= maxPoints) {
    for (let i = start; i < end; i++) out.push(at(i));
    return out;
  }
  const buckets = Math.floor(maxPoints / 2);
  const width = stepBucketWidth(n, buckets, steps[end - 1] - steps[start] + 1 === n);
  // Bucket of point i: by step, or by index (relative to start).
  const bucketOf = width ? (i: number) => Math.floor(steps[i] / width) : (i: number) => Math.floor(((i - start) * buckets) / n);
  let lo = start;
  while (lo < end) {
    const b = bucketOf(lo);
    let min = -1;
    let max = -1;
    let minRank = Infinity;
    let maxValue = -Infinity;
    let i = lo;
    for (; i < end && bucketOf(i) === b; i++) {
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
    lo = i;
  }
  return out;
}

const TAIL = 'SELECT step, value, wall_time FROM metrics WHERE run_id = ? AND key = ? AND step >= ? ORDER BY step';
const CHUNK = 'SELECT step, value, wall_time FROM metrics WHERE run_id = ? AND key = ? AND step > ? ORDER BY step LIMIT ?';
/** Rows read per background load slice: a few ms each, so other requests interleave. */
const LOAD_CHUNK = 20_000;

interface Columns {
  n: number;
  steps: Float64Array;
  values: Float64Array; // NaN for NULL
  wallTimes: Float64Array;
  /** Still being read in the background: reads go to the store meanwhile. */
  loading: boolean;
}

/**
 * Runs a slice of background work later: as soon as the event loop is free (setImmediate), or
 * `delayMs` after that (the timer starts once the task that asked, a read and its answer, is
 * over); tests pass one that runs at once or queues the work.
 */
export type Scheduler = (work: () => void, delayMs: number) => void;
const later: Scheduler = (work, delayMs) => void setImmediate(() => (delayMs > 0 ? void setTimeout(work, delayMs).unref() : work())).unref();
/**
 * A load's first slice waits this long after the read that started it has answered (ms): the
 * page that asked is drawing the answer meanwhile, and on a machine with few cores the load
 * (about 0.3 s of CPU for 5 x 100,000 points) would take a core from that first draw (bench
 * `ui` first_open_ms: a draw takes ~100-300 ms after the answer on 2 loaded cores). Not longer:
 * a reopen before the load is over is answered by SQL again (dashboard_ms).
 */
const LOAD_DELAY_MS = 250;

/**
 * Whole metric series kept in memory per (run, key), so a chart's repeated reads of a long series
 * (reopening a dashboard, zooming) cost a binary search and a pass over numbers, not a scan of
 * rows. The first read of a series is answered from the store (SQL buckets, above) and starts
 * loading its columns in the background, LOAD_DELAY_MS later and then LOAD_CHUNK rows per slice,
 * so a first open never waits for a whole series to cross into JavaScript, nor shares the CPU
 * with it while it draws. Each read of a loaded series checks it against the
 * store with one primary-key seek: the cached last row must still be there unchanged (steps are
 * only appended, or truncated and rewritten on resume, which changes that row's wall time or
 * removes it; a deleted run removes it), and rows after it are appended. Otherwise the series is
 * read again. Least recently used series are dropped above maxPoints points in all.
 * Results equal metricSeries (tested in test/core/store/series.test.ts).
 */
export class MetricSeriesCache {
  private readonly entries = new Map<string, Columns>();
  private total = 0;

  constructor(
    private readonly db: LabDb,
    private readonly maxPoints = 3_000_000,
    private readonly schedule: Scheduler = later,
  ) {}

  series(runId: number, key: string, options: MetricSeriesOptions = {}): MetricPoint[] {
    const { fromStep = 0, toStep = Number.MAX_SAFE_INTEGER, maxPoints } = options;
    checkMaxPoints(maxPoints);
    const c = this.columns(runId, key);
    if (!c) return metricSeries(this.db, runId, key, options);
    const start = lowerBound(c.steps, c.n, fromStep);
    const end = lowerBound(c.steps, c.n, toStep + 1);
    return downsamplePoints(c.steps, c.values, c.wallTimes, start, Math.max(start, end), maxPoints);
  }

  /** Forgets a run's series (or everything); a load in progress stops. */
  clear(runId?: number): void {
    for (const [k, c] of this.entries) {
      if (runId === undefined || k.startsWith(`${runId}\u0000`)) {
        this.entries.delete(k);
        this.total -= c.n;
      }
    }
  }

  /** The loaded columns, checked against the store; null while loading (a load is started if none is). */
  private columns(runId: number, key: string): Columns | null {
    const id = `${runId}\u0000${key}`;
    let c = this.entries.get(id);
    if (!c) {
      this.load(id, runId, key);
      c = this.entries.get(id);
      if (!c || c.loading) return null;
    }
    if (c.loading) return null;
    const tail = this.db.stmt<[number, string, number], Row>(TAIL).raw(true);
    if (c.n > 0) {
      const last = c.n - 1;
      const rows = tail.all(runId, key, c.steps[last]);
      const first = rows[0];
      if (first && first[0] === c.steps[last] && first[2] === c.wallTimes[last] && sameValue(first[1], c.values[last])) {
        for (let i = 1; i < rows.length; i++) this.push(c, rows[i]);
      } else {
        // Truncated, rewritten or deleted: load it again, and answer from the store meanwhile.
        this.drop(id);
        return this.columns(runId, key);
      }
    } else for (const r of tail.all(runId, key, Number.MIN_SAFE_INTEGER)) this.push(c, r);
    // Most recently used last; evict from the front.
    this.entries.delete(id);
    this.entries.set(id, c);
    this.evict(c);
    return c;
  }

  /** Starts reading a series into new columns, one slice per scheduled call, until a short slice. */
  private load(id: string, runId: number, key: string): void {
    const c: Columns = { n: 0, steps: new Float64Array(64), values: new Float64Array(64), wallTimes: new Float64Array(64), loading: true };
    this.entries.set(id, c);
    const slice = (): void => {
      if (this.entries.get(id) !== c) return; // cleared or replaced meanwhile
      try {
        const from = c.n ? c.steps[c.n - 1] : Number.MIN_SAFE_INTEGER;
        const rows = this.db.stmt<[number, string, number, number], Row>(CHUNK).raw(true).all(runId, key, from, LOAD_CHUNK);
        for (const r of rows) this.push(c, r);
        if (rows.length < LOAD_CHUNK) {
          c.loading = false;
          this.evict(c);
        } else this.schedule(slice, 0);
      } catch {
        this.drop(id); // the store closed or failed: the next read starts over
      }
    };
    this.schedule(slice, LOAD_DELAY_MS);
  }

  private drop(id: string): void {
    const c = this.entries.get(id);
    if (!c) return;
    this.entries.delete(id);
    this.total -= c.n;
  }

  private evict(keep: Columns): void {
    for (const [k, e] of this.entries) {
      if (this.total <= this.maxPoints) break;
      if (e === keep || e.loading) continue;
      this.entries.delete(k);
      this.total -= e.n;
    }
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
