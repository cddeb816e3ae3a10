/**
 * The first draw of the curve panels that appear in one update (a dashboard or Compare opening):
 * their hosts are measured together, once the update's DOM is in the page (one layout for all of
 * them), and drawn in that same task, before the frame. Why not in each host's first
 * ResizeObserver notification, as later size changes are: a canvas drawn in a task is handed to
 * the compositor when the task ends and rasterised while the frame is being prepared, whereas a
 * canvas drawn in the frame's resize observations is rasterised inside the frame's commit, which
 * waits for every such canvas in turn. Measuring each host on its own would force one layout per
 * panel (every chart's canvas dirties the layout the next measurement reads).
 * No Vue, no ECharts: the page's DOM only. Tested by test/renderer/firstDraw.test.ts.
 */
import type { Size } from './chartPanelTypes';

/** Hosts waiting for the batch, with what each draws at its measured size. */
const queued = new Map<Element, (size: Size) => void>();

/**
 * The User Timing measure each batch leaves (DevTools' timeline; the ui bench splits an open into
 * the time before this batch, the batch, and the frame after it).
 */
export const FIRST_DRAW_MEASURE = 'srpo-lab:first-draw';

/** Measures every queued host (layout first, for all of them), then draws each connected one. */
function drawQueued(): void {
  const start = performance.now();
  const batch = [...queued];
  queued.clear();
  const sizes = batch.map(([host]) => host.getBoundingClientRect());
  batch.forEach(([host, draw], i) => {
    if (host.isConnected) draw({ width: Math.floor(sizes[i].width), height: Math.floor(sizes[i].height) });
  });
  performance.measure(FIRST_DRAW_MEASURE, { start, detail: { charts: batch.length } });
}

/**
 * Queues `host`'s first draw for the end of the current task's microtasks (after the update that
 * inserted it, together with the hosts it inserted too). Returns a canceller (the host is dropped
 * first). A host with no size yet (not displayed) is drawn by its ResizeObserver later; a size
 * its ResizeObserver then reports again changes nothing (ChartPanel.resize ignores an equal box).
 */
export function drawSoon(host: Element, draw: (size: Size) => void): () => void {
  if (!queued.size) queueMicrotask(drawQueued);
  queued.set(host, draw);
  return () => void queued.delete(host);
}
