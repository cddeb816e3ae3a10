/**
 * One curve panel's chart, as a plain object (no Vue, no DOM): what is drawn (lines packed by
 * chartLine, options from chartOption), when (shared/drawGate: a change at once, then at most
 * once per frame), how a change is drawn (a new shape rebuilds; a live point is appended, EMA
 * continued, and only the changed lines' data merged; the y axis only when a value left it), the
 * pointer (a click picks the nearest row of the line drawn nearest, hit-tested on the packed data;
 * the axis tooltip is added on first hover), and the zoom window's bookkeeping (the step range
 * each line shows, its full-detail points spliced in, the window then pinned by value).
 * Not here: the ECharts instance (made by the injected `createChart`), the frame clock (injected),
 * the debounce and the fetch of a zoom's detail (composables/useChartZoom), the host element, its
 * ResizeObserver and the downloads (components/RunDashboardChart.vue, a thin shell over this).
 * Its boundary (view, chart, clock, hooks, zoom window) is typed in chartPanelTypes.ts.
 * Tested by test/renderer/chartPanel.test.ts with a fake chart and a hand-driven frame clock.
 */
import type { SeriesPoint } from '../../../shared/api';
import { logYRange, type LogRange } from '../../../shared/chartAxis';
import { keepYRange, type YRange } from '../../../shared/chartRange';
import { metricKind } from '../../../shared/metricCatalogue';
import { drawGate, type DrawGate } from '../../../shared/drawGate';
import { chartMaxPoints } from '../../../shared/seriesWindow';
import { PLOT_LEFT, PLOT_RIGHT } from './chartGrid';
import { buildLine, extendLine, nearestRow, type ChartLine, type DrawnLine, type LineStyle } from './chartLine';
import { fullOption, seriesData, THEMES, tooltipOption, xAxisOption, yAxisOption, type LineData } from './chartOption';
import type { ChartPanelOptions, DetailWant, PanelChart, PanelState, PanelView, PointerAt, Size, ZoomEvent, ZoomWindow } from './chartPanelTypes';

/** A pointer that moved more than this between press and click dragged (panned): no pick (px). */
const CLICK_SLOP = 4;

export class ChartPanel<Host = unknown> {
  private readonly opts: ChartPanelOptions<Host>;
  private readonly gate: DrawGate;
  private view: PanelView | null = null;
  private host: Host | null = null;
  /** The host's content box as its ResizeObserver last reported it; null: not laid out yet. */
  private box: Size | null = null;
  private chart: PanelChart | null = null;
  private drawn: DrawnLine[] = [];
  /** What the chart's structure (series, legend, grid) was built for; null: nothing built. */
  private shape: string | null = null;
  /** The y axis last given to the chart (kept while the data stay inside it). */
  private shownY: YRange | LogRange | null = null;
  /** The time axis's tick step last given to the chart (s; 0 on a step axis). */
  private shownTimeStep = 0;
  /** Lines whose detail changed since the last draw (they are rebuilt). */
  private readonly dirty = new Set<number>();
  private tooltipOn = false;
  private pressedAt: [number, number] | null = null;
  private state: PanelState = { zoomed: false, zoomNote: null };
  /** Bumped by every zoom gesture and rebuild: a detail read for an older window is dropped. */
  generation = 0;

  constructor(opts: ChartPanelOptions<Host>) {
    this.opts = opts;
    this.gate = drawGate(() => this.draw(), opts.frames.next, opts.frames.cancel);
  }

  /** Shows `view`: drawn at once, or in the next frame when a draw happened in this one. */
  setView(view: PanelView): void {
    this.view = view;
    this.gate.request();
  }

  /** The element the chart lives in (null: none, the panel has no points); a new host drops the chart. */
  setHost(host: Host | null): void {
    this.box = null;
    if (this.chart && this.host !== host) this.teardown();
    this.host = host;
  }

  /** The host's size from its ResizeObserver: the first one draws the chart, later ones resize it. */
  resize(size: Size): void {
    if (!size.width || !size.height || (this.box && this.box.width === size.width && this.box.height === size.height)) return;
    this.box = size;
    if (this.chart) this.chart.resize(size);
    else this.draw();
  }

