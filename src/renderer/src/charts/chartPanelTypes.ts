/**
 * The boundary of a curve panel (charts/chartPanel.ts): what a view gives it (PanelView), the
 * part of an ECharts instance it calls (PanelChart: echarts/core `init` returns one, tests give a
 * fake), the frame clock, the hooks it calls back, what it shows outside the canvas (PanelState),
 * and the zoom window it hands to composables/useChartZoom (ZoomWindow). Types only.
 */
import type { XAxisKind, YScale } from '../../../shared/chartView';
import type { ChartLine, SeriesSource } from './chartLine';
import type { ChartTheme } from './chartOption';

/** What a panel shows. The same `lines` array (and points arrays) as last time: the panel does no work. */
export interface PanelView {
  lines: readonly ChartLine[];
  smoothing: number;
  xAxis: XAxisKind;
  yScale: YScale;
  theme: ChartTheme;
}

export interface Size {
  width: number;
  height: number;
}

/** A pointer event of the chart's zrender layer (offsets in the chart's pixels). */
export interface PointerAt {
  offsetX: number;
  offsetY: number;
}

/** What ECharts' datazoom event carries: the window in percent of the axis extent (batched for 'inside' zoom). */
export type ZoomEvent = { start?: number; end?: number; batch?: { start?: number; end?: number }[] };

/** The part of an ECharts instance a panel uses (echarts/core `init` returns one). */
export interface PanelChart {
  setOption(option: object, opts?: { notMerge?: boolean }): void;
  resize(size: Size): void;
  dispose(): void;
  containPixel(finder: { gridIndex: number }, value: number[]): boolean;
  convertFromPixel(finder: { xAxisIndex: number }, value: number): number | number[];
  convertToPixel(finder: { yAxisIndex: number }, value: number): number | number[];
  dispatchAction(action: { type: string; [k: string]: unknown }): void;
  getDataURL(opts: { type: 'png'; pixelRatio: number; backgroundColor: string }): string;
  on(event: 'datazoom', handler: (params: unknown) => void): void;
  getZr(): { on(event: 'mousedown' | 'click', handler: (e: PointerAt) => void): void };
}

/** A requestAnimationFrame / cancelAnimationFrame pair (hand-driven in tests). */
export interface FrameClock {
  next(cb: () => void): number;
  cancel(id: number): void;
}

/** What the panel shows outside the canvas (the head's "reset zoom" button and zoom note). */
export interface PanelState {
  /** The x axis shows less than the whole run. */
  zoomed: boolean;
  /** While a zoomed window is drawn at full detail: its steps and points. */
  zoomNote: string | null;
}

export interface ChartPanelOptions<Host> {
  /** Makes the chart in `host` at `size` (the size the host's ResizeObserver reported: no measuring). */
  createChart(host: Host, size: Size): PanelChart;
  frames: FrameClock;
  /** A click picked a row: its step and its line's name. */
  onPick?(step: number, line: string): void;
  /** A zoom gesture (wheel, drag, reset); `full`: the whole run is shown again. */
  onZoom?(full: boolean): void;
  onState?(state: PanelState): void;
}

/** One line's step range in the zoom window, one point beyond each edge so the line runs on past them. */
export interface DetailWant {
  line: number;
  source: SeriesSource;
  fromStep: number;
  toStep: number;
}

/** The zoom window read back from the chart: its x range (axis units) and what to fetch for it. */
export interface ZoomWindow {
  x0: number;
  x1: number;
  maxPoints: number;
  wanted: DetailWant[];
  /** The panel's generation when the window was read: a newer gesture or rebuild drops its answer. */
  generation: number;
}
