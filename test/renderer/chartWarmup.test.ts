// The idle-time chart warm-up (src/renderer/src/charts/chartWarmup.ts): what it draws through a
// panel (a full option, then one appended point, then dispose), when it runs (the first idle
// moment, once) and when it does not (a real panel came first).
import { describe, expect, it } from 'vitest';
import { chartWarmup, warmUpPanel, WARMUP_POINTS, WARMUP_ROUNDS } from '../../src/renderer/src/charts/chartWarmup';
import type { Size } from '../../src/renderer/src/charts/chartPanelTypes';
import { FakeChart } from './chartFakes';

/** Warm-up hooks over fake charts and a hand-driven idle queue. */
function hooks() {
  const charts: FakeChart[] = [];
  const idle = new Map<number, () => void>();
  let next = 1;
  const ran = { count: 0 };
  return {
    charts,
    idle,
    ran,
    runIdle: () => {
      const work = [...idle.values()];
      idle.clear();
      work.forEach((w) => w());
    },
    hooks: {
      idle: (work: () => void) => (idle.set(next, work), next++),
      cancelIdle: (id: number) => void idle.delete(id),
      createHost: () => ({}),
      createChart: (host: unknown, size: Size) => {
        const c = new FakeChart(host, size);
        charts.push(c);
        return c;
      },
      ran: () => void ran.count++,
    },
  };
}

describe('chart warm-up', () => {
  it('draws one panel in full, then appends one point by merging only its data, then disposes it', () => {
    const t = hooks();
    warmUpPanel({}, t.hooks.createChart);
    expect(t.charts).toHaveLength(1);
    const c = t.charts[0];
    expect(c.calls).toHaveLength(2);
    expect(c.calls[0].notMerge).toBe(true); // the full option
    const rows = (call: (typeof c.calls)[number]) => (call.option.series as { id: string; data: Float64Array }[]).map((s) => [s.id, s.data.length / 3]);
    expect(rows(c.calls[0])).toEqual([
      ['r0', WARMUP_POINTS],
      ['e0', WARMUP_POINTS],
    ]);
    // The live point: a merge of the line's raw and EMA data, one row longer, no rebuild.
    expect(c.calls[1].notMerge).toBe(false);
    expect(rows(c.calls[1])).toEqual([
      ['r0', WARMUP_POINTS + 1],
      ['e0', WARMUP_POINTS + 1],
    ]);
    expect(c.disposed).toBe(true);
  });

  it('runs in the first idle moment, once', () => {
    const t = hooks();
    const w = chartWarmup(t.hooks);
    w.schedule();
    w.schedule();
    expect(t.idle.size).toBe(1);
    expect(t.charts).toHaveLength(0);
    expect(t.ran.count).toBe(0);
    t.runIdle();
    expect(t.charts).toHaveLength(WARMUP_ROUNDS);
    expect(t.charts.every((c) => c.disposed)).toBe(true);
    expect(t.ran.count).toBe(1); // the page marks it (bench ui reads the mark)
    w.schedule();
    expect(t.idle.size).toBe(0);
  });

  it('is dropped when a real panel comes first, and never scheduled after one', () => {
    const t = hooks();
    const w = chartWarmup(t.hooks);
    w.schedule();
    w.skip();
    expect(t.idle.size).toBe(0);
    t.runIdle();
    expect(t.charts).toHaveLength(0);
    const u = hooks();
    const v = chartWarmup(u.hooks);
    v.skip();
    v.schedule();
    expect(u.idle.size).toBe(0);
  });
});
