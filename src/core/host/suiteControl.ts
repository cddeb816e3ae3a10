/**
 * The LabService's suites: read one (its runs, their status and its tables), create one from a
 * spec (every run config validated first, its runs created) and start one (each of its runs not
 * completed, running or queued is started or queued through runControl.ts, behind the engine limit).
 *
 * Not here: the suite spec, its expansion and tables (src/core/suites, src/shared/suites.ts), the
 * CLI's own suite runner (src/core/suites/runner.ts). Tested by test/core/host/suiteApi.test.ts.
 */
import { LabApiError } from '../../shared/api';
import type { SuiteDetail } from '../../shared/suites';
import { createSuite as storeSuite } from '../store/suites';
import { materialiseSuite } from '../suites/runner';
import { expandSuite, resolveSuiteSpec } from '../suites/spec';
import { suiteDetail } from '../suites/tableData';
import type { LabContext } from './labContext';
import type { RunControl } from './runControl';
import { queuedRunIds } from './runQueries';

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

/** Queues (or starts, while engine slots are free) every run of the suite not completed, running or queued. */
export function startSuite(ctx: LabContext, runs: RunControl, suiteId: number): { queued: number } {
  suiteOrThrow(ctx, suiteId);
  materialiseSuite(ctx.store, suiteId);
  let queued = 0;
  for (const e of suiteOrThrow(ctx, suiteId).entries) {
    if (e.runId === null || e.status === 'completed' || e.status === 'queued' || runs.isActive(e.runId) || runs.isQueued(e.runId)) continue;
    // running/paused without an engine here: its host died with it (the lease check still refuses a live one).
    const force = e.status === 'running' || e.status === 'paused';
    try {
      runs.launch(e.runId, e.status === 'created' ? 'start' : 'resume', force);
      queued++;
    } catch (err) {
      ctx.push({ type: 'log', runId: e.runId, level: 'warn', line: `suite ${suiteId}: run ${e.runId} not queued: ${(err as Error).message}` });
    }
  }
  ctx.push({ type: 'runs' });
  return { queued };
}
