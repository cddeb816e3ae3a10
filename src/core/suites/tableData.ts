/**
 * A stored suite as the CLI, the API and the reports show it (src/shared/suites.ts): its cells
 * with their runs' statuses, and the paper's tables built from the completed runs' final
 * evaluations and `grad/norm` curves. Read-only.
 *
 * Not here: the table's statistics (src/shared/suites.ts, pairedStats.ts).
 * Tests: test/core/suites/suites.test.ts.
 */
import type { SuiteDetail, SuiteEntry, SuiteSummary, SuiteTableRun } from '../../shared/suites';
import { buildSuiteTable } from '../../shared/suites';
import type { LabStore } from '../store';
import { getSuite, listSuites, suiteCells, type StoredSuite } from '../store/suites';
import { shownStatus } from '../../shared/records';

function entries(store: LabStore, suiteId: number, queued: ReadonlySet<number>): SuiteEntry[] {
  return suiteCells(store.db, suiteId).map((c) => {
    const run = c.runId !== null ? store.getRun(c.runId) : null;
    return {
      position: c.position,
      label: c.label,
      seed: c.seed,
      runId: run ? run.id : null,
      status: !run ? 'pending' : shownStatus(run.status, queued.has(run.id)),
      lastStep: run ? run.lastStep : -1,
      steps: run ? ((run.config as { steps?: number }).steps ?? 0) : 0,
    };
  });
}

function summary(s: StoredSuite, cells: SuiteEntry[]): SuiteSummary {
  // Rows and seeds from the cells, so a suite whose spec no longer resolves (a preset renamed
  // since) is still listed and shown; only creating its missing runs needs the spec.
  const rows = [...new Set(cells.map((c) => c.label))];
  const seeds = [...new Set(cells.map((c) => c.seed))];
  const stored = (s.spec as { baseline?: unknown } | null)?.baseline;
  const counts: Record<string, number> = {};
  for (const c of cells) counts[c.status] = (counts[c.status] ?? 0) + 1;
  const baseline = typeof stored === 'string' && rows.includes(stored) ? stored : (rows[0] ?? '');
  return { id: s.id, name: s.name, createdAt: s.createdAt, rows, seeds, baseline, counts, total: cells.length };
}

export function suiteSummaries(store: LabStore, queued: ReadonlySet<number> = new Set()): SuiteSummary[] {
  return listSuites(store.db).map((s) => summary(s, entries(store, s.id, queued)));
}

/** The runs of a suite that enter its table (completed ones). */
export function suiteTableRuns(store: LabStore, cells: readonly SuiteEntry[]): SuiteTableRun[] {
  return cells
    .filter((c) => c.runId !== null && c.status === 'completed')
    .map((c) => ({
      label: c.label,
      seed: c.seed,
      runId: c.runId!,
      evaluations: store.evaluations(c.runId!),
      gradNorm: store.metricSeries(c.runId!, 'grad/norm').map((p) => p.value),
    }));
}

/** The suite with its cells and table; `baseline` overrides the spec's. Null when there is no such suite. */
export function suiteDetail(store: LabStore, suiteId: number, options: { baseline?: string; queued?: ReadonlySet<number> } = {}): SuiteDetail | null {
  const s = getSuite(store.db, suiteId);
  if (!s) return null;
  const cells = entries(store, suiteId, options.queued ?? new Set());
  const sum = summary(s, cells);
  if (options.baseline !== undefined && !sum.rows.includes(options.baseline))
    throw new Error(`suite ${suiteId}: baseline "${options.baseline}" is not a row; rows: ${sum.rows.join(', ')}`);
  const baseline = options.baseline ?? sum.baseline;
  return { ...sum, baseline, entries: cells, table: buildSuiteTable(suiteTableRuns(store, cells), sum.rows, baseline) };
}
