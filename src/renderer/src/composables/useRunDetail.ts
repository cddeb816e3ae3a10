/**
 * One run's detail (getRun: summary, frozen config, checkpoints) and metric keys (metricKeys) for
 * the dashboard: both read when it opens (`read`), read again on request (pushes say when), one request of
 * each kind at a time (a request while one is out asks for one more after it).
 *
 * An answer equal to what is shown is dropped: the refs keep their values, so nothing that reads
 * them (the panels, the header, the series' key list) is recomputed or re-rendered. A live run's
 * progress pushes ask for the detail again until its backend is known, and most answers are the
 * same as the last.
 *
 * A reopened dashboard starts from the detail and keys it last had for that run (a few runs are
 * remembered, as useRunSeries remembers their series) and reads both again: its panels come out
 * as the fresh answers will have them, instead of being laid out once without the run's config
 * (evaluation settings, workflow) and again when it arrives.
 *
 * Not here: what the dashboard draws from them (views/RunDashboard.vue). Tested by
 * test/renderer/useRunDetail.test.ts (a fake client).
 */
import { onScopeDispose, shallowRef } from 'vue';
import type { RunDetail, RunSummary } from '../../../shared/api';
import { labClient } from '../api/client';

/** The last detail and keys each run's dashboard had, by run id, most recent last (REMEMBERED_RUNS at most). */
const remembered = new Map<number, { detail: RunDetail | null; keys: string[] }>();
const REMEMBERED_RUNS = 8;

function remember(runId: number, detail: RunDetail | null, keys: string[]): void {
  remembered.delete(runId);
  remembered.set(runId, { detail, keys });
  if (remembered.size > REMEMBERED_RUNS) remembered.delete(remembered.keys().next().value!);
}

/** One request of a kind at a time: a call while one is out runs once more after it ends. */
function oneAtATime(read: () => Promise<void>): () => void {
  let inFlight = false;
  let again = false;
  const run = (): void => {
    if (inFlight) {
      again = true;
      return;
    }
    inFlight = true;
    void read()
      .catch(() => undefined)
      .finally(() => {
        inFlight = false;
        if (!again) return;
        again = false;
        run();
      });
  };
  return run;
}

/** The longest a read asked for "when idle" waits (ms). */
export const IDLE_WAIT_MS = 500;
// requestIdleCallback where the page has it (Chromium, Electron), else a plain timer.
const whenIdle = (work: () => void): number =>
  typeof requestIdleCallback === 'function' ? requestIdleCallback(work, { timeout: IDLE_WAIT_MS }) : Number(setTimeout(work, 0));
const cancelIdle = (id: number): void => (typeof cancelIdleCallback === 'function' ? cancelIdleCallback(id) : clearTimeout(id));

const sameKeys = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((k, i) => k === b[i]);

export function useRunDetail(runId: number) {
  const last = remembered.get(runId);
  const detail = shallowRef<RunDetail | null>(last?.detail ?? null);
  const keys = shallowRef<string[]>(last?.keys ?? []);
  /** The first read's failure (what the dashboard shows); later reads fail quietly, as before. */
  const error = shallowRef<string | null>(null);
  /** detail.value as JSON (what a new answer is compared with). */
  let shownJson = last?.detail ? JSON.stringify(last.detail) : '';
  const api = labClient();

  const refreshDetail = oneAtATime(() => api.getRun({ runId }).then(setDetail));
  let idleId: number | null = null;
  onScopeDispose(() => {
    if (idleId !== null) cancelIdle(idleId);
    idleId = null;
  });

  function refreshDetailWhenIdle(): void {
    if (idleId !== null) return;
    idleId = whenIdle(() => {
      idleId = null;
      refreshDetail();
    });
  }

  function setDetail(d: RunDetail): void {
    const json = JSON.stringify(d);
    if (json !== shownJson) {
      shownJson = json;
      detail.value = d;
    }
    remember(runId, detail.value, keys.value);
  }
  function setKeys(k: string[]): void {
    if (!sameKeys(k, keys.value)) keys.value = k;
    remember(runId, detail.value, keys.value);
  }

  return {
    /**
     * Reads both (a first open, in its setup before asking for its series: the server answers
     * in order, and these are quick; a reopen once its charts are on screen).
     */
    read(): void {
      Promise.all([api.getRun({ runId }), api.metricKeys({ runId })]).then(
        ([d, k]) => {
          setDetail(d);
          setKeys(k);
        },
        (e: Error) => (error.value = e.message),
      );
    },
    detail,
    keys,
    error,
    /** Reads the detail again (a push says it may have changed). */
    refreshDetail,
    /**
     * Reads the detail again once the page is idle (within IDLE_WAIT_MS): for a progress push,
     * whose points are drawn first (starting a request costs the page a millisecond or two).
     */
    refreshDetailWhenIdle,
    /**
     * A committed step's progress push: the engine records its backend when it is ready, so the
     * detail is read again when idle until the runs list's row (`listed`) or the detail names
     * it, and only while an engine runs the run (an ended run's detail, read at open, is final).
     */
    learnBackend(listed: RunSummary | undefined): void {
      const d = detail.value;
      if (listed?.backend || d?.backend || !(listed?.active || d?.active)) return;
      refreshDetailWhenIdle();
    },
    /** Reads the run's metric keys again. */
    refreshKeys: oneAtATime(() => api.metricKeys({ runId }).then(setKeys)),
    /** Shows `d` (an answer the caller read itself, e.g. before a resume). */
    setDetail,
  };
}
