/**
 * A hand-driven frame source for tests of chart drawing (requestAnimationFrame /
 * cancelAnimationFrame stand-ins): `tick()` runs the callbacks queued for the next frame. Used by
 * test/shared/drawGate.test.ts and test/renderer (ChartPanel); type-checked by both tsconfigs.
 */
export function frames() {
  let queued = new Map<number, () => void>();
  let id = 0;
  return {
    next: (cb: () => void) => (queued.set(++id, cb), id),
    cancel: (n: number) => void queued.delete(n),
    tick() {
      const run = [...queued.values()];
      queued = new Map();
      for (const cb of run) cb();
    },
    get size() {
      return queued.size;
    },
  };
}
