/**
 * The full-detail points of zoomed chart windows: one metricSeries call per run for the lines of
 * that run (each line its own step range), min/max-downsampled by the store to the chart's width.
 * Used by composables/useChartZoom when the user zooms (debounced there). Not a cache: a zoom is a
 * user's gesture, and the store's series cache (MetricSeriesCache) makes the read cheap.
 */
import type { SeriesPoint } from '../../../shared/api';
import { labClient } from '../api/client';
import type { SeriesSource } from './chartLine';

export interface DetailRequest {
  source: SeriesSource;
  fromStep: number;
  toStep: number;
}

/**
 * Each request's points in [fromStep, toStep], at most maxPoints (null where the store has no
 * such series). Requests of one run and one range share a call.
 */
export async function fetchDetail(requests: readonly DetailRequest[], maxPoints: number): Promise<(SeriesPoint[] | null)[]> {
  const groups = new Map<string, { runId: number; fromStep: number; toStep: number; keys: string[] }>();
  for (const r of requests) {
    const id = `${r.source.runId}:${r.fromStep}:${r.toStep}`;
    const g = groups.get(id) ?? { runId: r.source.runId, fromStep: r.fromStep, toStep: r.toStep, keys: [] };
    if (!g.keys.includes(r.source.key)) g.keys.push(r.source.key);
    groups.set(id, g);
  }
  const answers = new Map<string, Record<string, SeriesPoint[]>>();
  await Promise.all(
    [...groups].map(async ([id, g]) => {
      const got: Record<string, SeriesPoint[]> = {};
      // The API takes at most 64 keys a call.
      for (let i = 0; i < g.keys.length; i += 64) {
        const keys = g.keys.slice(i, i + 64);
        Object.assign(got, await labClient().metricSeries({ runId: g.runId, keys, fromStep: g.fromStep, toStep: g.toStep, maxPoints }));
      }
      answers.set(id, got);
    }),
  );
  return requests.map((r) => answers.get(`${r.source.runId}:${r.fromStep}:${r.toStep}`)?.[r.source.key] ?? null);
}
