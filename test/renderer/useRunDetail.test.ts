// The dashboard's run detail and metric keys (src/renderer/src/composables/useRunDetail.ts): an
// answer equal to what is shown changes nothing (no watcher runs, so no panel or header is
// recomputed on a live run's progress pushes), a changed one is shown, a reopened run starts from
// what it last showed, and re-reads go out one at a time.
import { effectScope, watch } from 'vue';
import { describe, expect, it, vi } from 'vitest';
import type { RunDetail, RunSummary } from '../../src/shared/api';

const server: { detail: (runId: number) => RunDetail; keys: string[]; getRuns: number; open: (() => void)[] } = {
  detail: (runId) => detailOf(runId, null),
  keys: ['a', 'b'],
  getRuns: 0,
  open: [],
};

vi.mock('../../src/renderer/src/api/client', () => ({
  labClient: () => ({
    getRun: ({ runId }: { runId: number }) => {
      server.getRuns++;
      // Answered when the test says so (server.open), to see how many are out at once.
      return new Promise<RunDetail>((resolve) => server.open.push(() => resolve(server.detail(runId))));
    },
    metricKeys: async () => [...server.keys],
  }),
}));

const { useRunDetail } = await import('../../src/renderer/src/composables/useRunDetail');

function detailOf(id: number, backend: string | null): RunDetail {
  return {
    id,
    name: `run ${id}`,
    backend,
    config: { eval: { every: 2, n: 4 }, workflow: { name: 'math' } },
    checkpoints: [],
  } as unknown as RunDetail;
}
const settle = () => new Promise((r) => setTimeout(r, 0));
/** Answers every getRun out now. */
async function answer() {
  const open = server.open.splice(0);
  for (const done of open) done();
  await settle();
}

function open(runId: number) {
  const scope = effectScope();
  const run = scope.run(() => useRunDetail(runId))!;
  const changes = { detail: 0, keys: 0 };
  scope.run(() => {
    watch(run.detail, () => changes.detail++);
    watch(run.keys, () => changes.keys++);
  });
  return { run, changes, close: () => scope.stop() };
}

describe('useRunDetail', () => {
  it('a re-read equal to what is shown keeps the same objects and runs no watcher; a changed one is shown', async () => {
    server.detail = (id) => detailOf(id, null);
    const { run, changes, close } = open(21);
    run.read();
    await answer();
    const shown = run.detail.value;
    expect(shown?.name).toBe('run 21');
    expect(run.keys.value).toEqual(['a', 'b']);
    expect(changes).toEqual({ detail: 1, keys: 1 });

    run.refreshDetail(); // a progress push while the backend is unknown: the same answer
    run.refreshKeys();
    await answer();
    expect(run.detail.value).toBe(shown);
    expect(changes).toEqual({ detail: 1, keys: 1 });

    server.detail = (id) => detailOf(id, 'tfjs-node'); // the engine recorded its backend
    server.keys = ['a', 'b', 'c'];
    run.refreshDetail();
    run.refreshKeys();
    await answer();
    expect(run.detail.value?.backend).toBe('tfjs-node');
    expect(run.keys.value).toEqual(['a', 'b', 'c']);
    expect(changes).toEqual({ detail: 2, keys: 2 });
    close();
    server.keys = ['a', 'b'];
  });

  it('a reopened run starts from the detail and keys it last showed, before any answer', async () => {
    server.detail = (id) => detailOf(id, 'cpu');
    const first = open(22);
    first.run.read();
    await answer();
    first.close();

    const again = open(22);
    expect(again.run.detail.value?.backend).toBe('cpu'); // no request answered yet
    expect(again.run.keys.value).toEqual(['a', 'b']);
    again.run.read();
    await answer();
    expect(again.changes).toEqual({ detail: 0, keys: 0 }); // the fresh answers are the same
    again.close();

    const other = open(23); // never opened: nothing to start from
    expect(other.run.detail.value).toBeNull();
    expect(other.run.keys.value).toEqual([]);
    other.close();
  });

  it('re-reads go out one at a time; calls while one is out ask for one more after it', async () => {
    server.detail = (id) => detailOf(id, null);
    server.getRuns = 0;
    const { run, close } = open(24);
    run.refreshDetail();
    run.refreshDetail();
    run.refreshDetail();
    expect(server.getRuns).toBe(1);
    await answer();
    expect(server.getRuns).toBe(2); // the calls made meanwhile: one more read
    await answer();
    expect(server.getRuns).toBe(2);
    close();
  });

  it('refreshDetailWhenIdle reads once when the page is idle, however many pushes asked', async () => {
    server.getRuns = 0;
    const { run, close } = open(25);
    run.refreshDetailWhenIdle();
    run.refreshDetailWhenIdle();
    expect(server.getRuns).toBe(0); // not in the push's task
    await settle();
    expect(server.getRuns).toBe(1);
    await answer();
    run.refreshDetailWhenIdle();
    close(); // the view closed before the page was idle: no read
    await settle();
    expect(server.getRuns).toBe(1);
  });

  it('learnBackend reads the detail while an engine runs the run and no one names its backend, else not', async () => {
    const summary = (active: boolean, backend: string | null) => ({ ...detailOf(26, backend), active }) as unknown as RunSummary;
    server.detail = (id) => ({ ...detailOf(id, null), active: false }) as unknown as RunDetail;
    const { run, close } = open(26);
    run.read();
    await answer();
    server.getRuns = 0;
    run.learnBackend(summary(false, null)); // ended, no backend recorded: nothing more to learn
    await settle();
    expect(server.getRuns).toBe(0);
    run.learnBackend(summary(true, 'node')); // the list's row names it
    await settle();
    expect(server.getRuns).toBe(0);
    run.learnBackend(summary(true, null)); // running, backend not known yet: read when idle
    await settle();
    expect(server.getRuns).toBe(1);
    server.detail = (id) => ({ ...detailOf(id, 'wasm'), active: true }) as unknown as RunDetail;
    await answer();
    run.learnBackend(summary(true, null)); // the detail now names it
    await settle();
    expect(server.getRuns).toBe(1);
    close();
  });
});
