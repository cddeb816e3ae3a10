/**
 * The metric series a view draws for one run: fetched min/max-downsampled from the store
 * (metricSeries, spikes kept) and then grown live from the run's `points` pushes, until the
 * component unmounts. Series objects are replaced (not mutated) on each update so charts redraw;
 * a key without a new point keeps its array, and a grown array keeps the old points (the same
 * objects) in front: RunDashboard and RunDashboardChart rely on both to skip unchanged panels and
 * to append live points instead of redrawing.
 */
import { shallowRef, watch, type Ref } from 'vue';
import type { SeriesMap } from '../../../shared/api';
import { labClient } from '../api/client';
import { usePushes } from './usePushes';

export const MAX_POINTS = 1000;

export function useRunSeries(runId: Ref<number>, keys: Ref<string[]>) {
  const series = shallowRef<SeriesMap>({});
  const error = shallowRef<string | null>(null);

  async function load() {
    const want = keys.value.filter((k) => !(k in series.value));
    if (!want.length) return;
    try {
      const got: SeriesMap = {};
      for (let i = 0; i < want.length; i += 64) Object.assign(got, await labClient().metricSeries({ runId: runId.value, keys: want.slice(i, i + 64), maxPoints: MAX_POINTS }));
      series.value = { ...series.value, ...got };
    } catch (e) {
      error.value = (e as Error).message;
    }
  }

  watch([runId, keys], ([id], [oldId]) => {
    if (id !== oldId) series.value = {};
    void load();
  }, { immediate: true });

  usePushes((p) => {
    if (p.type !== 'points') return;
    const next: SeriesMap = { ...series.value };
    let changed = false;
    for (const k of keys.value) {
      const pt = p.points[k];
      if (!pt) continue;
      const prev = next[k] ?? [];
      // A resumed run redoes steps: drop points at or after the new one.
      const kept = prev.length && prev[prev.length - 1].step >= pt.step ? prev.filter((x) => x.step < pt.step) : prev;
      next[k] = [...kept, pt];
      changed = true;
    }
    if (changed) series.value = next;
  }, () => runId.value);

  return { series, error, reload: () => ((series.value = {}), load()) };
}
