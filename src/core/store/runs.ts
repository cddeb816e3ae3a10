/**
 * The runs table: create, read, list (newest first), update the fields that change over a run's
 * life, delete (cascading to everything the run owns), mark a run interrupted after its engine
 * died, and point its checkpoint rows at a folder its files moved to. Not the per-step data
 * (steps.ts). Run ids are never reused, even after the newest run is deleted (AUTOINCREMENT,
 * migration 3). Tests: test/core/store/runs.test.ts, runIds.test.ts,
 * test/core/host/runFolders.test.ts (relocateRunFiles).
 */
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { LabDb } from './db';
import { LabStoreError } from './errors';
import type { NewRunRecord, RunPatch, RunRecord, StoredRunStatus } from './records';

interface RunRow {
  id: number;
  name: string;
  preset: string | null;
  config: string;
  status: StoredRunStatus;
  backend: string | null;
  seed: number;
  workflow: string;
  algorithm: string;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  error: string | null;
  last_step: number;
}

const INSERT = `INSERT INTO runs (name, preset, config, status, seed, workflow, algorithm, created_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)`;
const SELECT = 'SELECT * FROM runs WHERE id = ?';
const LIST = 'SELECT * FROM runs ORDER BY created_at DESC, id DESC';
// One statement for every patch: a flag per field says whether to set it.
const UPDATE = `UPDATE runs SET
  status     = CASE WHEN :setStatus    THEN :status    ELSE status     END,
  backend    = CASE WHEN :setBackend   THEN :backend   ELSE backend    END,
  error      = CASE WHEN :setError     THEN :error     ELSE error      END,
  started_at = CASE WHEN :setStartedAt THEN :startedAt ELSE started_at END,
  ended_at   = CASE WHEN :setEndedAt   THEN :endedAt   ELSE ended_at   END
  WHERE id = :id`;
const DELETE = 'DELETE FROM runs WHERE id = ?';
const INTERRUPT = `UPDATE runs SET status = 'interrupted', error = ?, ended_at = ?
  WHERE id = ? AND status IN ('created', 'running', 'paused')`;

function toRecord(r: RunRow): RunRecord {
  return {
    id: r.id,
    name: r.name,
    preset: r.preset,
    config: JSON.parse(r.config),
    status: r.status,
    backend: r.backend,
    seed: r.seed,
    workflow: r.workflow,
    algorithm: r.algorithm,
    createdAt: r.created_at,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    error: r.error,
    lastStep: r.last_step,
  };
}

/** Inserts a run with a frozen JSON snapshot of its config; returns its id. */
export function createRun(db: LabDb, run: NewRunRecord): number {
  const config = JSON.stringify(run.config);
  if (config === undefined) throw new Error('createRun: config must be JSON-serialisable');
  const info = db
    .stmt(INSERT)
    .run(run.name, run.preset ?? null, config, run.status ?? 'created', run.seed, run.workflow, run.algorithm, run.createdAt ?? Date.now());
  return Number(info.lastInsertRowid);
}

export function getRun(db: LabDb, id: number): RunRecord | null {
  const row = db.stmt<[number], RunRow>(SELECT).get(id);
  return row ? toRecord(row) : null;
}

/** Every run, newest first. */
export function listRuns(db: LabDb): RunRecord[] {
  return db.stmt<[], RunRow>(LIST).all().map(toRecord);
}

/** Applies a patch; throws when the run does not exist. */
export function updateRun(db: LabDb, id: number, patch: RunPatch): void {
  const info = db.stmt(UPDATE).run({
    id,
    setStatus: +(patch.status !== undefined),
    status: patch.status ?? null,
    setBackend: +(patch.backend !== undefined),
    backend: patch.backend ?? null,
    setError: +(patch.error !== undefined),
    error: patch.error ?? null,
    setStartedAt: +(patch.startedAt !== undefined),
    startedAt: patch.startedAt ?? null,
    setEndedAt: +(patch.endedAt !== undefined),
    endedAt: patch.endedAt ?? null,
  });
  if (info.changes === 0) throw new LabStoreError('run_not_found', `updateRun: no run with id ${id}`);
}

/** Deletes a run and everything recorded for it; false when there was no such run. */
export function deleteRun(db: LabDb, id: number): boolean {
  return db.stmt(DELETE).run(id).changes > 0;
}

/**
 * After an engine died: status 'interrupted', the reason in `error`, ended now. Only a run that
 * was still live (created, running, paused) changes; returns whether it did. Committed steps are
 * untouched; resume from latestCheckpoint (see steps.ts, truncateAfter).
 */
export function markInterrupted(db: LabDb, id: number, reason: string, now = Date.now()): boolean {
  return db.stmt(INTERRUPT).run(reason, now, id).changes > 0;
}

const CHECKPOINT_PATHS = 'SELECT step, path FROM checkpoints WHERE run_id = ?';
const SET_CHECKPOINT_PATH = 'UPDATE checkpoints SET path = ? WHERE run_id = ? AND step = ?';

/**
 * The run's files moved from `fromDir` to `toDir`: every checkpoint row under `fromDir` (absolute,
 * or relative to the database's folder) now names the same place under `toDir`, absolute. `move`
 * (the rename itself) runs inside the same transaction, after the rows are rewritten: when it
 * throws nothing is changed. Returns how many rows changed.
 */
export function relocateRunFiles(db: LabDb, id: number, fromDir: string, toDir: string, move: () => void = () => {}): number {
  const base = dirname(resolve(db.path));
  const from = resolve(base, fromDir);
  const to = resolve(base, toDir);
  return db.raw.transaction(() => {
    let changed = 0;
    for (const row of db.stmt<[number], { step: number; path: string }>(CHECKPOINT_PATHS).all(id)) {
      const abs = isAbsolute(row.path) ? row.path : resolve(base, row.path);
      const rel = relative(from, abs);
      if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) continue; // not under fromDir
      db.stmt(SET_CHECKPOINT_PATH).run(join(to, rel), id, row.step);
      changed++;
    }
    move();
    return changed;
  })();
}
