/**
 * A lab host's suites: read one (its runs, their status and its tables), create one from a spec
 * (every run config validated first, its runs created), and start one: every cell's run goes
 * through runControl.ts, behind the engine limit, by one rule (`launchSuiteCells`) that both the
 * LabService's `startSuite` and `srpo-lab suite run/resume` (suiteRun.ts) use.
 *
 * The rule: a completed run is never redone; a run this host already runs or queues is left
 * alone; a created one is started; any other is resumed from its latest checkpoint, with force
 * when it was left running or paused by a host that died with it (the lease check still refuses
 * a run whose engine is alive). A cell whose run was deleted gets a new one (`materialiseSuite`).
 *
 * Not here: the suite spec, its expansion and tables (src/core/suites, src/shared/suites.ts).
 * Tested by test/core/host/suiteApi.test.ts and test/core/suites/suites.test.ts.
 */
import { LabApiError } from '../../shared/api';
import type { SuiteDetail } from '../../shared/suites';
import type { LabStore } from '../store';
import { createSuite as storeSuite, getSuite, setSuiteCellRun, suiteCells } from '../store/suites';
import { expandSuite, resolveSuiteSpec } from '../suites/spec';
import { suiteDetail } from '../suites/tableData';
import type { LabContext } from './labContext';
import type { RunControl } from './runControl';
import { queuedRunIds } from './runQueries';
import { createRun } from './runs';

export function suiteOrThrow(ctx: LabContext, suiteId: number, baseline?: string): SuiteDetail {
  let d: SuiteDetail | null;
  try {
    d = suiteDetail(ctx.store, suiteId, { baseline, queued: queuedRunIds(ctx.store) });
  } catch (err) {
    throw new LabApiError('invalid_input', (err as Error).message);
  }
  if (!d) throw new LabApiError('not_found', `no suite with id ${suiteId}`);
  return d;
}

/** Creates the runs of the cells that have none (after a crash, or a deleted run), from the stored spec. Returns how many. */
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

/** What `launchSuiteCells` did with the suite's cells, by run id in cell order. */
export interface SuiteLaunch {
  /** Started now or queued behind the engine limit. */
  launched: number[];
  /** Not started, with the reason (a live lease of another host, a status that cannot resume). */
  refused: { runId: number; message: string }[];
}

/** The one rule for starting a suite's cells (see the header); creates missing runs first. */
export function launchSuiteCells(store: LabStore, runs: RunControl, suiteId: number): SuiteLaunch {
  materialiseSuite(store, suiteId);
  const result: SuiteLaunch = { launched: [], refused: [] };
  for (const cell of suiteCells(store.db, suiteId)) {
    const run = cell.runId === null ? null : store.getRun(cell.runId);
    if (!run || run.status === 'completed' || runs.isActive(run.id) || runs.isQueued(run.id)) continue;
    // running/paused without an engine here: its host died with it (the lease check still refuses a live one).
    const force = run.status === 'running' || run.status === 'paused';
    try {
      runs.launch(run.id, run.status === 'created' ? 'start' : 'resume', force);
      result.launched.push(run.id);
    } catch (err) {
      result.refused.push({ runId: run.id, message: (err as Error).message });
    }
  }
  return result;
}

/** Stores a suite (every run config validated first) and creates its runs; `start` queues them. */
export function createSuite(ctx: LabContext, runs: RunControl, raw: Record<string, unknown>, start: boolean): { suiteId: number } {
  if (ctx.store.readonly) throw new LabApiError('conflict', `${ctx.dbPath} is open read-only: suites can be read, not created`);
  let cells;
  let spec;
  try {
    spec = resolveSuiteSpec(raw);
    cells = expandSuite(spec);
  } catch (err) {
    throw new LabApiError('invalid_input', (err as Error).message);
  }
  const suiteId = storeSuite(ctx.store.db, { name: spec.name || 'suite', spec, cells: cells.map((c) => ({ label: c.label, seed: c.seed })) });
  materialiseSuite(ctx.store, suiteId);
  ctx.push({ type: 'runs' });
  if (start) startSuite(ctx, runs, suiteId);
  return { suiteId };
}

/** Queues (or starts, while engine slots are free) every run of the suite not completed, running or queued here. */
export function startSuite(ctx: LabContext, runs: RunControl, suiteId: number): { queued: number } {
  suiteOrThrow(ctx, suiteId);
  const { launched, refused } = launchSuiteCells(ctx.store, runs, suiteId);
  for (const r of refused) ctx.push({ type: 'log', runId: r.runId, level: 'warn', line: `suite ${suiteId}: run ${r.runId} not queued: ${r.message}` });
  ctx.push({ type: 'runs' });
  return { queued: launched.length };
}
