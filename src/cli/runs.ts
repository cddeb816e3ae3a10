/**
 * `srpo-lab runs`: every run of the lab database as a table (newest first): id, name, status,
 * preset, workflow, objective, backend, steps committed / planned, best eval macro average, start
 * time. Read only. Tests: test/cli/train.test.ts.
 */
import type { RunConfig } from '../core/config';
import type { ParsedArgs } from './args';
import { bestMetric, fixed, openLab, table, when } from './lab';

export async function runsCommand(args: ParsedArgs, out: (line: string) => void): Promise<void> {
  const { store, dbPath } = openLab(args, false);
  try {
    const runs = store.listRuns();
    if (runs.length === 0) {
      out(`no runs in ${dbPath} yet; start one with: srpo-lab train --preset math-quick --db ${dbPath}`);
      return;
    }
    const rows = runs.map((r) => [
      String(r.id),
      r.name,
      r.status,
      r.preset ?? '-',
      r.workflow,
      r.algorithm,
      r.backend ?? '-',
      `${r.lastStep + 1}/${(r.config as RunConfig).steps + 1}`,
      fixed(bestMetric(store, r.id, 'eval/macro/avg')),
      when(r.startedAt),
    ]);
    for (const line of table(['id', 'name', 'status', 'preset', 'workflow', 'objective', 'backend', 'steps', 'best eval', 'started'], rows)) out(line);
  } finally {
    store.close();
  }
}
