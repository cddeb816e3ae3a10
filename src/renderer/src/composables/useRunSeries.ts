/**
 * The metric series a view draws for one run: fetched min/max-downsampled from the store
 * (metricSeries, at most `maxPoints()` points: about one min/max pair per pixel column of the
 * chart, spikes kept) and then grown live from the run's `points` pushes, until the component
 * unmounts. A push never triggers a fetch. A series that live points grew past twice maxPoints is
 * compacted again in memory by the same min/max rule (shared/seriesWindow), so a long live run
 * does not grow the charts' work without bound.
 *
 * Series objects are replaced (not mutated) on each update so charts redraw; a key without a new
 * point keeps its array, and a grown array keeps the old points (the same objects) in front:
 * RunDashboard and the panels (charts/chartPanel) rely on both to skip unchanged panels and to append live
 * points instead of redrawing. The map lives in a shallowRef (never deep-reactive: thousands of
 * point objects would each get a proxy).
 *
 * A reopened dashboard draws at once: the series a run's dashboard last showed are kept (a few
 * runs, at the maxPoints they were fetched at) and seed the next open, which fetches them again
 * once the frame that draws them has been painted (`revalidateAfter`: support/afterPaint, and in
 * RunDashboard its first frame as presented; the request and its answer do not share that frame's
 * main thread nor its compositing) and replaces only the series that changed meanwhile
 * (stale-while-revalidate; a completed run's charts are then drawn once). A first open, or one at
 * another chart width, fetches at once. `remembersSeries` says beforehand which an open will be.
 *
 * useRunsSeries is the same for several runs at once (CompareView), over keys that can grow.
 */
import { onScopeDispose, shallowRef, watch, type Ref } from 'vue';
import type { LabPush, SeriesMap, SeriesPoint } from '../../../shared/api';
import { appendLivePoint, compactSeries } from '../../../shared/seriesWindow';
import { labClient } from '../api/client';
import { afterPaint } from '../support/afterPaint';
import { usePushes } from './usePushes';

/** The default request size where a view has no chart width to go by. */
export const MAX_POINTS = 1000;
/** Keys per metricSeries call (the API's limit). */
const KEYS_PER_CALL = 64;

/** The series each run's dashboard last drew, by run id, most recent last (LAST_DRAWN_RUNS at most). */
const lastDrawn = new Map<number, { maxPoints: number; series: SeriesMap }>();
const LAST_DRAWN_RUNS = 8;

/** Whether an open of `runId` at `maxPoints` would start from the series its dashboard last drew (useRunSeries `reopened`). */
export function remembersSeries(runId: number, maxPoints: number): boolean {
  return lastDrawn.get(runId)?.maxPoints === maxPoints;
}

function remember(runId: number, maxPoints: number, series: SeriesMap): void {
  lastDrawn.delete(runId);
  lastDrawn.set(runId, { maxPoints, series });
  if (lastDrawn.size > LAST_DRAWN_RUNS) lastDrawn.delete(lastDrawn.keys().next().value!);
}

/** Same points (step, value, wall time) in the same order. */
function samePoints(a: readonly SeriesPoint[], b: readonly SeriesPoint[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i].step !== b[i].step || a[i].value !== b[i].value || a[i].wallTime !== b[i].wallTime) return false;
  return true;
}

