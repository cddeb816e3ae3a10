// A curve panel's chart without Vue or a browser (src/renderer/src/charts/chartPanel.ts): when it
// draws, what a change costs it, clicks, the zoom window and its detail; and the grid geometry
// (charts/chartGrid.ts). A fake ECharts instance and a hand-driven frame clock (chartFakes.ts).
import { describe, expect, it } from 'vitest';
import { gridMaxPoints, gridPlotWidth, PLOT_LEFT, PLOT_RIGHT } from '../../src/renderer/src/charts/chartGrid';
import { sameLines, type ChartLine } from '../../src/renderer/src/charts/chartLine';
import type { PanelView } from '../../src/renderer/src/charts/chartPanelTypes';
import { points, setupPanel } from './chartFakes';

const view = (lines: ChartLine[], over: Partial<PanelView> = {}): PanelView => ({
  lines,
  smoothing: 0.6,
  xAxis: 'step',
  yScale: 'linear',
  theme: 'dark',
  ...over,
});
const SIZE = { width: 400, height: 200 };

/** A panel drawn once with `lines` (host set, sized), the frame window closed again. */
function drawn(lines: ChartLine[], over: Partial<PanelView> = {}) {
  const t = setupPanel();
  t.panel.setView(view(lines, over));
  t.panel.setHost({});
  t.panel.resize(SIZE);
  t.f.tick();
  return t;
}

describe('ChartPanel: drawing', () => {
  it('makes no chart until its host has a size, then draws every line in one full option', () => {
    const t = setupPanel();
    const host = {};
    t.panel.setView(
      view([
        { name: 'a', points: points(0, 9) },
        { name: 'b', points: points(0, 4) },
      ]),
    );
    t.panel.setHost(host);
    t.panel.resize({ width: 0, height: 200 }); // not laid out yet
    expect(t.charts).toHaveLength(0);
    t.panel.resize(SIZE);
    expect(t.charts).toHaveLength(1);
    expect(t.chart().host).toBe(host);
    expect(t.chart().size).toEqual(SIZE);
    expect(t.chart().calls).toHaveLength(1);
    expect(t.chart().calls[0].notMerge).toBe(true);
    expect(t.chart().lastSeries()).toEqual([
      { id: 'r0', rows: 10 },
      { id: 'e0', rows: 10 },
      { id: 'r1', rows: 5 },
      { id: 'e1', rows: 5 },
    ]);
  });

  it('resizes the chart only when the size really changed', () => {
    const t = drawn([{ name: 'a', points: points(0, 9) }]);
    t.panel.resize(SIZE);
    expect(t.chart().resized).toEqual([]);
    t.panel.resize({ width: 500, height: 200 });
    expect(t.chart().resized).toEqual([{ width: 500, height: 200 }]);
    expect(t.charts).toHaveLength(1);
  });

  it('a panel without points has no chart; one that loses its points disposes it', () => {
    const empty = drawn([{ name: 'a', points: [] }]);
    expect(empty.charts).toHaveLength(0);
    const t = drawn([{ name: 'a', points: points(0, 3) }]);
    t.panel.setView(view([{ name: 'a', points: [] }]));
    expect(t.chart().disposed).toBe(true);
  });

  it('a new host drops the chart; the next size makes a new one there', () => {
    const t = drawn([{ name: 'a', points: points(0, 3) }]);
    const host = {};
    t.panel.setHost(host);
    expect(t.charts[0].disposed).toBe(true);
    t.panel.resize(SIZE);
    expect(t.charts).toHaveLength(2);
    expect(t.chart().host).toBe(host);
  });

  it('the same lines array (and points arrays) does no work', () => {
    const lines = [{ name: 'a', points: points(0, 9) }];
    const t = drawn(lines);
    t.panel.setView(view(lines));
    t.panel.setView(view([{ ...lines[0] }]));
    t.f.tick();
    expect(t.chart().calls).toHaveLength(1);
  });

  it('a live point is appended: only its line is merged, the y axis only when a value leaves it', () => {
    const a = points(0, 9);
    const b = points(0, 9);
    const t = drawn([
      { name: 'a', points: a },
      { name: 'b', points: b },
    ]);
    const a2 = [...a, ...points(10, 10, () => 5)];
    t.panel.setView(
      view([
        { name: 'a', points: a2 },
        { name: 'b', points: b },
      ]),
    );
    const update = t.chart().calls[1];
    expect(update.notMerge).toBe(false);
    expect(t.chart().lastSeries()).toEqual([
      { id: 'r0', rows: 11 },
      { id: 'e0', rows: 11 },
    ]);
    expect(update.option.yAxis).toBeUndefined();
    t.f.tick();
    t.panel.setView(
      view([
        { name: 'a', points: [...a2, ...points(11, 11, () => 1000)] },
        { name: 'b', points: b },
      ]),
    );
    const grown = t.chart().calls[2].option;
    expect((grown.yAxis as { max: number }).max).toBeGreaterThanOrEqual(1000);
  });

  it('changes before the next frame are drawn together in it', () => {
    const a = points(0, 9);
    const t = drawn([{ name: 'a', points: a }]);
    t.panel.setView(view([{ name: 'a', points: points(0, 10) }])); // at once
    t.panel.setView(view([{ name: 'a', points: points(0, 11) }]));
    t.panel.setView(view([{ name: 'a', points: points(0, 12) }]));
    expect(t.chart().calls).toHaveLength(2);
    t.f.tick();
    expect(t.chart().calls).toHaveLength(3);
    expect(t.chart().lastSeries()[0]).toEqual({ id: 'r0', rows: 13 });
  });

  it('a new smoothing, x axis, y scale or theme rebuilds; unsmoothed lines have no EMA series', () => {
    const lines = [{ name: 'a', points: points(1, 9) }];
    const t = drawn(lines);
    for (const over of [{ smoothing: 0 }, { xAxis: 'time' as const }, { yScale: 'log' as const }, { theme: 'light' as const }]) {
      t.panel.setView(view(lines, over));
      t.f.tick();
      const last = t.chart().calls[t.chart().calls.length - 1];
      expect(last.notMerge).toBe(true);
    }
    t.panel.setView(view(lines, { smoothing: 0 }));
    expect(t.chart().lastSeries()).toEqual([{ id: 'r0', rows: 9 }]);
  });
});

