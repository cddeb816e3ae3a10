/**
 * The curve panels' code warmed while the page is idle: once per page, a ChartPanel over a
 * detached element is drawn (the full option) and given one live point (the append path), then
 * disposed, WARMUP_ROUNDS times. Why: the first panels a page draws otherwise pay for V8
 * compiling and tiering up ECharts' and the panel's code, and for the canvas's first text
 * measurements (docs/decisions/063-chart-warmup.md; `npm run bench -- ui`, first_open_ms). Done
 * while the runs list is shown, nobody waits for it. When a real panel comes first (`skip`,
 * called by components/RunDashboardChart.vue) the warm-up is dropped: that panel does the same
 * work itself.
 * Not here: anything a user sees (the element is never in the document), the store, the API.
 * Tested by test/renderer/chartWarmup.test.ts (a fake chart and a hand-driven idle clock).
 */
import type { SeriesPoint } from '../../../shared/api';
import { ChartPanel } from './chartPanel';
import type { PanelChart, Size } from './chartPanelTypes';

/** Points in the warm-up line: enough for the hot loops (packing, EMA, ECharts' data and path) to tier up. */
export const WARMUP_POINTS = 700;
const WARMUP_SIZE: Size = { width: 400, height: 200 };
/**
 * Panels drawn one after another: V8 tiers a function up further the more it has run, and a
 * dashboard draws five. The first open's main-thread CPU in bench `ui` (load ~12): ~160 ms
 * without a warm-up, ~95 after one round, ~85 after four (a warm open: ~60).
 */
export const WARMUP_ROUNDS = 4;

/** The page's side of the warm-up: an idle-time scheduler, a detached host, the chart factory. */
export interface WarmupHooks<Host> {
  /** requestIdleCallback in the page; returns an id for cancelIdle. */
  idle(work: () => void): number;
  cancelIdle(id: number): void;
  createHost(): Host;
  createChart(host: Host, size: Size): PanelChart;
  /** After the warm-up ran (the page marks it for bench `ui`, which says whether its first open came after it). */
  ran?(): void;
}

/** A made-up curve (a slow wave with a ripple), nothing from a run. */
function warmupPoints(n: number): SeriesPoint[] {
  return Array.from({ length: n }, (_, i) => ({ step: i, value: Math.sin(i / 40) + 0.1 * Math.sin(i * 7.3), wallTime: i * 1000 }));
}

/** Draws one panel and appends one point to it, as a dashboard would, then disposes it. */
export function warmUpPanel<Host>(host: Host, createChart: (host: Host, size: Size) => PanelChart): void {
  // A hand-driven frame clock: the window the first draw opens is closed at once, so the live
  // point below is drawn now, by the append path.
  let frame: (() => void) | null = null;
  const panel = new ChartPanel<Host>({ createChart, frames: { next: (cb) => ((frame = cb), 1), cancel: () => (frame = null) } });
  const points = warmupPoints(WARMUP_POINTS);
  const view = { smoothing: 0.6, xAxis: 'step' as const, yScale: 'linear' as const, theme: 'dark' as const };
  panel.setHost(host);
  panel.resize(WARMUP_SIZE);
  panel.setView({ ...view, lines: [{ name: 'warm-up', points }] });
  const closeWindow = frame as (() => void) | null; // set by the draw above (TypeScript cannot see that)
  closeWindow?.();
  panel.setView({ ...view, lines: [{ name: 'warm-up', points: [...points, { step: WARMUP_POINTS, value: 0.5, wallTime: WARMUP_POINTS * 1000 }] }] });
  panel.dispose();
}

/** Schedules the warm-up for the page's first idle moment (once); `skip` drops it if it has not run. */
export function chartWarmup<Host>(hooks: WarmupHooks<Host>): { schedule(): void; skip(): void } {
  let state: 'idle' | 'scheduled' | 'over' = 'idle';
  let id = 0;
  return {
    schedule() {
      if (state !== 'idle') return;
      state = 'scheduled';
      id = hooks.idle(() => {
        if (state !== 'scheduled') return;
        state = 'over';
        try {
          for (let i = 0; i < WARMUP_ROUNDS; i++) warmUpPanel(hooks.createHost(), hooks.createChart);
          hooks.ran?.();
        } catch {
          // Only a warm-up: a failure here changes nothing the user sees.
        }
      });
    },
    skip() {
      if (state === 'scheduled') hooks.cancelIdle(id);
      state = 'over';
    },
  };
}