  /** Gives the chart its axis tooltip the first time the pointer enters it (chartOption tooltipOption says why). */
  pointerEnter(): void {
    if (this.tooltipOn || !this.chart || !this.view) return;
    this.tooltipOn = true;
    this.chart.setOption(tooltipOption(this.view.theme, this.view.xAxis));
  }

  get zoomed(): boolean {
    return this.state.zoomed;
  }

  /** The "reset zoom" button: the whole run again (its datazoom event drops the details). */
  resetZoom(): void {
    this.chart?.dispatchAction({ type: 'dataZoom', start: 0, end: 100 });
  }

  /** Each line's points as held (zoom detail included): what the CSV download writes. */
  heldLines(): ChartLine[] {
    return (this.view?.lines ?? []).map((l, i) => ({ ...l, points: this.drawn[i]?.points ?? l.points }));
  }

  /** The panel as drawn, as a PNG data URL at twice its size on the panel's background (null: no chart). */
  pngDataUrl(): string | null {
    if (!this.chart || !this.view) return null;
    return this.chart.getDataURL({ type: 'png', pixelRatio: 2, backgroundColor: THEMES[this.view.theme].panel });
  }

  /**
   * The zoom window in axis units, read back from the chart (the plot's left and right edges), and
   * for each line with a source the step range it shows; null when there is nothing to fetch.
   */
  zoomWindow(dpr: number): ZoomWindow | null {
    const { chart, box, view } = this;
    if (!chart || !box || !view) return null;
    const x0 = Number(chart.convertFromPixel({ xAxisIndex: 0 }, PLOT_LEFT));
    const x1 = Number(chart.convertFromPixel({ xAxisIndex: 0 }, box.width - PLOT_RIGHT));
    if (!Number.isFinite(x0) || !Number.isFinite(x1) || x1 <= x0) return null;
    const wanted = view.lines.flatMap((l, i): DetailWant[] => {
      const d = this.drawn[i];
      if (!l.source || !d || !d.raw.length) return [];
      const a = Math.max(0, d.raw.lowerBoundX(x0) - 1);
      const z = Math.min(d.raw.length - 1, d.raw.lowerBoundX(x1));
      return [{ line: i, source: l.source, fromStep: d.raw.step(a), toStep: d.raw.step(z) }];
    });
    if (!wanted.length) return null;
    return { x0, x1, maxPoints: chartMaxPoints(box.width - PLOT_LEFT - PLOT_RIGHT, dpr), wanted, generation: this.generation };
  }

  /**
   * The detail fetched for `win` (one answer per wanted line, null: no such series): spliced into
   * the lines and drawn, the window pinned by value so live points extend the axis without
   * sliding it. Dropped when a gesture or rebuild came after the window was read.
   */
  setDetail(win: ZoomWindow, got: readonly (SeriesPoint[] | null)[]): void {
    if (win.generation !== this.generation || !this.chart) return;
    win.wanted.forEach((w, k) => {
      const points = got[k];
      const d = this.drawn[w.line];
      if (!points || !d) return;
      d.detail = { fromStep: w.fromStep, toStep: w.toStep, points };
      this.dirty.add(w.line);
    });
    this.chart.setOption({ dataZoom: [{ startValue: win.x0, endValue: win.x1 }] });
    this.gate.request();
  }

  /** The whole run is shown again: the lines drop their details. */
  clearDetail(): void {
    this.drawn.forEach((d, i) => {
      if (!d.detail) return;
      d.detail = null;
      this.dirty.add(i);
    });
    if (this.dirty.size) this.gate.request();
  }

  /** The panel unmounts: no pending draw, no chart. */
  dispose(): void {
    this.gate.cancel();
    this.generation++;
    this.teardown();
    this.host = null;
  }

  private setState(next: Partial<PanelState>): void {
    if (Object.entries(next).every(([k, v]) => this.state[k as keyof PanelState] === v)) return;
    this.state = { ...this.state, ...next };
    this.opts.onState?.(this.state);
  }

