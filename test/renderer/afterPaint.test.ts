// Work after the frame being drawn is painted (src/renderer/src/support/afterPaint.ts): three
// animation frames and then a task; nothing after a cancel; a timer where frames do not come (a
// hidden page), and the next task where the page has no requestAnimationFrame at all. Work after a
// view's first frame is presented (firstFramePresented): its mark's Element Timing entry, then a
// task; afterPaint's frames where the browser has no Element Timing.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { afterPaint, FALLBACK_MS, firstFramePresented } from '../../src/renderer/src/support/afterPaint';

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

/** `schedule` runs work that nothing else starts after FALLBACK_MS, and not before (fake timers). */
function expectFallback(schedule: (work: () => void) => unknown): void {
  const work = vi.fn();
  schedule(work);
  vi.advanceTimersByTime(FALLBACK_MS - 1);
  expect(work).not.toHaveBeenCalled();
  vi.advanceTimersByTime(1);
  expect(work).toHaveBeenCalledTimes(1);
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
    expectFallback(afterPaint); // no frame ever comes (a hidden page)
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

/** A hand-driven PerformanceObserver with Element Timing: `report(id)` delivers an element entry to the observers. */
function fakeElementTiming() {
  const observers = new Set<{ cb: (list: { getEntries(): unknown[] }) => void }>();
  class FakeObserver {
    static supportedEntryTypes = ['element'];
    constructor(readonly cb: (list: { getEntries(): unknown[] }) => void) {}
    observe(o: { type: string }) {
      expect(o.type).toBe('element');
      observers.add(this);
    }
    disconnect() {
      observers.delete(this);
    }
  }
  (globalThis as unknown as { PerformanceObserver: unknown }).PerformanceObserver = FakeObserver;
  return {
    report(identifier: string) {
      for (const o of [...observers]) o.cb({ getEntries: () => [{ identifier }] });
    },
    observing: () => observers.size,
  };
}

describe('firstFramePresented', () => {
  const realObserver = globalThis.PerformanceObserver;
  afterEach(() => {
    (globalThis as unknown as { PerformanceObserver: unknown }).PerformanceObserver = realObserver;
  });

  it("runs the work in a task once its own mark's paint is reported, not another's, and only once", () => {
    vi.useFakeTimers();
    const timing = fakeElementTiming();
    const frames = fakeFrames();
    const view = firstFramePresented();
    const other = firstFramePresented();
    expect(view.mark).not.toBe(other.mark);
    const work = vi.fn();
    view.after(work);
    for (let i = 0; i < 5; i++) frames.frame(); // frames alone do not run it
    vi.advanceTimersByTime(FALLBACK_MS - 1);
    timing.report(other.mark);
    vi.advanceTimersByTime(0);
    expect(work).not.toHaveBeenCalled();
    timing.report(view.mark);
    expect(work).not.toHaveBeenCalled(); // not inside the observer's callback
    vi.advanceTimersByTime(0);
    expect(work).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(FALLBACK_MS);
    expect(work).toHaveBeenCalledTimes(1);
    // Work asked for after the frame was presented runs in the next task.
    const late = vi.fn();
    view.after(late);
    expect(late).not.toHaveBeenCalled();
    vi.advanceTimersByTime(0);
    expect(late).toHaveBeenCalledTimes(1);
    other.dispose();
    expect(timing.observing()).toBe(0);
  });

  it('drops cancelled work, and falls back to a timer where the mark is never painted', () => {
    vi.useFakeTimers();
    const timing = fakeElementTiming();
    const first = firstFramePresented();
    const cancelled = vi.fn();
    const cancel = first.after(cancelled);
    cancel();
    timing.report(first.mark);
    vi.advanceTimersByTime(FALLBACK_MS);
    expect(cancelled).not.toHaveBeenCalled();
    expectFallback(firstFramePresented().after); // its mark is never painted (a hidden page)
  });

  it('waits for the frames afterPaint counts where the browser has no Element Timing', () => {
    vi.useFakeTimers();
    (globalThis as unknown as { PerformanceObserver: unknown }).PerformanceObserver = undefined;
    const frames = fakeFrames();
    const work = vi.fn();
    firstFramePresented().after(work);
    frames.frame();
    frames.frame();
    vi.advanceTimersByTime(0);
    expect(work).not.toHaveBeenCalled();
    frames.frame();
    vi.advanceTimersByTime(0);
    expect(work).toHaveBeenCalledTimes(1);
  });
});
