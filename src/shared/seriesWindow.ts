/**
 * Chart-side series arithmetic, pure and browser-safe: how many points a chart of a given width
 * asks the store for, a live point appended to a downsampled series, a series that grew too long
 * compacted again, the zoomed window's full-detail points spliced into the overview, and a line
 * packed for ECharts.
 * Not the store's downsampling (src/core/store/series.ts), but the same min/max bucket rule, so
 * a single spike (or a NaN, sent as null) stays visible however often a series is compacted: a
 * bucket's extremes over points that were themselves bucket extremes are the extremes of all the
 * points under them.
 *
 * Used by the renderer (composables/useRunSeries.ts, components/RunDashboardChart.vue).
 * Tests: test/shared/seriesWindow.test.ts (compactSeries against the store's downsamplePoints).
 */
import type { SeriesPoint } from './series';

/**
 * The maxPoints to request for a plot `plotPx` CSS pixels wide: one min/max pair per device
 * pixel column (dpr capped at 2), at least 64 points. More would be drawn on top of each other.
 */
export function chartMaxPoints(plotPx: number, dpr = 1): number {
  const columns = Math.ceil(Math.max(1, plotPx) * Math.min(Math.max(dpr, 1), 2));
  return Math.max(64, 2 * columns);
}

/**
 * The points after a live point: appended; a step at or before the last one (a resumed run redoes
 * steps) first drops the points from that step on. The input array is never mutated, and the
 * kept points are the same objects (charts detect an append by identity).
 */
export function appendLivePoint(points: readonly SeriesPoint[], p: SeriesPoint): SeriesPoint[] {
  const n = points.length;
  if (n === 0 || points[n - 1].step < p.step) {
    const out = points.slice();
    out.push(p);
    return out;
  }
  const kept = points.filter((x) => x.step < p.step);
  kept.push(p);
  return kept;
}

/** Ordering of a value for the buckets: null (NaN) below everything, so it is a bucket's minimum. */
const rank = (v: number | null): number => (v === null || v !== v ? -Infinity : v);

/** Steps per block of the store's metric_blocks table (src/core/store/migrations/007_metric_blocks.ts). */
export const SERIES_BLOCK_STEPS = 16;

/**
 * How n points in step order are cut into at most `buckets` min/max buckets (the rule the store
 * and compactSeries share): by index, bucket b = the points i with floor(i * buckets / n) = b;
 * except a long contiguous series (n points at steps first .. first + n - 1, with n / (buckets -
 * 1) of at least 64), cut by step: bucket k = the steps k * width .. (k + 1) * width - 1, width the
 * least multiple of SERIES_BLOCK_STEPS of at least n / (buckets - 1), so that each bucket is
 * whole blocks of the store's metric_blocks and at most `buckets` of them meet the range.
 * Returns that width, or null for buckets by index.
 */
export function stepBucketWidth(n: number, buckets: number, contiguous: boolean): number | null {
  if (!contiguous || buckets < 2 || n < 64 * (buckets - 1)) return null;
  return SERIES_BLOCK_STEPS * Math.ceil(n / (buckets - 1) / SERIES_BLOCK_STEPS);
}

/**
 * Min/max buckets over points in step order, as the store downsamples (stepBucketWidth: buckets =
 * floor(maxPoints / 2) runs of consecutive points by index, or step ranges on a long contiguous
 * series; each gives its minimum and its maximum, in step order, one point when they coincide).
 * At most maxPoints points; every point when there are no more than maxPoints. Returns the
 * input array itself when nothing is dropped.
 */
export function compactSeries(points: readonly SeriesPoint[], maxPoints: number): readonly SeriesPoint[] {
  const n = points.length;
  if (n <= maxPoints) return points;
  const buckets = Math.floor(maxPoints / 2);
  const width = stepBucketWidth(n, buckets, points[n - 1].step - points[0].step + 1 === n);
  // Bucket of point i: by step, or by index.
  const bucketOf = width ? (i: number) => Math.floor(points[i].step / width) : (i: number) => Math.floor((i * buckets) / n);
  const out: SeriesPoint[] = [];
  let lo = 0;
  while (lo < n) {
    const b = bucketOf(lo);
    let hi = lo + 1; // first index of the next bucket
    while (hi < n && bucketOf(hi) === b) hi++;
    let min = lo;
    let max = -1;
    for (let i = lo; i < hi; i++) {
      const r = rank(points[i].value);
      if (r < rank(points[min].value)) min = i;
      if (r !== -Infinity && (max < 0 || r > rank(points[max].value))) max = i;
    }
    if (max < 0) max = min;
    if (min === max) out.push(points[min]);
    else if (min < max) out.push(points[min], points[max]);
    else out.push(points[max], points[min]);
    lo = hi;
  }
  return out;
}

/** Full-detail points of one step range, as fetched for a zoomed chart. */
export interface SeriesDetail {
  /** The requested range; `toStep` is clipped to the last step known when it was fetched. */
  fromStep: number;
  toStep: number;
  points: readonly SeriesPoint[];
}

/**
 * The overview with the detail's range replaced by the detail's points: overview points before
 * fromStep, the detail, overview points after toStep (live points that came after the fetch).
 */
export function spliceDetail(overview: readonly SeriesPoint[], detail: SeriesDetail): SeriesPoint[] {
  const out: SeriesPoint[] = [];
  let i = 0;
  while (i < overview.length && overview[i].step < detail.fromStep) out.push(overview[i++]);
  for (const p of detail.points) out.push(p);
  while (i < overview.length && overview[i].step <= detail.toStep) i++;
  while (i < overview.length) out.push(overview[i++]);
  return out;
}

/**
 * A line as a chart draws it: (x, y, step) triples packed in one growable Float64Array (y NaN
 * where the value is null: a gap). ECharts takes the packed view as series data with three
 * dimensions and copies it in one go; an array of [x, y, step] arrays is cloned item by item
 * (thousands of small arrays per chart per live point, and the garbage after them).
 */
export class PackedLine {
  private buf: Float64Array;
  /** Points held. */
  length = 0;

  constructor(capacity = 64) {
    this.buf = new Float64Array(3 * Math.max(1, capacity));
  }

  push(x: number, y: number | null, step: number): void {
    if (3 * (this.length + 1) > this.buf.length) {
      const next = new Float64Array(2 * this.buf.length);
      next.set(this.buf);
      this.buf = next;
    }
    const o = 3 * this.length++;
    this.buf[o] = x;
    this.buf[o + 1] = y === null ? NaN : y;
    this.buf[o + 2] = step;
  }

  x(i: number): number {
    return this.buf[3 * i];
  }
  y(i: number): number {
    return this.buf[3 * i + 1];
  }
  step(i: number): number {
    return this.buf[3 * i + 2];
  }

  /** The points held, packed (a view: valid until the next push). */
  view(): Float64Array {
    return this.buf.subarray(0, 3 * this.length);
  }

  /** Index of the first point whose x is >= x, in a line sorted by x (length when none is). */
  lowerBoundX(x: number): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.buf[3 * mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
