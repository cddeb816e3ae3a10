// The dashboard's series (src/renderer/src/composables/useRunSeries.ts): a reopened run draws its
// last-shown series at once and fetches them again, replacing only what changed
// (stale-while-revalidate); another chart width, or a first open, waits for the fetch.
import { effectScope, ref } from 'vue';
import { describe, expect, it, vi } from 'vitest';
import type { SeriesMap, SeriesPoint } from '../../src/shared/api';

const server: { data: SeriesMap; calls: string[][] } = { data: {}, calls: [] };

vi.mock('../../src/renderer/src/api/client', () => ({
  labClient: () => ({
    metricSeries: async ({ keys }: { keys: string[] }) => {
      server.calls.push(keys);
      return Object.fromEntries(keys.map((k) => [k, server.data[k] ?? []]));
    },
    subscribe: () => () => undefined,
  }),
}));

const { remembersSeries, useRunSeries } = await import('../../src/renderer/src/composables/useRunSeries');

const pts = (...values: number[]): SeriesPoint[] => values.map((value, step) => ({ step, value, wallTime: 1000 + step }));
const settle = () => new Promise((r) => setTimeout(r, 0));

function open(runId: number, maxPoints = 100, revalidateAfter?: (work: () => void) => () => void) {
  const scope = effectScope();
  const out = scope.run(() => useRunSeries(ref(runId), ref(['a', 'b']), () => maxPoints, revalidateAfter))!;
  return { series: out.series, close: () => scope.stop() };
}

describe('useRunSeries: reopening a run', () => {
  it('draws the last-shown series at once, then keeps the arrays the fetch confirms and replaces the one that changed', async () => {
    server.data = { a: pts(1, 2, 3), b: pts(4, 5) };
    const first = open(11);
    expect(first.series.value).toEqual({}); // a first open waits for the fetch
    await settle();
    const shownA = first.series.value.a;
    expect(shownA).toEqual(pts(1, 2, 3));
    first.close();

    server.data = { a: pts(1, 2, 3), b: pts(4, 5, 6) }; // b grew while the dashboard was closed
    server.calls = [];
    const again = open(11);
    expect(again.series.value.a).toBe(shownA); // drawn before any answer
    expect(again.series.value.b).toEqual(pts(4, 5));
    await settle();
    expect(server.calls.flat().sort()).toEqual(['a', 'b']); // both fetched again
    expect(again.series.value.a).toBe(shownA); // unchanged: the same array, no redraw
    expect(again.series.value.b).toEqual(pts(4, 5, 6));
    again.close();
  });

  it('fetches a reopened run again only once the frame drawing it is painted, and not after it closed', async () => {
    server.data = { a: pts(1, 2), b: pts(3) };
    expect(remembersSeries(13, 100)).toBe(false); // a first open: nothing drawn before
    const first = open(13);
    await settle();
    first.close();
    server.calls = [];
    // A hand-driven "after paint": the test says when the drawing frame is on screen.
    const painted: (() => void)[] = [];
    const later = (work: () => void) => (painted.push(work), () => painted.splice(painted.indexOf(work), 1));
    expect(remembersSeries(13, 100)).toBe(true); // what the dashboard asks before its first requests
    expect(remembersSeries(13, 200)).toBe(false);
    const again = open(13, 100, later);
    expect(remembersSeries(13, 100)).toBe(true); // still the series this open started from
    expect(again.series.value.a).toEqual(pts(1, 2)); // drawn from the last open
    await settle();
    expect(server.calls).toEqual([]); // nothing asked while the frame is drawn
    painted.splice(0).forEach((w) => w());
    await settle();
    expect(server.calls.flat().sort()).toEqual(['a', 'b']);
    again.close();
    // Closed before its frame was painted: the revalidation is dropped.
    server.calls = [];
    const closed = open(13, 100, later);
    closed.close();
    expect(painted).toEqual([]);
    await settle();
    expect(server.calls).toEqual([]);
  });

  it('at another chart width (maxPoints) it does not reuse the last series', async () => {
    server.data = { a: pts(7), b: pts(8) };
    const first = open(12, 100);
    await settle();
    first.close();
    const wider = open(12, 200);
    expect(wider.series.value).toEqual({});
    await settle();
    expect(wider.series.value.a).toEqual(pts(7));
    wider.close();
  });
});
