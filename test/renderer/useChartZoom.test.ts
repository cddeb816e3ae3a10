// The zoom detail's debounce and fetch (src/renderer/src/composables/useChartZoom.ts) over a real
// ChartPanel with a fake chart, under fake timers and inside a Vue effect scope.
import { effectScope } from 'vue';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SeriesPoint } from '../../src/shared/api';
import type { DetailWant } from '../../src/renderer/src/charts/chartPanelTypes';
import { useChartZoom, ZOOM_DEBOUNCE_MS } from '../../src/renderer/src/composables/useChartZoom';
import { points, setupPanel } from './chartFakes';

const source = { runId: 7, key: 'reward/mean' };
/** 9 points in steps 3..7: what the store answers for the zoomed window. */
const DETAIL = points(3, 7)
  .flatMap((p) => [p, { ...p, step: p.step + 0.5 }])
  .slice(0, 9);

/** A drawn panel (steps 0..10) whose zoom composable fetches through `fetch`; the fake plot shows x 3.5..6.5 once zoomed. */
function setup(fetch: (w: readonly DetailWant[], maxPoints: number) => Promise<(SeriesPoint[] | null)[]>) {
  const scope = effectScope();
  const calls: { wanted: readonly DetailWant[]; maxPoints: number }[] = [];
  const zoomRef: { gesture(full: boolean): void }[] = [];
  const t = setupPanel({ onZoom: (full) => zoomRef[0].gesture(full) });
  scope.run(() => {
    zoomRef.push(
      useChartZoom(
        t.panel,
        (w, m) => (calls.push({ wanted: w, maxPoints: m }), fetch(w, m)),
        () => 1,
      ),
    );
  });
  t.panel.setView({ lines: [{ name: 'a', points: points(0, 10), source }], smoothing: 0.6, xAxis: 'step', yScale: 'linear', theme: 'dark' });
  t.panel.setHost({});
  t.panel.resize({ width: 400, height: 200 });
  t.f.tick();
  const zoomTo = (start: number, end: number) => {
    t.chart().x0 = start / 10;
    t.chart().x1 = end / 10;
    t.chart().zoom(start, end);
  };
  return { ...t, scope, calls, zoomTo };
}

describe('useChartZoom', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('fetches the window once the gestures stop, and the panel draws the detail', async () => {
    const t = setup(async () => [DETAIL]);
    t.zoomTo(20, 50);
    await vi.advanceTimersByTimeAsync(ZOOM_DEBOUNCE_MS - 50);
    t.zoomTo(35, 65);
    await vi.advanceTimersByTimeAsync(ZOOM_DEBOUNCE_MS - 1);
    expect(t.calls).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.calls).toHaveLength(1);
    expect(t.calls[0].wanted).toEqual([{ line: 0, source, fromStep: 3, toStep: 7 }]);
    expect(t.calls[0].maxPoints).toBe(2 * (400 - 98));
    t.f.tick();
    expect(t.states[t.states.length - 1]).toEqual({ zoomed: true, zoomNote: 'steps 3–7: 9 pts' });
  });

  it('an answer that arrives after a newer gesture is dropped', async () => {
    let answer: (v: (SeriesPoint[] | null)[]) => void = () => undefined;
    const t = setup(() => new Promise((resolve) => (answer = resolve)));
    t.zoomTo(35, 65);
    await vi.advanceTimersByTimeAsync(ZOOM_DEBOUNCE_MS);
    expect(t.calls).toHaveLength(1);
    t.zoomTo(30, 60);
    answer([DETAIL]);
    await vi.advanceTimersByTimeAsync(0);
    t.f.tick();
    expect(t.states.some((s) => s.zoomNote)).toBe(false);
  });

  it('a failed fetch keeps the overview', async () => {
    const t = setup(async () => {
      throw new Error('gone');
    });
    t.zoomTo(35, 65);
    await vi.advanceTimersByTimeAsync(ZOOM_DEBOUNCE_MS);
    expect(t.calls).toHaveLength(1);
    expect(t.panel.heldLines()[0].points).toHaveLength(11);
    expect(t.panel.zoomed).toBe(true);
  });

  it('back to the whole run: the details are dropped without a fetch', async () => {
    const t = setup(async () => [DETAIL]);
    t.zoomTo(35, 65);
    await vi.advanceTimersByTimeAsync(ZOOM_DEBOUNCE_MS);
    t.f.tick();
    expect(t.panel.heldLines()[0].points).toHaveLength(15);
    t.zoomTo(0, 100);
    await vi.advanceTimersByTimeAsync(ZOOM_DEBOUNCE_MS);
    t.f.tick();
    expect(t.calls).toHaveLength(1);
    expect(t.panel.heldLines()[0].points).toHaveLength(11);
    expect(t.states[t.states.length - 1]).toEqual({ zoomed: false, zoomNote: null });
  });

  it('the scope ending clears a pending fetch', async () => {
    const t = setup(async () => [DETAIL]);
    t.zoomTo(35, 65);
    t.scope.stop();
    await vi.advanceTimersByTimeAsync(ZOOM_DEBOUNCE_MS * 2);
    expect(t.calls).toHaveLength(0);
  });
});
