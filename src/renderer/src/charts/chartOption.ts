/**
 * The ECharts options of a curve panel (charts/chartPanel.ts), built from plain
 * inputs: the full option a panel is (re)built with, the y axis, the series data merged on a live
 * update, and the axis tooltip added on first hover. No state, no chart instance here.
 *
 * What keeps a panel cheap to draw and to update (each measured with `npm run bench -- ui`):
 * animation off everywhere; every series `silent` (clicks are hit-tested by the panel itself on
 * the packed data, not by ECharts' per-element events); only the inside zoom (wheel, drag) and
 * no slider, whose view was rebuilt from the series on every update; the y axis given as fixed
 * bounds and tick step (shared/chartRange) that stay put while live points fall inside them; the
 * raw line drawn faint in an opaque colour pre-mixed with the panel's background (an alpha line
 * costs the canvas more to rasterise); series with ids, so an update merges only the data of the
 * lines that changed (docs/decisions/062-dashboard-drawing.md).
 * Themes: the dark and light colours (THEMES); the light ones follow prefers-color-scheme.
 * The plot's margins come from charts/chartGrid.ts. Tested through test/renderer/chartPanel.test.ts.
 */
import { elapsedLabel, logTickLabel, stepTickLabel, timeAxis, type LogRange } from '../../../shared/chartAxis';
import { mixColor, tickLabel, type YRange } from '../../../shared/chartRange';
import type { XAxisKind, YScale } from '../../../shared/chartView';
import { PLOT_BOTTOM, PLOT_LEFT, PLOT_RIGHT, PLOT_TOP, PLOT_TOP_LEGEND } from './chartGrid';

/** The page's colour scheme (App.vue follows prefers-color-scheme); charts draw in its colours. */
export type ChartTheme = 'dark' | 'light';

interface ThemeColors {
  /** Line colours, in order (a line's raw and EMA share one). */
  lines: readonly string[];
  /** The panels' background (App.vue --panel), under the faint raw lines. */
  panel: string;
  label: string;
  split: string;
  tooltipBg: string;
  tooltipBorder: string;
  tooltipText: string;
}

/** Pastels on the dark panels; the same hues darker on the light ones (readable on white). */
export const THEMES = {
  dark: {
    lines: ['#8fb8ff', '#f28e2b', '#7ee787', '#ff7b72', '#d2a8ff', '#f2cc60', '#76b7b2', '#ff9da7'],
    panel: '#171b24',
    label: '#9aa3b2',
    split: '#1f2533',
    tooltipBg: '#0d1016',
    tooltipBorder: '#2a3040',
    tooltipText: '#e6e9ef',
  },
  light: {
    lines: ['#1f5fbf', '#d9650b', '#1a8f3a', '#c9302c', '#7b4bb7', '#a88400', '#2b8a83', '#c2477a'],
    panel: '#ffffff',
    label: '#5b6473',
    split: '#e8ebf0',
    tooltipBg: '#ffffff',
    tooltipBorder: '#cfd5df',
    tooltipText: '#1d2330',
  },
} as const satisfies Record<ChartTheme, ThemeColors>;

/** Share of a line's colour in its faint raw line (over the panel). */
const FAINT = 0.3;
const FAINT_LINES = Object.fromEntries(Object.entries(THEMES).map(([k, t]) => [k, t.lines.map((c) => mixColor(c, t.panel, FAINT))])) as Record<
  ChartTheme,
  string[]
>;

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

type TooltipItem = { seriesId?: string; seriesName?: string; marker?: string; value?: unknown; axisValue?: unknown };
const fmtValue = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? Number(v.toPrecision(5)).toString() : '–');

/**
 * The axis tooltip, given to the chart the first time the pointer enters it: a chart nobody
 * points at never builds its tooltip and axis pointer, which cost about as much as the line
 * itself to set up and to update on every live point. A line's raw and EMA series share its name
 * (so one legend entry toggles both); the tooltip tells them apart by series id.
 */
export function tooltipOption(theme: ChartTheme = 'dark', xAxis: XAxisKind = 'step') {
  const t = THEMES[theme];
  return {
    tooltip: {
      trigger: 'axis' as const,
      confine: true,
      backgroundColor: t.tooltipBg,
      borderColor: t.tooltipBorder,
      textStyle: { color: t.tooltipText, fontSize: 11 },
      formatter: (items: TooltipItem | TooltipItem[]) => {
        const list = Array.isArray(items) ? items : [items];
        const x = Number(list[0]?.axisValue);
        const head = xAxis === 'step' ? `step ${Math.round(x)}` : elapsedLabel(x, true);
        const rows = list.map((p) => {
          // Packed rows come back as [x, y, step] (or the y alone, with encode.tooltip y).
          const y = Array.isArray(p.value) || ArrayBuffer.isView(p.value) ? (p.value as ArrayLike<number>)[1] : p.value;
          const name = escapeText(String(p.seriesName ?? ''));
          return `${p.marker ?? ''}${name}${p.seriesId?.startsWith('e') ? ' (EMA)' : ''}&nbsp;&nbsp;<b>${fmtValue(y)}</b>`;
        });
        return [head, ...rows].join('<br>');
      },
    },
  };
}

