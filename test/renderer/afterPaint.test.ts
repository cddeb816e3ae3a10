// Work after the frame being drawn is painted (src/renderer/src/support/afterPaint.ts): three
// animation frames and then a task; nothing after a cancel; a timer where frames do not come (a
// hidden page), and the next task where the page has no requestAnimationFrame at all.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { afterPaint, FALLBACK_MS } from '../../src/renderer/src/support/afterPaint';

/** A hand-driven requestAnimationFrame: `frame()` runs the callbacks queued before it. */
function fakeFrames() {
  let queued: { id: number; cb: () => void }[] = [];
  let next = 1;
  const g = globalThis as unknown as { requestAnimationFrame?: unknown; cancelAnimationFrame?: unknown };
  g.requestAnimationFrame = (cb: () => void) => (queued.push({ id: next, cb }), next++);
  g.cancelAnimationFrame = (id: number) => (queued = queued.filter((q) => q.id !== id));
  return {
    frame() {
      const now = queued;
      queued = [];
      for (const q of now) q.cb();
    },
  };
}

afterEach(() => {
  const g = globalThis as unknown as { requestAnimationFrame?: unknown; cancelAnimationFrame?: unknown };
  delete g.requestAnimationFrame;
  delete g.cancelAnimationFrame;
  vi.useRealTimers();
});

describe('afterPaint', () => {
  it('runs the work in a task after the third animation frame, once', () => {
    vi.useFakeTimers();
    const frames = fakeFrames();
    const work = vi.fn();
    afterPaint(work);
    vi.advanceTimersByTime(0);
    frames.frame(); // the frame that draws the view
    vi.advanceTimersByTime(0);
    expect(work).not.toHaveBeenCalled();
    frames.frame(); // the next one: the first has been committed
    vi.advanceTimersByTime(0);
    expect(work).not.toHaveBeenCalled();
    frames.frame(); // one more: the first is no longer rastering
    expect(work).not.toHaveBeenCalled(); // not inside the frame's callback
    vi.advanceTimersByTime(0);
    expect(work).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(FALLBACK_MS);
    expect(work).toHaveBeenCalledTimes(1);
  });

  it('drops the work when cancelled, and falls back to a timer when no frames come', () => {
    vi.useFakeTimers();
    const frames = fakeFrames();
    const dropped = vi.fn();
    const cancel = afterPaint(dropped);
    frames.frame();
    cancel();
    frames.frame();
    vi.advanceTimersByTime(FALLBACK_MS);
    expect(dropped).not.toHaveBeenCalled();
    const hidden = vi.fn();
    afterPaint(hidden); // no frame ever comes (a hidden page)
    vi.advanceTimersByTime(FALLBACK_MS - 1);
    expect(hidden).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(hidden).toHaveBeenCalledTimes(1);
  });

  it('runs in the next task where the page has no requestAnimationFrame', () => {
    vi.useFakeTimers();
    const work = vi.fn();
    afterPaint(work);
    expect(work).not.toHaveBeenCalled();
    vi.advanceTimersByTime(0);
    expect(work).toHaveBeenCalledTimes(1);
  });
});