/** One run's series: the fetched overview plus live points. */
function runSeries(runId: () => number, keys: () => string[], maxPoints: () => number, changed: () => void = () => undefined) {
  const series = shallowRef<SeriesMap>({});
  const error = shallowRef<string | null>(null);
  /** Keys requested and not yet answered (so a second call while one is in flight asks for nothing twice). */
  const pending = new Set<string>();
  /** Keys drawn from the last open's series and not yet fetched again. */
  const stale = new Set<string>();
  let generation = 0;
  /** maxPoints of the last fetch: the compaction target (read once, not per push: it measures the layout). */
  let target = 0;

  async function load() {
    const want = keys().filter((k) => (!(k in series.value) || stale.has(k)) && !pending.has(k));
    if (!want.length) return;
    const gen = generation;
    const id = runId();
    for (const k of want) pending.add(k);
    target = maxPoints();
    try {
      const calls = [];
      for (let i = 0; i < want.length; i += KEYS_PER_CALL) {
        calls.push(labClient().metricSeries({ runId: id, keys: want.slice(i, i + KEYS_PER_CALL), maxPoints: target }));
      }
      const got = Object.assign({}, ...(await Promise.all(calls))) as SeriesMap;
      if (gen !== generation) return;
      // Live points that arrived while the fetch was in flight are already in the store's answer,
      // or come after it: keep those the answer does not have.
      const next: SeriesMap = { ...series.value };
      let any = false;
      for (const [k, pts] of Object.entries(got)) {
        const live = next[k] ?? [];
        const last = pts.length ? pts[pts.length - 1].step : -1;
        const merged = live.length ? [...pts, ...live.filter((p) => p.step > last)] : pts;
        // A series drawn from the last open that has not changed keeps its array (no redraw).
        if (stale.delete(k) && live.length && samePoints(merged, live)) continue;
        next[k] = merged;
        any = true;
      }
      if (!any) return;
      series.value = next;
      changed();
    } catch (e) {
      if (gen === generation) {
        error.value = (e as Error).message;
        changed();
      }
    } finally {
      if (gen === generation) for (const k of want) pending.delete(k);
    }
  }

  /** Draws a run's last-shown series at once; `load` fetches them again (stale-while-revalidate). */
  function seed(from: SeriesMap) {
    series.value = { ...from };
    for (const k of Object.keys(from)) stale.add(k);
    changed();
  }

  function reset() {
    generation++;
    pending.clear();
    stale.clear();
    series.value = {};
    error.value = null;
    changed();
  }

  function onPoints(p: Extract<LabPush, { type: 'points' }>) {
    let next: SeriesMap | null = null;
    target ||= maxPoints();
    for (const k of keys()) {
      const pt = p.points[k];
      if (!pt) continue;
      next ??= { ...series.value };
      let pts = appendLivePoint(next[k] ?? [], pt);
      if (pts.length > 2 * target) pts = compactSeries(pts, target) as typeof pts;
      next[k] = pts;
    }
    if (next) {
      series.value = next;
      changed();
    }
  }

  return { series, error, load, reset, seed, onPoints, target: () => target };
}

/**
 * `revalidateAfter` schedules a reopened dashboard's fetch (default: after the frame that draws
 * it is painted) and returns a canceller; tests pass a hand-driven one.
 */
export function useRunSeries(
  runId: Ref<number>,
  keys: Ref<string[]>,
  maxPoints: () => number = () => MAX_POINTS,
  revalidateAfter: (work: () => void) => () => void = afterPaint,
) {
  const one = runSeries(
    () => runId.value,
    () => keys.value,
    maxPoints,
  );
  let cancelRevalidate = (): void => undefined;

  watch(
    [runId, keys],
    ([id], [oldId]) => {
      if (id !== oldId) {
        cancelRevalidate();
        one.reset();
        if (remembersSeries(id, maxPoints())) {
          one.seed(lastDrawn.get(id)!.series);
          cancelRevalidate = revalidateAfter(() => void one.load());
          return;
        }
      }
      void one.load();
    },
    { immediate: true },
  );
  onScopeDispose(() => cancelRevalidate());
  watch(one.series, (s) => {
    if (one.target() > 0 && Object.keys(s).length) remember(runId.value, one.target(), s);
  });

  usePushes(
    (p) => {
      if (p.type === 'points') one.onPoints(p);
    },
    () => runId.value,
  );

  return { series: one.series, error: one.error, reload: () => (one.reset(), one.load()) };
}

/**
 * Several runs' series (Compare): `series.value[runId][key]`, each run fetched once and grown
 * live from its own pushes (runs that are training update their curves as they go).
 */
export function useRunsSeries(runIds: Ref<number[]>, keys: Ref<string[]>, maxPoints: () => number = () => MAX_POINTS) {
  const series = shallowRef<Record<number, SeriesMap>>({});
  const error = shallowRef<string | null>(null);
  const byRun = new Map<number, ReturnType<typeof runSeries>>();

  function sync() {
    const ids = new Set(runIds.value);
    for (const id of [...byRun.keys()]) if (!ids.has(id)) byRun.delete(id);
    for (const id of ids) {
      if (byRun.has(id)) continue;
      const one = runSeries(
        () => id,
        () => keys.value,
        maxPoints,
        () => byRun.get(id) === one && publish(),
      );
      byRun.set(id, one);
      void one.load();
    }
    publish();
  }

  function publish() {
    series.value = Object.fromEntries([...byRun].map(([id, one]) => [id, one.series.value]));
    error.value = [...byRun.values()].map((one) => one.error.value).find((e) => e) ?? null;
  }

  watch(runIds, sync, { immediate: true });
  // A panel added: each run fetches the keys it does not have yet.
  watch(keys, () => {
    for (const one of byRun.values()) void one.load();
  });

  usePushes((p) => {
    if (p.type === 'points') byRun.get(p.runId)?.onPoints(p);
  });

  return {
    series,
    error,
    reload: () => Promise.all([...byRun.values()].map((one) => (one.reset(), one.load()))),
  };
}
