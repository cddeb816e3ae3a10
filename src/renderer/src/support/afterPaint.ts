/**
 * Runs work once the frame the page is preparing has been painted: for what a view needs soon
 * but not in its first frame (a reopened dashboard's revalidating requests, its summary's series),
 * so that neither the work nor its answers share the main thread and the cores with the frame that
 * shows the charts. FRAMES animation frames, then a task (so that the last callback's frame is
 * not held up): the second callback comes at the next vsync, once the first frame was committed,
 * but on a slow machine its tiles may still be rastering then and the frame not yet on screen; a
 * third frame keeps the work off that raster (decision 077).
 * Where animation frames do not come the work does not wait for them: without
 * requestAnimationFrame (the renderer tests) it runs in the next task, and in a hidden page (no
 * frames) after FALLBACK_MS at most.
 * Returns a canceller (the view unmounts first).
 *
 * `firstFramePresented` is the exact form for work that waits on a view's first frame: on screen,
 * not merely committed (decision 078). Tested by test/renderer/afterPaint.test.ts.
 */

/** Animation frames the work waits for: the one that draws the view and two more (decision 077). */
const FRAMES = 3;

/** The longest the work waits when no frames come (ms). */
export const FALLBACK_MS = 250;

export function afterPaint(work: () => void): () => void {
  let done = false;
  let frame = 0;
  let task: ReturnType<typeof setTimeout> | undefined;
  const run = (): void => {
    if (done) return;
    done = true;
    cancel();
    work();
  };
  const frames = typeof requestAnimationFrame === 'function';
  const fallback = setTimeout(run, frames ? FALLBACK_MS : 0);
  if (frames) {
    let left = FRAMES;
    const tick = (): void => {
      frame = --left > 0 ? requestAnimationFrame(tick) : 0;
      if (!left) task = setTimeout(run);
    };
    frame = requestAnimationFrame(tick);
  }
  function cancel(): void {
    clearTimeout(fallback);
    clearTimeout(task);
    if (frame && typeof cancelAnimationFrame === 'function') cancelAnimationFrame(frame);
    frame = 0;
  }
  return () => {
    done = true;
    cancel();
  };
}

/** Element Timing's entry (only what firstFramePresented reads). */
interface ElementEntry {
  identifier: string;
}

let marks = 0;

/**
 * A view's first frame, as presented: `mark` goes into the `elementtiming` attribute of an element
 * with text that the view shows in its first frame (RunDashboard: its title), and `after(work)`
 * runs the work in a task once the browser reports that element's first paint (Element Timing:
 * the entry comes once the frame that painted it has been presented), or at once (next task) if
 * it has been already. The frames afterPaint counts are a guess at that moment: on these 2-core
 * machines the third one still came before the frame was on screen, and work run then shared the
 * cores with its compositing (decision 078). Where the browser has no Element Timing, `after` is
 * afterPaint; where the entry does not come (a hidden page) the work runs after FALLBACK_MS.
 * Returns the same canceller as afterPaint; `dispose()` stops listening (the view unmounts).
 */
export function firstFramePresented(): { mark: string; after: (work: () => void) => () => void; dispose: () => void } {
  const mark = `srpo-view-${++marks}`;
  const PO = (globalThis as { PerformanceObserver?: typeof PerformanceObserver }).PerformanceObserver;
  if (!PO?.supportedEntryTypes?.includes('element')) return { mark, after: afterPaint, dispose: () => undefined };
  let presented = false;
  const waiting = new Set<() => void>();
  const observer = new PO((list) => {
    if (presented || !list.getEntries().some((e) => (e as unknown as ElementEntry).identifier === mark)) return;
    presented = true;
    observer.disconnect();
    for (const w of [...waiting]) w();
  });
  // buffered: an entry reported before this observer existed still counts.
  observer.observe({ type: 'element', buffered: true });
  function after(work: () => void): () => void {
    let task: ReturnType<typeof setTimeout> | undefined;
    // Whichever comes first, the report or the fallback, cancels the other.
    const cancel = (): void => {
      waiting.delete(start);
      clearTimeout(fallback);
      clearTimeout(task);
    };
    const start = (): void => {
      cancel();
      task = setTimeout(work);
    };
    const fallback = setTimeout(() => (cancel(), work()), FALLBACK_MS);
    if (presented) start();
    else waiting.add(start);
    return cancel;
  }
  return { mark, after, dispose: () => observer.disconnect() };
}
