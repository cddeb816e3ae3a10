/**
 * Experiment suites (Pinia setup store): the list (listSuites), the open suite with its cells and
 * tables (getSuite), and the suite commands the Suites view uses (create from presets x seeds,
 * start/resume, change the baseline). Refreshed by the view on run pushes (useSuitePushes there).
 */
import { defineStore } from 'pinia';
import { ref } from 'vue';
import type { SuiteDetail, SuiteSummary } from '../../../shared/api';
import { labClient } from '../api/client';

export const useSuitesStore = defineStore('suites', () => {
  const suites = ref<SuiteSummary[]>([]);
  const current = ref<SuiteDetail | null>(null);
  const error = ref<string | null>(null);
  const api = labClient();

  async function run<T>(what: () => Promise<T>): Promise<T | undefined> {
    try {
      const out = await what();
      error.value = null;
      return out;
    } catch (e) {
      error.value = (e as Error).message;
      return undefined;
    }
  }

  async function refresh(): Promise<void> {
    const list = await run(() => api.listSuites({}));
    if (list) suites.value = list;
  }

  async function open(suiteId: number, baseline?: string): Promise<void> {
    const d = await run(() => api.getSuite({ suiteId, ...(baseline ? { baseline } : {}) }));
    if (d) current.value = d;
  }

  /** Creates a suite of presets x seeds; returns its id. */
  async function create(spec: { name: string; presets: string[]; seeds: number[]; baseline: string | null; start: boolean }): Promise<number | undefined> {
    const out = await run(() =>
      api.createSuite({
        spec: { name: spec.name, seeds: spec.seeds, rows: spec.presets.map((preset) => ({ preset })), baseline: spec.baseline },
        start: spec.start,
      }),
    );
    await refresh();
    return out?.suiteId;
  }

  async function start(suiteId: number): Promise<void> {
    await run(() => api.startSuite({ suiteId }));
    await open(suiteId, current.value?.baseline);
    await refresh();
  }

  return { suites, current, error, refresh, open, create, start };
});
