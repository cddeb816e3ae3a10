/**
 * Shared by the engine tests: a temporary lab (database + runs/ folder), the tiny math-quick
 * config (~1 s a step on 2 CPU cores), and a run started through the real NodeForkLauncher whose
 * messages are recorded and can be awaited.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { presetConfig, type RunConfig } from '../../src/core/config';
import { NodeForkLauncher } from '../../src/core/host/launcher';
import type { EngineMessage } from '../../src/core/host/messages';
import { createRun, launchRun, type ActiveRun } from '../../src/core/host/runs';
import { LabStore } from '../../src/core/store';

export const TINY = {
  policies: { init: null, modelOverrides: { dModel: 32, nLayers: 1, nHeads: 2, contextLength: 192 } },
  rollout: { tasksPerStep: 2, groupSize: 2, maxNewTokens: 8 },
  eval: { every: 2, n: 2, queries: 2 },
};

export function tinyConfig(overrides: Record<string, unknown> = {}): RunConfig {
  return presetConfig('math-quick', { ...TINY, ...overrides });
}

export function tempLab(): { dbPath: string; store: LabStore } {
  const dbPath = join(mkdtempSync(join(tmpdir(), 'srpo-engine-')), 'lab.db');
  return { dbPath, store: LabStore.open(dbPath) };
}

export interface RecordedRun extends ActiveRun {
  messages: EngineMessage[];
  /** Resolves with the first message (already received or future) that matches. */
  waitFor(pred: (m: EngineMessage) => boolean, what: string, timeoutMs?: number): Promise<EngineMessage>;
}

export function startRecorded(store: LabStore, dbPath: string, runId: number, mode: 'start' | 'resume'): RecordedRun {
  const messages: EngineMessage[] = [];
  const waiters: { pred: (m: EngineMessage) => boolean; resolve: (m: EngineMessage) => void }[] = [];
  const active = launchRun(runId, mode, {
    store,
    dbPath,
    launcher: new NodeForkLauncher({ stdio: 'pipe' }),
    onMessage: (m) => {
      messages.push(m);
      for (const w of [...waiters])
        if (w.pred(m)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(m);
        }
    },
  });
  const waitFor = (pred: (m: EngineMessage) => boolean, what: string, timeoutMs = 45_000): Promise<EngineMessage> => {
    const seen = messages.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `timed out waiting for ${what}; messages: ${JSON.stringify(messages.map((m) => (m.type === 'step' ? `step ${m.step}` : m)))}; stderr: ${(active.engine as unknown as { stderrTail(): string }).stderrTail()}`,
            ),
          ),
        timeoutMs,
      );
      waiters.push({ pred, resolve: (m) => (clearTimeout(timer), resolve(m)) });
      void active.done.then(() => {
        // The engine is gone: a message that never came will not come. The 50 ms is a grace, not a
        // stand-in for an event the handle offers: Node reports a child's exit and its last IPC
        // messages on separate handles, in either order, and EngineHandle has no 'channel drained'.
        // It only moves a failure's report from the timeout to just after the exit (a waiter met
        // first stays resolved).
        setTimeout(() => reject(new Error(`engine exited before ${what}; messages: ${JSON.stringify(messages)}`)), 50);
      });
    });
  };
  return Object.assign(Object.create(null), active, { runId: active.runId, engine: active.engine, done: active.done, messages, waitFor }) as RecordedRun;
}

export function newRun(store: LabStore, config: RunConfig): number {
  return createRun(store, { config, preset: 'math-quick' });
}

export const isStep =
  (n: number) =>
  (m: EngineMessage): boolean =>
    m.type === 'step' && m.step >= n;

/** Steps with a metric row recorded more than once (must be none). */
export function duplicatedSteps(store: LabStore, runId: number): number[] {
  return store.db.raw
    .prepare("SELECT step FROM metrics WHERE run_id = ? AND key = 'time/step' GROUP BY step HAVING count(*) > 1")
    .pluck()
    .all(runId) as number[];
}

export function integrityCheck(store: LabStore): string {
  return store.db.raw.pragma('integrity_check', { simple: true }) as string;
}
