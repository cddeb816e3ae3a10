/**
 * A metric series as the API ships it and the charts, analysis and reports read it: points of
 * (step, value, wall time), NaN (a diverged value) arriving as null.
 *
 * Its own file so the modules that only read series (analysis.ts, seriesWindow.ts) need not import
 * the API contract (api.ts), which imports the suite types that import analysis.ts: that was a
 * type cycle, now refused by the package rule (eslint.config.mjs, test/layering.test.ts).
 * Types only; checked by tsc.
 */

/** One point of a series; NaN (a diverged value) arrives as null. */
export interface SeriesPoint {
  step: number;
  value: number | null;
  wallTime: number;
}

export type SeriesMap = Record<string, SeriesPoint[]>;