describe('ChartPanel: pointer', () => {
  // Line a at y = 0 and b at y = 5 (pixels 100 and 50), steps 0..10 over the plot.
  const lines = () => [
    { name: 'a', points: points(0, 10, () => 0) },
    { name: 'b', points: points(0, 10, () => 5) },
  ];

  it('a click picks the nearest step of the line drawn nearest the pointer', () => {
    const t = drawn(lines());
    const c = t.chart();
    c.press(c.pixelOfX(3.2), 52);
    c.click(c.pixelOfX(3.2), 52);
    c.press(c.pixelOfX(7.7), 95);
    c.click(c.pixelOfX(7.7), 95);
    expect(t.picks).toEqual([
      [3, 'b'],
      [8, 'a'],
    ]);
  });

  it('a press that panned, or a click outside the plot, picks nothing', () => {
    const t = drawn(lines());
    const c = t.chart();
    c.press(100, 52);
    c.click(110, 52);
    c.inPlot = false;
    c.press(100, 52);
    c.click(100, 52);
    expect(t.picks).toEqual([]);
  });

  it('the tooltip is given on the first hover only, and kept by a rebuild', () => {
    const t = drawn(lines());
    t.panel.pointerEnter();
    t.panel.pointerEnter();
    expect(t.chart().calls.filter((c) => 'tooltip' in c.option)).toHaveLength(1);
    t.panel.setView(view(lines(), { smoothing: 0.3 }));
    expect(t.chart().calls[t.chart().calls.length - 1].option.tooltip).toBeDefined();
  });
});

