/**
 * One curve panel line as a view gives it (ChartLine: name, points, source; sameLines memoises
 * them) and as drawn (charts/chartPanel.ts): its points (the overview,
 * with a zoom's full-detail window spliced in), packed for ECharts as raw and EMA rows, the EMA's
 * state after the last point and the y extent of both. A live point is appended in O(1) (EMA
 * continued), a zoom detail rebuilds the line. On a log y scale values <= 0 are gaps. No chart,
 * no Vue here.
 */
import { emaStep, emaWeight } from '../../../shared/analysis';
import type { SeriesPoint } from '../../../shared/api';
import { PackedLine, spliceDetail, type SeriesDetail } from '../../../shared/seriesWindow';

/** How a panel draws its lines: EMA weight (0: unsmoothed, no EMA rows), what x is, the y scale. */
export interface LineStyle {
  smoothing: number;
  xAxis: 'step' | 'time';
  /** On a log axis a value <= 0 has no place: it is drawn as a gap (and the EMA skips it). */
  yScale?: 'linear' | 'log';
}

/** Which stored series a chart line shows (a zoom fetches its step range again at full detail). */
export interface SeriesSource {
  runId: number;
  key: string;
}

export interface ChartLine {
  name: string;
  points: SeriesPoint[];
  /** Where the line's points come from, so a zoom can fetch that step range at full detail. */
  source?: SeriesSource;
}

/**
 * `prev` when `next` has the same lines (names, sources and the same points arrays), else `next`:
 * how a view memoises a panel's lines (computed's previous value), so that a panel whose series
 * did not change gets the same array and its chart does no work.
 */
export function sameLines(prev: ChartLine[] | undefined, next: ChartLine[]): ChartLine[] {
  const same =
    !!prev &&
    prev.length === next.length &&
    prev.every((l, i) => {
      const n = next[i];
      return l.name === n.name && l.points === n.points && l.source?.runId === n.source?.runId && l.source?.key === n.source?.key;
    });
  return same ? prev : next;
}

export interface DrawnLine {
  /** The overview points as last seen (the prop's array). */
  overview: SeriesPoint[];
  detail: SeriesDetail | null;
  points: SeriesPoint[];
  /** Wall time of the first point (x = seconds since it on a time axis). */
  t0: number;
  raw: PackedLine;
  ema: PackedLine;
  /** EMA state: the running sum and the count of finite values. */
  s: number;
  t: number;
  /** y extent of the raw and EMA rows (finite values only; Infinity/-Infinity when none). */
  lo: number;
  hi: number;
}

export function buildLine(overview: SeriesPoint[], detail: SeriesDetail | null, style: LineStyle): DrawnLine {
  const points = detail ? spliceDetail(overview, detail) : overview;
  const smooth = style.smoothing > 0;
  const d: DrawnLine = {
    overview,
    detail,
    points,
    t0: overview[0]?.wallTime ?? points[0]?.wallTime ?? 0,
    raw: new PackedLine(points.length + 64),
    ema: new PackedLine(smooth ? points.length + 64 : 1),
    s: 0,
    t: 0,
    lo: Infinity,
    hi: -Infinity,
  };
  extendLine(d, 0, style);
  return d;
}

/**
 * Packs d.points[from..] into the rows: the EMA with bias correction continued from (s, t) by
 * shared/analysis emaStep (emaSmooth one point at a time), so a live point costs one step, not a
 * pass over the line.
 */
export function extendLine(d: DrawnLine, from: number, style: LineStyle): void {
  const w = emaWeight(style.smoothing);
  const smooth = style.smoothing > 0;
  const byStep = style.xAxis === 'step';
  const log = style.yScale === 'log';
  for (let j = from; j < d.points.length; j++) {
    const p = d.points[j];
    const x = byStep ? p.step : (p.wallTime - d.t0) / 1000;
    const v = log && !(p.value !== null && p.value > 0) ? null : p.value;
    d.raw.push(x, v, p.step);
    track(d, v);
    if (!smooth) continue;
    const y = emaStep(d, v, w);
    d.ema.push(x, y, p.step);
    track(d, y);
  }
}

function track(d: DrawnLine, v: number | null): void {
  if (typeof v !== 'number' || !Number.isFinite(v)) return;
  if (v < d.lo) d.lo = v;
  if (v > d.hi) d.hi = v;
}

/** Index of the row of `line` nearest to x (by x; -1 for an empty line). */
export function nearestRow(line: PackedLine, x: number): number {
  if (!line.length) return -1;
  const i = line.lowerBoundX(x);
  if (i >= line.length) return line.length - 1;
  if (i > 0 && x - line.x(i - 1) < line.x(i) - x) return i - 1;
  return i;
}
