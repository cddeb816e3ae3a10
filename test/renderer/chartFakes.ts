/**
 * Test doubles for charts/chartPanel: a fake ECharts instance (records what it is given, maps
 * pixels to axis values linearly, fires zoom and pointer events on demand) and a panel over it
 * with a hand-driven frame clock (test/shared/frameClock). Used by chartPanel.test.ts and
 * useChartZoom.test.ts here.
 */
import type { SeriesPoint } from '../../src/shared/api';
import { PLOT_LEFT, PLOT_RIGHT } from '../../src/renderer/src/charts/chartGrid';
import { ChartPanel } from '../../src/renderer/src/charts/chartPanel';
import type { ChartPanelOptions, PanelChart, PanelState, PointerAt, Size } from '../../src/renderer/src/charts/chartPanelTypes';
import { frames } from '../shared/frameClock';

/** x axis: the plot (PLOT_LEFT .. width - PLOT_RIGHT) shows [x0, x1]; y axis: pixel = 100 - 10 * y. */
export class FakeChart implements PanelChart {
  calls: { option: Record<string, unknown>; notMerge: boolean }[] = [];
  resized: Size[] = [];
  actions: { type: string }[] = [];
  disposed = false;
  x0 = 0;
  x1 = 10;
  inPlot = true;
  private zoomHandler: ((p: unknown) => void) | null = null;
  private zr: Record<string, (e: PointerAt) => void> = {};

  constructor(
    readonly host: unknown,
    public size: Size,
  ) {}

  setOption(option: object, opts?: { notMerge?: boolean }): void {
    this.calls.push({ option: option as Record<string, unknown>, notMerge: !!opts?.notMerge });
  }
  resize(size: Size): void {
    this.resized.push(size);
    this.size = size;
  }
  dispose(): void {
    this.disposed = true;
  }
  containPixel(): boolean {
    return this.inPlot;
  }
  convertFromPixel(_f: unknown, px: number): number {
    return this.x0 + ((px - PLOT_LEFT) / (this.size.width - PLOT_LEFT - PLOT_RIGHT)) * (this.x1 - this.x0);
  }
  /** The pixel of axis value x (the inverse of convertFromPixel). */
  pixelOfX(x: number): number {
    return PLOT_LEFT + ((x - this.x0) / (this.x1 - this.x0)) * (this.size.width - PLOT_LEFT - PLOT_RIGHT);
  }
  convertToPixel(_f: unknown, y: number): number {
    return 100 - 10 * y;
  }
  dispatchAction(action: { type: string }): void {
    this.actions.push(action);
  }
  getDataURL(): string {
    return 'data:image/png;base64,AAAA';
  }
  on(_event: 'datazoom', handler: (p: unknown) => void): void {
    this.zoomHandler = handler;
  }
  getZr() {
    return { on: (event: string, handler: (e: PointerAt) => void) => void (this.zr[event] = handler) };
  }
  /** A zoom gesture to [start, end] percent of the axis, as ECharts' inside zoom reports it. */
  zoom(start: number, end: number): void {
    this.zoomHandler?.({ batch: [{ start, end }] });
  }
  press(x: number, y: number): void {
    this.zr.mousedown?.({ offsetX: x, offsetY: y });
  }
  click(x: number, y: number): void {
    this.zr.click?.({ offsetX: x, offsetY: y });
  }
  /** The series entries of the last setOption (id and number of packed rows). */
  lastSeries(): { id: string; rows: number }[] {
    const s = this.calls[this.calls.length - 1].option.series as { id: string; data: Float64Array }[] | undefined;
    return (s ?? []).map((x) => ({ id: x.id, rows: x.data.length / 3 }));
  }
}

/** Points at steps from..to, value f(step), wall time one minute per step. */
export const points = (from: number, to: number, f: (s: number) => number = (s) => s): SeriesPoint[] =>
  Array.from({ length: to - from + 1 }, (_, i) => ({ step: from + i, value: f(from + i), wallTime: 1_700_000_000_000 + (from + i) * 60_000 }));

/** A panel over a fake chart and frame clock, recording its picks, zoom gestures and states. */
export function setupPanel(extra: Partial<ChartPanelOptions<object>> = {}) {
  const f = frames();
  const charts: FakeChart[] = [];
  const picks: [number, string][] = [];
  const zooms: boolean[] = [];
  const states: PanelState[] = [];
  const panel = new ChartPanel<object>({
    createChart: (host, size) => {
      const c = new FakeChart(host, size);
      charts.push(c);
      return c;
    },
    frames: f,
    onPick: (step, line) => picks.push([step, line]),
    onZoom: (full) => zooms.push(full),
    onState: (s) => states.push(s),
    ...extra,
  });
  return { panel, f, charts, picks, zooms, states, chart: () => charts[charts.length - 1] };
}