describe('ChartPanel: zoom', () => {
  const source = { runId: 1, key: 'reward/mean' };

  /** Steps 0..10; the fake plot shows x 3.5..6.5 after a gesture. */
  function zoomedIn() {
    const t = drawn([
      { name: 'a', points: points(0, 10), source },
      { name: 'no source', points: points(0, 10) },
    ]);
    const c = t.chart();
    c.zoom(20, 50);
    c.x0 = 3.5;
    c.x1 = 6.5;
    return t;
  }

  it('a gesture reports zoomed; the window spans one point past each edge, for lines with a source', () => {
    const t = zoomedIn();
    expect(t.zooms).toEqual([false]);
    expect(t.panel.zoomed).toBe(true);
    const win = t.panel.zoomWindow(1)!;
    expect(win.x0).toBeCloseTo(3.5);
    expect(win.x1).toBeCloseTo(6.5);
    expect(win.wanted).toEqual([{ line: 0, source, fromStep: 3, toStep: 7 }]);
    // One min/max pair per pixel column of the plot.
    expect(win.maxPoints).toBe(2 * (SIZE.width - PLOT_LEFT - PLOT_RIGHT));
  });

  it('the detail is spliced in, noted in the head, and the window pinned by value', () => {
    const t = zoomedIn();
    const win = t.panel.zoomWindow(1)!;
    const detail = points(3, 7)
      .flatMap((p) => [p, { ...p, step: p.step + 0.5 }])
      .slice(0, 9); // 9 detail points in 3..7
    t.panel.setDetail(win, [detail]);
    const pin = t.chart().calls.find((c) => !c.notMerge && c.option.dataZoom)!.option.dataZoom as { startValue: number; endValue: number }[];
    expect(pin[0].startValue).toBeCloseTo(3.5);
    expect(pin[0].endValue).toBeCloseTo(6.5);
    t.f.tick();
    expect(t.states[t.states.length - 1]).toEqual({ zoomed: true, zoomNote: 'steps 3–7: 9 pts' });
    // Steps 0..2 and 8..10 of the overview around the 9 detail points.
    expect(t.chart().lastSeries()).toEqual([
      { id: 'r0', rows: 15 },
      { id: 'e0', rows: 15 },
    ]);
    expect(t.panel.heldLines()[0].points).toHaveLength(15);
    expect(t.panel.heldLines()[1].points).toHaveLength(11);
  });

  it('an answer for an older window is dropped (a newer gesture, or a rebuild)', () => {
    const t = zoomedIn();
    const win = t.panel.zoomWindow(1)!;
    t.chart().zoom(30, 60);
    t.panel.setDetail(win, [points(3, 7)]);
    const rebuilt = zoomedIn();
    const win2 = rebuilt.panel.zoomWindow(1)!;
    rebuilt.panel.setView(view(rebuilt.panel.heldLines(), { smoothing: 0.2 }));
    rebuilt.panel.setDetail(win2, [points(3, 7)]);
    for (const x of [t, rebuilt]) {
      x.f.tick();
      expect(x.panel.heldLines()[0].points).toHaveLength(11);
      expect(x.states.some((s) => s.zoomNote)).toBe(false);
    }
    expect(rebuilt.panel.zoomed).toBe(false);
  });

  it('back to the whole run: the details are dropped; reset asks ECharts for the whole range', () => {
    const t = zoomedIn();
    t.panel.setDetail(t.panel.zoomWindow(1)!, [points(3, 7).flatMap((p) => [p, { ...p, step: p.step + 0.5 }])]);
    t.f.tick();
    t.panel.resetZoom();
    expect(t.chart().actions).toEqual([{ type: 'dataZoom', start: 0, end: 100 }]);
    t.chart().zoom(0, 100);
    expect(t.zooms).toEqual([false, true]);
    t.panel.clearDetail();
    expect(t.panel.heldLines()[0].points).toHaveLength(11);
    expect(t.states[t.states.length - 1]).toEqual({ zoomed: false, zoomNote: null });
  });

  it('dispose disposes the chart and drops the pending draw', () => {
    const t = drawn([{ name: 'a', points: points(0, 3) }]);
    t.panel.setView(view([{ name: 'a', points: points(0, 4) }]));
    t.panel.setView(view([{ name: 'a', points: points(0, 5) }]));
    t.panel.dispose();
    expect(t.chart().disposed).toBe(true);
    expect(t.f.size).toBe(0);
  });
});

describe('sameLines (a view memoising its panels)', () => {
  const pts = points(0, 3);
  const line = (over: Partial<ChartLine> = {}): ChartLine => ({ name: 'a', points: pts, source: { runId: 1, key: 'a' }, ...over });

  it('keeps the previous array while names, sources and points arrays are the same', () => {
    const prev = [line()];
    expect(sameLines(prev, [line()])).toBe(prev);
  });

  it('takes the new array when a line changed', () => {
    const prev = [line()];
    for (const next of [[line({ points: points(0, 3) })], [line({ name: 'b' })], [line({ source: { runId: 2, key: 'a' } })], [line(), line()], []]) {
      expect(sameLines(prev, next)).toBe(next);
    }
    const next = [line()];
    expect(sameLines(undefined, next)).toBe(next);
  });
});

describe('chartGrid', () => {
  it('the plot width of a grid: auto-fill columns of at least 380 px, 10 px apart, less the panel inset and plot margins', () => {
    expect(gridPlotWidth(380)).toBe(380 - 18 - 98);
    expect(gridPlotWidth(769)).toBe(769 - 18 - 98); // two columns need 770
    expect(gridPlotWidth(770)).toBe(380 - 18 - 98);
    expect(gridPlotWidth(1200)).toBeCloseTo((1200 - 20) / 3 - 18 - 98, 6);
  });

  it('gridMaxPoints: the grid once it exists, else the window less the page padding', () => {
    expect(gridMaxPoints({ clientWidth: 380 }, 2000, 1)).toBe(2 * 264);
    expect(gridMaxPoints(null, 412, 2)).toBe(4 * 264);
  });
});