  private style(): LineStyle {
    const v = this.view!;
    return { smoothing: v.smoothing, xAxis: v.xAxis, yScale: v.yScale };
  }

  private lineData(): LineData[] {
    const smooth = this.view!.smoothing > 0;
    return this.drawn.map((d) => ({ raw: d.raw.view(), ema: smooth ? d.ema.view() : null, count: d.points.length }));
  }

  /** The y axis for the drawn lines: the shown one while every value stays inside it. */
  private yRange(): YRange | LogRange {
    let lo = Infinity;
    let hi = -Infinity;
    for (const d of this.drawn) {
      if (d.lo < lo) lo = d.lo;
      if (d.hi > hi) hi = d.hi;
    }
    const shown = this.shownY;
    if (this.view!.yScale === 'log') {
      const r = logYRange(lo, hi);
      return shown && shown.min === r.min && shown.max === r.max ? shown : r;
    }
    // Shares (metric catalogue kind 'fraction') never get an axis above 1.
    const shares = this.view!.lines.length > 0 && this.view!.lines.every((l) => l.source && metricKind(l.source.key) === 'fraction');
    return keepYRange(lo, hi, shown && 'interval' in shown ? shown : null, shares ? 1 : Infinity);
  }

  /** Seconds from the first to the last point drawn (the time axis's extent). */
  private timeSpan(): number {
    let span = 0;
    for (const d of this.drawn) if (d.raw.length) span = Math.max(span, d.raw.x(d.raw.length - 1));
    return span;
  }

  private createChart(host: Host, size: Size): PanelChart {
    const c = this.opts.createChart(host, size);
    const zr = c.getZr();
    zr.on('mousedown', (e) => {
      this.pressedAt = [e.offsetX, e.offsetY];
    });
    zr.on('click', (e) => this.click(e));
    c.on('datazoom', (params) => this.zoomGesture(params as ZoomEvent));
    return c;
  }

  /**
   * A click in the plot picks the nearest row (by x) of the line drawn nearest the pointer (raw or
   * EMA, by y), hit-tested here on the packed data: the series are silent, so this works on a line
   * of thousands of points without symbols. A press that panned the window is not a click.
   */
  private click(e: PointerAt): void {
    const { chart, pressedAt, view } = this;
    if (!chart || !view || !pressedAt || Math.hypot(e.offsetX - pressedAt[0], e.offsetY - pressedAt[1]) > CLICK_SLOP) return;
    if (!chart.containPixel({ gridIndex: 0 }, [e.offsetX, e.offsetY])) return;
    const x = Number(chart.convertFromPixel({ xAxisIndex: 0 }, e.offsetX));
    let best: { step: number; name: string; dist: number } | null = null;
    for (const [i, d] of this.drawn.entries()) {
      const j = nearestRow(d.raw, x);
      if (j < 0) continue;
      for (const y of [d.raw.y(j), view.smoothing > 0 ? d.ema.y(j) : NaN]) {
        if (!Number.isFinite(y)) continue;
        const dist = Math.abs(Number(chart.convertToPixel({ yAxisIndex: 0 }, y)) - e.offsetY);
        if (!best || dist < best.dist) best = { step: d.raw.step(j), name: view.lines[i].name, dist };
      }
    }
    if (best) this.opts.onPick?.(best.step, best.name);
  }

  /** A zoom gesture (wheel, drag, reset): older zoom answers are dropped; the owner fetches the new window's detail. */
  private zoomGesture(params: ZoomEvent): void {
    this.generation++;
    const b = params.batch?.[0] ?? params;
    const full = (b.start ?? 0) <= 0 && (b.end ?? 100) >= 100;
    this.setState({ zoomed: !full });
    this.opts.onZoom?.(full);
  }

  /** Drops the chart (the panel lost its data, its host, or unmounts): the next draw starts from scratch. */
  private teardown(): void {
    this.chart?.dispose();
    this.chart = null;
    this.shape = null;
    this.tooltipOn = false;
    this.setState({ zoomed: false, zoomNote: null });
  }

