/**
 * Runs a stored suite: creates the runs its cells do not have yet (from the stored spec, so a
 * resumed suite creates exactly the runs it would have), then trains every cell whose run is not
 * completed, `parallel` engines at a time, in queue order, and prints one line per finished run.
 *
 * Resumable by construction: a completed run is never redone; a run that was stopped,
 * interrupted (crash, kill -9) or failed is resumed from its latest checkpoint; one left
 * `running` by a host that died with it is resumed with force (the lease check still refuses a
 * run whose engine is alive). Ctrl-C stops every engine cleanly (each finishes or abandons its
 * step); a second Ctrl-C kills them. `srpo-lab suite resume ID` continues either way.
 *
 * Not here: the engine (src/engine), the table (tableData.ts). Tests: test/core/suites/suites.test.ts.
 */
import { createRun, launchRun, type ActiveRun } from '../host/runs';
import type { EngineLauncher } from '../host/launcher';
import type { LabStore } from '../store';
import { getSuite, setSuiteCellRun, suiteCells } from '../store/suites';
import { expandSuite, resolveSuiteSpec } from './spec';

export interface SuiteRunOptions {
  store: LabStore;
  dbPath: string;
  launcher: EngineLauncher;
  /** Engines at once (>= 1). */
  parallel: number;
  /** One line per finished run, and the opening and closing lines. */
  out: (line: string) => void;
  /** Registers a Ctrl-C handler for the duration of the suite; returns a disposer. */
  onInterrupt?: (handler: () => void) => () => void;
}

export interface SuiteOutcome {
  total: number;
  /** Cells already completed before this call. */
  skipped: number;
  completed: number;
  failed: number;
  /** Runs stopped by Ctrl-C (resumable), or not started because of it. */
  stopped: number;
  interrupted: boolean;
}

/** Creates the runs of the cells that have none (after a crash, or a deleted run). Returns how many. */
export function materialiseSuite(store: LabStore, suiteId: number): number {
  const suite = getSuite(store.db, suiteId);
  if (!suite) throw new Error(`no suite ${suiteId}`);
  const missing = suiteCells(store.db, suiteId).filter((c) => c.runId === null || !store.getRun(c.runId));
  if (!missing.length) return 0;
  const planned = expandSuite(resolveSuiteSpec(suite.spec));
  for (const cell of missing) {
    const plan = planned[cell.position];
    if (!plan || plan.label !== cell.label || plan.seed !== cell.seed)
      throw new Error(`suite ${suiteId}: cell ${cell.position} (${cell.label}, seed ${cell.seed}) no longer matches its spec`);
    setSuiteCellRun(store.db, suiteId, cell.position, createRun(store, { config: plan.config, preset: plan.preset }));
  }
  return missing.length;
}

const clock = (ms: number) => {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
};

/** Final macro Avg@n / Pass@n of a run, for its progress line. */
function macroLine(store: LabStore, runId: number): string {
  const ev = store.evaluations(runId);
  const last = Math.max(-1, ...ev.map((e) => e.step));
  const fin = ev.filter((e) => e.step === last);
  if (!fin.length) return '';
  const m = (f: (e: (typeof fin)[number]) => number) => ((fin.reduce((a, e) => a + f(e), 0) / fin.length) * 100).toFixed(1);
  return ` · macro Avg@n ${m((e) => e.avgAtN)} Pass@n ${m((e) => e.passAtN)}`;
}

export async function runSuite(suiteId: number, o: SuiteRunOptions): Promise<SuiteOutcome> {
  const { store, out } = o;
  const suite = getSuite(store.db, suiteId);
  if (!suite) throw new Error(`no suite ${suiteId} in ${o.dbPath}`);
  const parallel = Math.max(1, Math.floor(o.parallel));
  materialiseSuite(store, suiteId);
  const cells = suiteCells(store.db, suiteId);
  const queue = cells.filter((c) => store.getRun(c.runId!)?.status !== 'completed');
  const outcome: SuiteOutcome = { total: cells.length, skipped: cells.length - queue.length, completed: 0, failed: 0, stopped: 0, interrupted: false };
  out(`suite ${suiteId} "${suite.name}": ${cells.length} runs, ${outcome.skipped} already completed, ${queue.length} to run, ${parallel} at a time`);

  const active = new Set<ActiveRun>();
  let stopping = false;
  let interrupts = 0;
  const dispose = o.onInterrupt?.(() => {
    interrupts++;
    stopping = true;
    outcome.interrupted = true;
    if (interrupts === 1) {
      out('stopping: every engine finishes or abandons its step (Ctrl-C again to kill them)');
      for (const a of active) a.stop();
    } else for (const a of active) a.engine.kill('SIGKILL');
  });
  let next = 0;
  let finished = outcome.skipped;
  const worker = async () => {
    while (!stopping && next < queue.length) {
      const cell = queue[next++];
      const runId = cell.runId!;
      const run = store.getRun(runId)!;
      const tag = `row "${cell.label}" seed ${cell.seed}: run ${runId}`;
      const t0 = Date.now();
      let a: ActiveRun;
      try {
        const force = run.status === 'running' || run.status === 'paused'; // left so by a host that died with its engine
        a = launchRun(runId, run.status === 'created' ? 'start' : 'resume', { store, dbPath: o.dbPath, launcher: o.launcher }, force);
      } catch (err) {
        outcome.failed++;
        out(`[${++finished}/${cells.length}] ${tag} could not start: ${(err as Error).message}`);
        continue;
      }
      active.add(a);
      if (stopping) a.stop(); // Ctrl-C arrived while it was launching
      const r = await a.done;
      active.delete(a);
      const took = clock(Date.now() - t0);
      if (r.status === 'completed') {
        outcome.completed++;
        out(`[${++finished}/${cells.length}] ${tag} completed in ${took}${macroLine(store, runId)}`);
      } else if (r.status === 'stopped' || (stopping && r.status === 'interrupted')) {
        outcome.stopped++;
        out(`[${finished}/${cells.length}] ${tag} ${r.status} after ${took} (${r.lastStep + 1} steps committed)`);
      } else {
        outcome.failed++;
        out(`[${++finished}/${cells.length}] ${tag} ${r.status} after ${took}: ${r.error ?? 'no reason recorded'}`);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(parallel, Math.max(1, queue.length)) }, worker));
  } finally {
    dispose?.();
  }
  outcome.stopped += queue.length - Math.min(next, queue.length);
  const resume = `srpo-lab suite resume ${suiteId} --db ${o.dbPath}`;
  if (outcome.interrupted || outcome.failed)
    out(
      `suite ${suiteId}: ${outcome.skipped + outcome.completed} of ${cells.length} runs completed, ${outcome.failed} failed, ${outcome.stopped} stopped or not started; continue with: ${resume}`,
    );
  else out(`suite ${suiteId} completed: ${cells.length} runs. See: srpo-lab suite show ${suiteId} --db ${o.dbPath}`);
  return outcome;
}
