/**
 * The value axis and colours of the curve panels (renderer components/RunDashboardChart.vue),
 * pure and browser-safe: a "nice" y range (bounds and tick step on the 1-2-5 rule, the rule
 * ECharts' own value axes use) that is kept while the data stay inside it, so a live point does
 * not move the axis or its labels; and a colour pre-mixed with the panel's background, so a faint
 * line is drawn opaque (a semi-transparent line costs the canvas several times more to rasterise).
 * No DOM, no ECharts. Tests: test/shared/chartRange.test.ts.
 */

/** A y axis as given to the chart: bounds on multiples of `interval`, labels with `digits` decimals. */
export interface YRange {
  min: number;
  max: number;
  /** Tick step: 1, 2 or 5 times a power of ten. */
  interval: number;
  /** Decimals that tell neighbouring ticks apart. */
  digits: number;
}

/** Ticks aimed for on the axis (ECharts' default splitNumber). */
const TICKS = 5;
/** A kept range is dropped once the data fill less than this share of it (they shrank: a zoom, a new line). */
const MIN_FILL = 0.4;

/**
 * The nice range around data spanning [lo, hi]: 6% of the span added on each side, then widened
 * to multiples of the tick step. A constant series (a span under 1e-9 of its magnitude: float
 * noise) gets a band of 10% of its value (at least 0.05) instead of ECharts' full-height zig-zag
 * of 1e-17 with 16-digit labels. No finite data: [0, 1]. Non-negative data start at 0 at the
 * lowest; `ceil` (1 for shares) caps the top when the data stay under it.
 */
export function niceYRange(lo: number, hi: number, ceil = Infinity): YRange {
  if (!Number.isFinite(lo) || !Number.isFinite(hi) || hi < lo) return niceYRange(0, 1, ceil);
  const span = hi - lo;
  const pad = span < 1e-9 * Math.max(1, Math.abs(lo), Math.abs(hi)) ? Math.max(Math.abs(hi) * 0.1, 0.05) : span * 0.06;
  const a = lo - pad;
  const b = hi + pad;
  const interval = niceStep((b - a) / TICKS);
  const digits = stepDigits(interval);
  // Multiples by index, rounded to the step's digits: no 0.30000000000000004 bounds.
  let min = Number((Math.floor(a / interval + 1e-9) * interval).toFixed(digits));
  let max = Number((Math.ceil(b / interval - 1e-9) * interval).toFixed(digits));
  // Data that never go below 0 get no negative axis (a share, a count, a length: -0.05 means
  // nothing); data within a ceiling (1 for a share) get no axis above it. Both bounds are ticks.
  if (lo >= 0 && min < 0) min = 0;
  if (hi <= ceil && max > ceil) max = ceil;
  return { min, max, interval, digits };
}

/**
 * `current` while [lo, hi] stays inside it and still fills a fair share of it, else a new nice
 * range: live points inside the axis change nothing on it (same object back).
 */
export function keepYRange(lo: number, hi: number, current: YRange | null, ceil = Infinity): YRange {
  const inside = current && Number.isFinite(lo) && Number.isFinite(hi) && lo >= current.min && hi <= current.max;
  if (inside && hi - lo >= MIN_FILL * (current.max - current.min)) return current;
  return niceYRange(lo, hi, ceil);
}

/** A step of 1, 2 or 5 times a power of ten, the nearest above `raw` on that scale. */
export function niceStep(raw: number): number {
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / mag;
  return (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
}

/** Decimal digits that tell multiples of `step` apart (0 for a step of 1 or more). */
export function stepDigits(step: number): number {
  return Math.max(0, Math.min(15, -Math.floor(Math.log10(step) + 1e-9)));
}

/** A tick label: the range's decimals (no float noise), -0 shown as 0. */
export function tickLabel(v: number, range: YRange): string {
  return (Object.is(v, -0) ? 0 : v).toFixed(range.digits).replace(/^-(0\.?0*)$/, '$1');
}

/** `color` drawn at `alpha` over `under`, as one opaque colour (both `#rrggbb`). */
export function mixColor(color: string, under: string, alpha: number): string {
  const ch = (s: string, i: number) => parseInt(s.slice(1 + 2 * i, 3 + 2 * i), 16);
  return `#${[0, 1, 2]
    .map((i) =>
      Math.round(alpha * ch(color, i) + (1 - alpha) * ch(under, i))
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`;
}
