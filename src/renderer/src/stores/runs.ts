/**
 * The runs list (Pinia setup store): loaded from listRuns, kept fresh by pushes (status changes,
 * progress, created/deleted runs), and the run commands the views use. Shared by the Runs,
 * Compare and Reports views and the dashboard header.
 */
import { defineStore } from 'pinia';
import { computed, ref } from 'vue';
import type { RunSummary } from '../../../shared/api';
import { labClient } from '../api/client';
import { bestEvalAfter } from '../../../shared/analysis';
import { lastStepAfterPush } from '../../../shared/stepConvention';

export const useRunsStore = defineStore('runs', () => {
  const runs = ref<RunSummary[]>([]);
  const loaded = ref(false);
  const error = ref<string | null>(null);
  const api = labClient();
  let timer: ReturnType<typeof setTimeout> | null = null;

  async function refresh(): Promise<void> {
    try {
      runs.value = await api.listRuns({});
      error.value = null;
    } catch (e) {
      error.value = (e as Error).message;
    } finally {
      loaded.value = true;
    }
  }

  /** Coalesces bursts of pushes into one refresh. */
  function refreshSoon(): void {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      void refresh();
    }, 150);
  }

  // The store lives as long as the page: one subscription, never disposed.
  api.subscribe((p) => {
    if (p.type === 'runs' || p.type === 'status') refreshSoon();
    else if (p.type === 'progress') {
      const r = runs.value.find((x) => x.id === p.runId);
      if (r) {
        r.lastStep = lastStepAfterPush(p, r.lastStep);
        r.bestEval = bestEvalAfter(r.bestEval, p.step, p.metrics['eval/macro/avg']); // the list's rule (analysis.ts)
      }
    }
  });

  const byId = computed(() => new Map(runs.value.map((r) => [r.id, r])));

  async function remove(runId: number): Promise<void> {
    await api.deleteRun({ runId });
    await refresh();
  }
  async function resume(runId: number): Promise<void> {
    await api.resumeRun({ runId });
    await refresh();
  }
  async function pause(runId: number): Promise<void> {
    await api.pauseRun({ runId });
  }
  async function stop(runId: number): Promise<void> {
    await api.stopRun({ runId });
  }

  return { runs, loaded, error, byId, refresh, remove, resume, pause, stop };
});