  /**
   * Draws what changed since the last draw (through the gate: at most once per frame): a new
   * shape (lines, smoothing, axes, theme) rebuilds the chart; a line that only grew at its end (a
   * live point) is extended, EMA continued from its state; a line whose zoom detail arrived or
   * left is rebuilt with it; other lines are left alone; and the changed lines' data are merged
   * into the chart (and the y axis when a value left it, the time ticks when their step changed).
   */
  private draw(): void {
    const view = this.view;
    const hasData = !!view && view.lines.some((l) => l.points.length);
    if (this.chart && !hasData) this.teardown();
    if (!view || !hasData || this.host === null || !this.box) return; // no size yet: resize() draws when it has one
    const chart = (this.chart ??= this.createChart(this.host, this.box));
    const want = JSON.stringify([view.lines.map((l) => l.name), view.smoothing, view.xAxis, view.yScale, view.theme]);
    if (want !== this.shape) {
      this.rebuild(chart, view, want);
      return;
    }
    const changed: number[] = [];
    let rebuilt = false;
    view.lines.forEach((l, i) => {
      const d = this.drawn[i];
      const dirty = this.dirty.has(i);
      if (!dirty && (l.points === d.overview || (!l.points.length && !d.overview.length))) return;
      changed.push(i);
      const n = d.overview.length;
      const grew = !dirty && n > 0 && l.points.length > n && l.points[n - 1] === d.overview[n - 1] && l.points[0] === d.overview[0];
      // With a detail, a live point is appended only after the detail's range (else it belongs inside it).
      if (grew && (!d.detail || l.points[n].step > d.detail.toStep)) {
        const from = d.points.length;
        d.points = d.detail ? d.points.concat(l.points.slice(n)) : l.points;
        d.overview = l.points;
        extendLine(d, from, this.style());
      } else {
        this.drawn[i] = buildLine(l.points, d.detail, this.style());
        rebuilt = true;
      }
    });
    this.dirty.clear();
    if (!changed.length) return;
    const detailed = this.drawn.filter((d) => d.detail);
    this.setState({
      zoomNote: detailed.length
        ? `steps ${detailed[0].detail!.fromStep}–${detailed[0].detail!.toStep}: ${detailed.map((d) => d.detail!.points.length).join(' / ')} pts`
        : null,
    });
    // A shown tooltip would keep the data index of the replaced points (the next pointer move shows a fresh one).
    if (rebuilt && this.tooltipOn) chart.dispatchAction({ type: 'hideTip' });
    const y = this.yRange();
    const series = seriesData(this.lineData(), changed);
    const update: Record<string, unknown> = y === this.shownY ? { series } : { yAxis: yAxisOption(y, view.yScale), series };
    if (view.xAxis === 'time') {
      // A growing run: round ticks of the new extent (only when the tick step changes).
      const x = xAxisOption('time', this.timeSpan());
      if (x.interval !== this.shownTimeStep) {
        this.shownTimeStep = Number(x.interval);
        update.xAxis = x;
      }
    }
    chart.setOption(update);
    this.shownY = y;
  }

  /** A new shape: every line packed afresh, the whole option set (notMerge resets the zoom window, so details are dropped). */
  private rebuild(chart: PanelChart, view: PanelView, shape: string): void {
    this.generation++;
    this.dirty.clear();
    this.setState({ zoomed: false, zoomNote: null });
    this.drawn = view.lines.map((l) => buildLine(l.points, null, this.style()));
    this.shape = shape;
    this.shownY = null; // a rebuild picks its y range afresh
    this.shownY = this.yRange();
    const span = this.timeSpan();
    this.shownTimeStep = view.xAxis === 'time' ? Number(xAxisOption('time', span).interval) : 0;
    const names = view.lines.map((l) => l.name);
    const { xAxis, yScale, theme } = view;
    const option = { names, lines: this.lineData(), xAxis, y: this.shownY, yScale, timeSpan: span, theme, tooltip: this.tooltipOn };
    chart.setOption(fullOption(option), { notMerge: true });
  }
}
