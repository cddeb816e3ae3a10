/**
 * Suites in the lab database (migration 005): create a suite with its cells in queue order, read
 * suites and their cells, and record the run a cell became. Plain functions over a LabDb, its
 * statements prepared once per connection; every write is one transaction. The spec is stored as
 * the JSON it was validated as (src/core/suites/spec.ts) and not interpreted here.
 *
 * Not here: expanding a spec into run configs or running it (src/core/suites).
 * Tests: test/core/suites/suites.test.ts.
 */
import type { LabDb } from './db';

export interface StoredSuite {
  id: number;
  name: string;
  /** The validated suite spec (JSON). */
  spec: unknown;
  createdAt: number;
}

export interface StoredSuiteCell {
  position: number;
  label: string;
  seed: number;
  runId: number | null;
}

interface SuiteRow {
  id: number;
  name: string;
  spec: string;
  created_at: number;
}

const toSuite = (r: SuiteRow): StoredSuite => ({ id: r.id, name: r.name, spec: JSON.parse(r.spec), createdAt: r.created_at });

/** Stores a suite and its cells (label, seed; positions in the given order); returns its id. */
export function createSuite(db: LabDb, suite: { name: string; spec: unknown; cells: readonly { label: string; seed: number }[] }): number {
  return db.raw.transaction(() => {
    const { lastInsertRowid } = db.stmt('INSERT INTO suites (name, spec, created_at) VALUES (?, ?, ?)').run(suite.name, JSON.stringify(suite.spec), Date.now());
    const id = Number(lastInsertRowid);
    const cell = db.stmt('INSERT INTO suite_runs (suite_id, position, row_label, seed, run_id) VALUES (?, ?, ?, ?, NULL)');
    suite.cells.forEach((c, i) => cell.run(id, i, c.label, c.seed));
    return id;
  })();
}

export function listSuites(db: LabDb): StoredSuite[] {
  return (db.stmt('SELECT id, name, spec, created_at FROM suites ORDER BY id').all() as SuiteRow[]).map(toSuite);
}

export function getSuite(db: LabDb, suiteId: number): StoredSuite | null {
  const r = db.stmt('SELECT id, name, spec, created_at FROM suites WHERE id = ?').get(suiteId) as SuiteRow | undefined;
  return r ? toSuite(r) : null;
}

export function suiteCells(db: LabDb, suiteId: number): StoredSuiteCell[] {
  const rows = db.stmt('SELECT position, row_label, seed, run_id FROM suite_runs WHERE suite_id = ? ORDER BY position').all(suiteId) as {
    position: number;
    row_label: string;
    seed: number;
    run_id: number | null;
  }[];
  return rows.map((r) => ({ position: r.position, label: r.row_label, seed: r.seed, runId: r.run_id }));
}

/** Records the run a cell became. */
export function setSuiteCellRun(db: LabDb, suiteId: number, position: number, runId: number): void {
  const { changes } = db.stmt('UPDATE suite_runs SET run_id = ? WHERE suite_id = ? AND position = ?').run(runId, suiteId, position);
  if (changes !== 1) throw new Error(`suite ${suiteId} has no cell ${position}`);
}

/** Deletes a suite and its cells (not its runs). */
export function deleteSuite(db: LabDb, suiteId: number): boolean {
  return db.stmt('DELETE FROM suites WHERE id = ?').run(suiteId).changes > 0;
}
