/**
 * The ECharts options of a curve panel (components/RunDashboardChart.vue), built from plain
 * inputs: the full option a panel is (re)built with, the y axis, the series data merged on a live
 * update, and the axis tooltip added on first hover. No state, no chart instance here.
 *
 * What keeps a panel cheap to draw and to update (each measured with `npm run bench -- ui`):
 * animation off everywhere; every series `silent` (clicks are hit-tested by the panel itself on
 * the packed data, not by ECharts' per-element events); only the inside zoom (wheel, drag) and
 * no slider, whose view was rebuilt from the series on every update; the y axis given as fixed
 * bounds and tick step (shared/chartRange) that stay put while live points fall inside them; the
 * raw line drawn faint in an opaque colour pre-mixed with the panel's background (an alpha line
 * costs the canvas 2-8 ms more to rasterise); series with ids, so an update merges only the data
 * of the lines that changed.
 */
import { mixColor, tickLabel, type YRange } from '../../../shared/chartRange';

/** The plot's horizontal margins inside a chart (px): y-axis labels on the left. */
export const GRID_LEFT = 52;
export const GRID_RIGHT = 46; // room for the last x label and the axis name

export const COLORS = ['#8fb8ff', '#f28e2b', '#7ee787', '#ff7b72', '#d2a8ff', '#f2cc60', '#76b7b2', '#ff9da7'];
/** The panels' background (App.vue --panel), under the faint raw lines. */
const PANEL_BG = '#171b24';
/** Share of a line's colour in its faint raw line (over PANEL_BG). */
const FAINT = 0.3;
const FAINT_COLORS = COLORS.map((c) => mixColor(c, PANEL_BG, FAINT));
const LABEL = { color: '#9aa3b2', fontSize: 10 };
const SPLIT = { lineStyle: { color: '#1f2533' } };

/** Series ids: a line's raw and EMA series, so updates merge by id. */
export const rawId = (i: number) => `r${i}`;
export const emaId = (i: number) => `e${i}`;

/** One line's data as the chart takes it: packed (x, y, step) rows, and the EMA's when smoothed. */
export interface LineData {
  raw: Float64Array;
  ema: Float64Array | null;
  /** Points drawn: few points get symbols. */
  count: number;
}

/**
 * The axis tooltip, given to the chart the first time the pointer enters it: a chart nobody
 * points at never builds its tooltip and axis pointer, which cost about as much as the line
 * itself to set up and to update on every live point.
 */
export const TOOLTIP = {
  tooltip: {
    trigger: 'axis' as const,
    confine: true,
    backgroundColor: '#0d1016',
    borderColor: '#2a3040',
    textStyle: { color: '#e6e9ef', fontSize: 11 },
    valueFormatter: (v: unknown) => (typeof v === 'number' ? Number(v.toPrecision(5)).toString() : '–'),
  },
};

export function yAxisOption(y: YRange) {
  return { min: y.min, max: y.max, interval: y.interval, axisLabel: { formatter: (v: number) => tickLabel(v, y) } };
}

/** The data of lines `which` (indexes), by series id: what a live update merges. */
export function seriesData(lines: readonly LineData[], which: Iterable<number>) {
  const out: { id: string; data: Float64Array; showSymbol?: boolean }[] = [];
  for (const i of which) {
    const l = lines[i];
    // ECharts copies the packed views (setOption clones its input), so later pushes do not touch what it holds.
    out.push({ id: rawId(i), data: l.raw, showSymbol: l.count < 30 });
    if (l.ema) out.push({ id: emaId(i), data: l.ema });
  }
  return out;
}

export interface FullOptionInput {
  /** One per line, in order; a line drawn smoothed has EMA rows (`ema`), else it is drawn raw at full strength. */
  names: readonly string[];
  lines: readonly LineData[];
  xAxis: 'step' | 'time';
  y: YRange;
  tooltip: boolean;
  /** The plot's margins (px). */
  left: number;
  right: number;
}

/** The whole option (setOption with notMerge): a new set of lines, smoothing or x axis. */
export function fullOption(o: FullOptionInput) {
  // Packed (x, y, step) data: x and y drawn, step kept for clicks.
  const dims = { dimensions: ['x', 'y', 'step'], encode: { x: 'x', y: 'y', tooltip: 'y' } };
  const common = { type: 'line' as const, ...dims, silent: true, animation: false, emphasis: { disabled: true }, connectNulls: false };
  const series = o.names.flatMap((name, i) => {
    const [raw, ema] = seriesData(o.lines, [i]);
    const color = COLORS[i % COLORS.length];
    const faint = ema ? FAINT_COLORS[i % COLORS.length] : color;
    const rawSeries = { ...common, ...raw, name, symbolSize: 4, lineStyle: { width: 1, color: faint }, itemStyle: { color: faint } };
    if (!ema) return [rawSeries];
    return [rawSeries, { ...common, ...ema, name: `${name} (EMA)`, showSymbol: false, lineStyle: { width: 2, color }, itemStyle: { color } }];
  });
  const y = yAxisOption(o.y);
  const legend = o.names.length > 1;
  return {
    backgroundColor: 'transparent',
    animation: false,
    ...(o.tooltip ? TOOLTIP : {}),
    // The margins fit the labels: no outer-bounds layout (ECharts 6 measures every axis label for
    // it on every update).
    grid: { left: o.left, right: o.right, top: legend ? 34 : 12, bottom: 22, outerBoundsMode: 'none' as const },
    legend: legend ? { top: 0, textStyle: { color: LABEL.color, fontSize: 10 }, itemHeight: 6, data: [...o.names] } : undefined,
    xAxis: {
      type: 'value' as const,
      name: o.xAxis === 'step' ? 'step' : 's',
      nameGap: 4,
      min: 'dataMin' as const,
      max: 'dataMax' as const,
      axisLabel: LABEL,
      splitLine: SPLIT,
      // The tooltip's heading: a step is a whole number (ECharts' automatic precision shows 10,087.00).
      ...(o.xAxis === 'step' ? { axisPointer: { label: { precision: 0 } } } : {}),
    },
    yAxis: { type: 'value' as const, ...y, axisLabel: { ...LABEL, ...y.axisLabel }, splitLine: SPLIT },
    // Wheel zoom and drag pan; the panel's "reset zoom" button shows the whole run again.
    // filterMode 'none': the window clips the drawing; points outside it are not filtered out of
    // the data on every update (and the y range stays the run's, as set above).
    dataZoom: [{ type: 'inside' as const, filterMode: 'none' as const }],
    series,
  };
}
