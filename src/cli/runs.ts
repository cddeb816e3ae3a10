/**
 * `srpo-lab runs`: every run of the lab database as a table (newest first): id, name, status,
 * preset, workflow, objective, backend, steps (updates committed / planned, the convention of
 * src/shared/stepConvention.ts: 30/30 when done, 5/8 when stopped after 5), best eval macro
 * average, start time. Read only. Tests: test/cli/train.test.ts, test/cli/help.test.ts.
 */
import type { RunConfig } from '../core/config';
import { liveLeases } from '../core/store/leases';
import type { ParsedArgs } from './args';
import { stepsText } from '../shared/stepConvention';
import { bestMetric, fixed, labCommand, openLabForReading, table, when } from './lab';

export async function runsCommand(args: ParsedArgs, out: (line: string) => void): Promise<void> {
  const { store, dbPath } = openLabForReading(args);
  try {
    const runs = store.listRuns();
    if (runs.length === 0) {
      out(`no runs in ${dbPath} yet; start one with: ${labCommand()} train --preset math-quick --db ${dbPath}`);
      return;
    }
    // `queued`: waiting for an engine slot of a lab host (a live queued lease), not a stored status.
    const queued = new Set(
      liveLeases(store.db)
        .filter((l) => l.kind === 'queued')
        .map((l) => l.runId),
    );
    const rows = runs.map((r) => [
      String(r.id),
      r.name,
      queued.has(r.id) ? 'queued' : r.status,
      r.preset ?? '-',
      r.workflow,
      r.algorithm,
      r.backend ?? '-',
      stepsText(r.lastStep, (r.config as RunConfig).steps, r.status),
      fixed(bestMetric(store, r.id, 'eval/macro/avg')),
      when(r.startedAt),
    ]);
    for (const line of table(['id', 'name', 'status', 'preset', 'workflow', 'objective', 'backend', 'steps', 'best eval', 'started'], rows)) out(line);
  } finally {
    store.close();
  }
}
