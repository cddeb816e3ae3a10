/**
 * When a chart panel draws (the renderer's components/RunDashboardChart.vue): a change is drawn
 * at once, in the task that brought it (a live point reaches the screen in the next frame,
 * instead of waiting one frame for a requestAnimationFrame callback and being painted in the
 * frame after), and then at most once more per frame: changes that arrive before the next frame
 * are drawn together in it. No Vue, no chart, no DOM: `draw` and the frame source
 * (requestAnimationFrame and cancelAnimationFrame in the page) are given.
 * Tested by test/shared/drawGate.test.ts.
 */
export interface DrawGate {
  /** Asks for a draw: now if no draw happened since the last frame, else once in the next frame. */
  request(): void;
  /** Drops a pending draw (the panel unmounts). */
  cancel(): void;
}

export function drawGate(draw: () => void, nextFrame: (cb: () => void) => number, cancelFrame: (id: number) => void): DrawGate {
  /** The frame that ends the current window (0: none open, the next request draws at once). */
  let frame = 0;
  /** A request came in after this window's draw: drawn when the window ends. */
  let pending = false;

  const closeWindow = (): void => {
    frame = 0;
    if (!pending) return;
    pending = false;
    request();
  };

  function request(): void {
    if (frame) {
      pending = true;
      return;
    }
    // Open the window first: a draw that requests another (it should not) waits for the frame.
    frame = nextFrame(closeWindow);
    draw();
  }

  return {
    request,
    cancel() {
      if (frame) cancelFrame(frame);
      frame = 0;
      pending = false;
    },
  };
}
