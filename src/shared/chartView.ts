/**
 * The chart workspace's view state (RunDashboard and Compare): smoothing, x axis, y scale and the
 * panels the user added, as URL query parameters, so a shared link reproduces the view, and as
 * the remembered view of a page opened without them. Also which metrics are drawn unsmoothed.
 * Pure and browser-safe: parsing is total (a bad or missing value falls back to the default,
 * never throws). No Vue, no storage here (composables/useChartView.ts keeps it in sync).
 * Tests: test/shared/chartView.test.ts.
 */

export type XAxisKind = 'step' | 'time';
export type YScale = 'linear' | 'log';

export interface ChartView {
  /** EMA weight in [0, 0.99]. */
  smoothing: number;
  xAxis: XAxisKind;
  yScale: YScale;
  /** Metric keys of panels added to the defaults, in order. */
  panels: string[];
}

export const DEFAULT_VIEW: ChartView = { smoothing: 0.6, xAxis: 'step', yScale: 'linear', panels: [] };

/** Query parameter names: short, so a link stays readable. */
const Q = { smoothing: 'smooth', xAxis: 'x', yScale: 'y', panels: 'panels' } as const satisfies Record<keyof ChartView, string>;

const X_AXES = ['step', 'time'] as const satisfies readonly XAxisKind[];
const Y_SCALES = ['linear', 'log'] as const satisfies readonly YScale[];

/** The view's query parameters: only those that differ from the default (a default view adds nothing). */
export function viewToQuery(v: ChartView): Record<string, string> {
  const q: Record<string, string> = {};
  if (v.smoothing !== DEFAULT_VIEW.smoothing) q[Q.smoothing] = String(v.smoothing);
  if (v.xAxis !== DEFAULT_VIEW.xAxis) q[Q.xAxis] = v.xAxis;
  if (v.yScale !== DEFAULT_VIEW.yScale) q[Q.yScale] = v.yScale;
  // Keys hold '/', never ','; each is URI-encoded by URLSearchParams when the hash is written.
  if (v.panels.length) q[Q.panels] = v.panels.join(',');
  return q;
}

/** Whether the query carries any view parameter (else the remembered view applies). */
export function queryHasView(query: Record<string, string | undefined>): boolean {
  return Object.values(Q).some((k) => query[k] !== undefined);
}

/** The view a query describes; anything missing or malformed takes the default. */
export function viewFromQuery(query: Record<string, string | undefined>): ChartView {
  const s = Number(query[Q.smoothing]);
  const smoothing = query[Q.smoothing] !== undefined && Number.isFinite(s) ? Math.min(0.99, Math.max(0, s)) : DEFAULT_VIEW.smoothing;
  const xAxis = (X_AXES as readonly string[]).includes(query[Q.xAxis] ?? '') ? (query[Q.xAxis] as XAxisKind) : DEFAULT_VIEW.xAxis;
  const yScale = (Y_SCALES as readonly string[]).includes(query[Q.yScale] ?? '') ? (query[Q.yScale] as YScale) : DEFAULT_VIEW.yScale;
  const panels = [
    ...new Set(
      (query[Q.panels] ?? '')
        .split(',')
        .map((k) => k.trim())
        .filter((k) => /^[\w./@:-]{1,200}$/.test(k)),
    ),
  ];
  return { smoothing, xAxis, yScale, panels };
}

/** The view as remembered (JSON), read back as totally as a query; null when there is none. */
export function viewFromJson(text: string | null): ChartView | null {
  if (!text) return null;
  try {
    const o = JSON.parse(text) as Partial<ChartView>;
    return viewFromQuery(viewToQuery({ ...DEFAULT_VIEW, ...o, panels: Array.isArray(o.panels) ? o.panels.map(String) : [] }));
  } catch {
    return null;
  }
}

/**
 * Evaluation metrics are recorded every eval.every steps: a handful of points, each the value
 * itself. They are drawn raw: an EMA over them lags the last evaluation by several evaluations
 * (a run whose eval Avg@4 ends at 0.388 drew near 0.29).
 */
export function drawnUnsmoothed(key: string): boolean {
  return key.startsWith('eval/');
}

/**
 * Metric keys matching a search: every whitespace-separated word appears in the key (case
 * folded), keys that start with the first word first, then in their order.
 */
export function searchKeys(keys: readonly string[], query: string): string[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return [...keys];
  const hits = keys.filter((k) => words.every((w) => k.toLowerCase().includes(w)));
  const starts = (k: string) => (k.toLowerCase().startsWith(words[0]) || k.toLowerCase().includes(`/${words[0]}`) ? 0 : 1);
  return hits
    .map((k, i) => [k, i] as const)
    .sort((a, b) => starts(a[0]) - starts(b[0]) || a[1] - b[1])
    .map(([k]) => k);
}
