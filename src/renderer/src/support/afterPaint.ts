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
 * Returns a canceller (the view unmounts first). Tested by test/renderer/afterPaint.test.ts.
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
