/**
 * The x axis and the log y axis of the curve panels (renderer components/RunDashboardChart.vue)
 * and the dashboard's pace figures, pure and browser-safe: step ticks that are whole steps,
 * wall time since the run's first point as h:mm (h:mm:ss on runs shorter than an hour) on
 * round-minute ticks, a log y range on whole decades, and seconds per step with the ETA.
 * Not the linear y axis (chartRange.ts). No DOM, no ECharts. Tests: test/shared/chartAxis.test.ts.
 */
/** Time tick steps (s): round seconds, minutes and hours, so labels read 0:05, 0:10, ... */
const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
/** Ticks aimed for on an x axis. */
const X_TICKS = 5;

/** One formatter for every label (toLocaleString builds a new one per call, on every axis update). */
const GROUPED = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/**
 * A step-axis tick label: whole steps only (ECharts is also given minInterval 1, so a 4-step run
 * has ticks 0 1 2 3, never 0.5); thousands grouped.
 */
export function stepTickLabel(v: number): string {
  return Number.isInteger(v) ? GROUPED.format(v) : '';
}

/** Seconds as h:mm, or h:mm:ss when `seconds` ticks are finer than a minute (short runs). */
export function elapsedLabel(seconds: number, withSeconds: boolean): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const mm = String(m).padStart(2, '0');
  return withSeconds ? `${h}:${mm}:${String(s % 60).padStart(2, '0')}` : `${h}:${mm}`;
}

/** The tick step (s) of a wall-time axis spanning `spanSeconds`: about X_TICKS round steps. */
export function timeTickStep(spanSeconds: number): number {
  const raw = Math.max(spanSeconds, 1) / X_TICKS;
  return TIME_STEPS.find((t) => t >= raw) ?? Math.ceil(raw / 86400) * 86400;
}

/** The wall-time axis of a span: its tick step and the label of a tick (h:mm, or h:mm:ss under a minute's step). */
export function timeAxis(spanSeconds: number): { interval: number; label: (v: number) => string; name: string } {
  const interval = timeTickStep(spanSeconds);
  const withSeconds = interval < 60;
  return { interval, label: (v) => elapsedLabel(v, withSeconds), name: withSeconds ? 'h:mm:ss' : 'h:mm' };
}

/** A log y axis: whole decades around the positive data ([1e-3, 1] when there are none). */
export interface LogRange {
  min: number;
  max: number;
}

export function logYRange(lo: number, hi: number): LogRange {
  if (!(lo > 0) || !(hi >= lo) || !Number.isFinite(hi)) return { min: 1e-3, max: 1 };
  const a = Math.floor(Math.log10(lo) + 1e-9);
  let b = Math.ceil(Math.log10(hi) - 1e-9);
  if (b <= a) b = a + 1;
  return { min: 10 ** a, max: 10 ** b };
}

/** A log tick label: 1e-3, 0.01, 0.1, 1, 10, 100, 1e3 (short either way). */
export function logTickLabel(v: number): string {
  if (!(v > 0)) return '';
  const e = Math.round(Math.log10(v));
  return Math.abs(e) <= 2 ? String(Number(v.toPrecision(3))) : `1e${e}`;
}

/**
 * Seconds per step from the wall times (ms) of consecutive committed steps: the mean over the
 * last `window` intervals (null with fewer than two steps).
 */
export function secondsPerStep(points: readonly { step: number; wallTime: number }[], window = 20): number | null {
  const n = points.length;
  if (n < 2) return null;
  const a = points[Math.max(0, n - 1 - window)];
  const z = points[n - 1];
  const steps = z.step - a.step;
  return steps > 0 ? (z.wallTime - a.wallTime) / 1000 / steps : null;
}

/** "1.24 s/step", "ETA 0:12:40" pieces for the dashboard header ('' where unknown). */
export function paceText(sPerStep: number | null, stepsLeft: number): { pace: string; eta: string } {
  if (sPerStep === null || !Number.isFinite(sPerStep) || sPerStep <= 0) return { pace: '', eta: '' };
  const pace = sPerStep >= 10 ? `${sPerStep.toFixed(0)} s/step` : `${Number(sPerStep.toPrecision(3))} s/step`;
  const eta = stepsLeft > 0 ? `ETA ${elapsedLabel(sPerStep * stepsLeft, true)}` : '';
  return { pace, eta };
}
