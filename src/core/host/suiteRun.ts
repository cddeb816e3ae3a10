/**
 * `srpo-lab suite run/resume`'s driver: runs a stored suite through a RunControl of its own
 * (runControl.ts, the same queue, engine limit and leases as the LabService, with `parallel` as
 * the limit), by the suite rule of suiteControl.ts (completed runs are not redone, interrupted,
 * stopped or failed ones resume from their latest checkpoint, missing runs are created again from
 * the stored spec), and prints one line per finished run, then a closing line.
 *
 * Cells beyond the limit wait in the queue holding their run's lease as `queued` (another host
 * can neither start nor delete them meanwhile). Ctrl-C is RunControl's: the first drops the queue
 * and stops every engine after its step, the second kills them; `srpo-lab suite resume ID`
 * continues either way.
 *
 * Not here: the spec and the tables (src/core/suites), printing the tables (src/cli/suite.ts).
 * Tests: test/core/suites/suites.test.ts, test/cli/suite.test.ts.
 */
import type { LabStore } from '../store';
import { MetricSeriesCache } from '../store/series';
import { getSuite, suiteCells } from '../store/suites';
import type { LabContext } from './labContext';
import type { EngineLauncher } from './launcher';
import { RunControl, type RunSettled } from './runControl';
import { launchSuiteCells, materialiseSuite } from './suiteControl';

export interface SuiteRunOptions {
  store: LabStore;
  dbPath: string;
  launcher: EngineLauncher;
  /** Engines at once (>= 1): the engine limit of this run's RunControl. */
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
  const toRun = cells.filter((c) => store.getRun(c.runId!)?.status !== 'completed');
  const outcome: SuiteOutcome = { total: cells.length, skipped: cells.length - toRun.length, completed: 0, failed: 0, stopped: 0, interrupted: false };
  out(`suite ${suiteId} "${suite.name}": ${cells.length} runs, ${outcome.skipped} already completed, ${toRun.length} to run, ${parallel} at a time`);

  const ctx: LabContext = {
    store,
    dbPath: o.dbPath,
    seriesCache: new MetricSeriesCache(store.db),
    push: () => {}, // this host's lines are the ones below; the engines' own output goes to the terminal
    isActive: (runId) => runs.isActive(runId),
  };
  const runs = new RunControl(ctx, o.launcher, parallel);
  const tags = new Map(toRun.map((c) => [c.runId!, `row "${c.label}" seed ${c.seed}: run ${c.runId}`]));
  let finished = outcome.skipped;
  const line = (runId: number, counted: boolean, what: string) => out(`[${counted ? ++finished : finished}/${cells.length}] ${tags.get(runId)} ${what}`);
  let settle = () => {};
  const allSettled = new Promise<void>((resolve) => (settle = resolve));
  const onSettled = (s: RunSettled) => {
    if (!tags.has(s.runId)) return;
    if (s.outcome) {
      const r = s.outcome;
      const took = clock(Date.now() - s.startedAt);
      if (r.status === 'completed') {
        outcome.completed++;
        line(s.runId, true, `completed in ${took}${macroLine(store, s.runId)}`);
      } else if (r.status === 'stopped' || (outcome.interrupted && r.status === 'interrupted')) {
        outcome.stopped++;
        line(s.runId, false, `${r.status} after ${took} (${r.lastStep + 1} steps committed)`);
      } else {
        outcome.failed++;
        line(s.runId, true, `${r.status} after ${took}: ${r.error ?? 'no reason recorded'}`);
      }
    } else if (outcome.interrupted) outcome.stopped++;
    else {
      outcome.failed++;
      line(s.runId, true, `could not start: ${s.notStarted}`);
    }
    tags.delete(s.runId);
    if (tags.size === 0) settle();
  };
  const disposeSettled = runs.onSettled(onSettled);
  const disposeInterrupt = o.onInterrupt?.(() => {
    outcome.interrupted = true;
    if (runs.interrupt() === 'stopping') out('stopping: every engine finishes or abandons its step (Ctrl-C again to kill them)');
  });
  try {
    const { refused } = launchSuiteCells(store, runs, suiteId);
    for (const r of refused) onSettled({ runId: r.runId, notStarted: r.message });
    if (tags.size > 0) await allSettled;
  } finally {
    disposeSettled();
    disposeInterrupt?.();
  }
  const resume = `srpo-lab suite resume ${suiteId} --db ${o.dbPath}`;
  if (outcome.interrupted || outcome.failed)
    out(
      `suite ${suiteId}: ${outcome.skipped + outcome.completed} of ${cells.length} runs completed, ${outcome.failed} failed, ${outcome.stopped} stopped or not started; continue with: ${resume}`,
    );
  else out(`suite ${suiteId} completed: ${cells.length} runs. See: srpo-lab suite show ${suiteId} --db ${o.dbPath}`);
  return outcome;
}