const escapeText = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The y axis option: linear bounds on nice ticks (shared/chartRange), or whole decades on a log axis. */
export function yAxisOption(y: YRange | LogRange, scale: YScale = 'linear') {
  if (scale === 'log') return { type: 'log' as const, logBase: 10, min: y.min, max: y.max, interval: undefined, axisLabel: { formatter: logTickLabel } };
  const r = y as YRange;
  return { type: 'value' as const, min: r.min, max: r.max, interval: r.interval, axisLabel: { formatter: (v: number) => tickLabel(v, r) } };
}

/** The x axis option: whole steps, or wall time since the first point as h:mm on round ticks. */
export function xAxisOption(xAxis: XAxisKind, timeSpan: number) {
  if (xAxis === 'step') {
    return { name: 'step', minInterval: 1, interval: undefined, axisLabel: { formatter: stepTickLabel }, axisPointer: { label: { precision: 0 } } };
  }
  const t = timeAxis(timeSpan);
  return {
    name: t.name,
    minInterval: undefined,
    interval: t.interval,
    axisLabel: { formatter: t.label },
    axisPointer: { label: { formatter: (p: { value: number }) => elapsedLabel(p.value, true) } },
  };
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
  xAxis: XAxisKind;
  y: YRange | LogRange;
  /** Linear (default) or log y axis (`y` then a LogRange). */
  yScale?: YScale;
  /** The x extent in seconds on a time axis (picks its tick step). */
  timeSpan?: number;
  theme?: ChartTheme;
  tooltip: boolean;
}

/** The whole option (setOption with notMerge): a new set of lines, smoothing, axes or theme. */
export function fullOption(o: FullOptionInput) {
  const theme = o.theme ?? 'dark';
  const t = THEMES[theme];
  const label = { color: t.label, fontSize: 10 };
  const split = { lineStyle: { color: t.split } };
  // Packed (x, y, step) data: x and y drawn, step kept for clicks.
  const dims = { dimensions: ['x', 'y', 'step'], encode: { x: 'x', y: 'y', tooltip: 'y' } };
  const common = { type: 'line' as const, ...dims, silent: true, animation: false, emphasis: { disabled: true }, connectNulls: false };
  const series = o.names.flatMap((name, i) => {
    const [raw, ema] = seriesData(o.lines, [i]);
    const color = t.lines[i % t.lines.length];
    const faint = ema ? FAINT_LINES[theme][i % t.lines.length] : color;
    const rawSeries = { ...common, ...raw, name, symbolSize: 4, lineStyle: { width: 1, color: faint }, itemStyle: { color: faint } };
    if (!ema) return [rawSeries];
    // The same name as the raw series: the legend entry toggles both lines.
    return [rawSeries, { ...common, ...ema, name, showSymbol: false, lineStyle: { width: 2, color }, itemStyle: { color } }];
  });
  const y = yAxisOption(o.y, o.yScale);
  const x = xAxisOption(o.xAxis, o.timeSpan ?? 0);
  const legend = o.names.length > 1;
  return {
    backgroundColor: 'transparent',
    animation: false,
    ...(o.tooltip ? tooltipOption(theme, o.xAxis) : {}),
    // The margins fit the labels: no outer-bounds layout (ECharts 6 measures every axis label for
    // it on every update).
    grid: { left: PLOT_LEFT, right: PLOT_RIGHT, top: legend ? PLOT_TOP_LEGEND : PLOT_TOP, bottom: PLOT_BOTTOM, outerBoundsMode: 'none' as const },
    // Legend entries in the line colour (the EMA's, not the faint raw one).
    legend: legend
      ? {
          top: 0,
          textStyle: { color: t.label, fontSize: 10 },
          itemHeight: 6,
          data: o.names.map((name, i) => ({ name, itemStyle: { color: t.lines[i % t.lines.length] } })),
        }
      : undefined,
    xAxis: {
      type: 'value' as const,
      ...x,
      nameGap: 4,
      nameTextStyle: label,
      min: 'dataMin' as const,
      max: 'dataMax' as const,
      axisLabel: { ...label, ...x.axisLabel },
      splitLine: split,
    },
    yAxis: { ...y, axisLabel: { ...label, ...y.axisLabel }, splitLine: split },
    // Wheel zoom and drag pan; the panel's "reset zoom" button shows the whole run again.
    // filterMode 'none': the window clips the drawing; points outside it are not filtered out of
    // the data on every update (and the y range stays the run's, as set above).
    dataZoom: [{ type: 'inside' as const, filterMode: 'none' as const }],
    series,
  };
}
