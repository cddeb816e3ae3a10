/**
 * Shared helpers of the store tests: temporary database files (removed after the test file) and
 * row counts per table. Not a test file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import type { LabDb } from '../../../src/core/store';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A fresh path in a temporary folder; nothing is created. */
export function tempDbPath(name = 'lab.db'): string {
  const dir = mkdtempSync(join(tmpdir(), 'srpo-store-'));
  dirs.push(dir);
  return join(dir, name);
}

export const STEP_TABLES = ['steps', 'metrics', 'episodes', 'events', 'members', 'evaluations', 'checkpoints'] as const;

/** Rows per table for one run (members/events through run_id columns). */
export function rowCounts(db: LabDb, runId: number, step?: number): Record<(typeof STEP_TABLES)[number], number> {
  const out = {} as Record<(typeof STEP_TABLES)[number], number>;
  for (const t of STEP_TABLES) {
    const where = step === undefined ? 'run_id = ?' : 'run_id = ? AND step = ?';
    const args = step === undefined ? [runId] : [runId, step];
    out[t] = db.raw
      .prepare(`SELECT count(*) FROM ${t} WHERE ${where}`)
      .pluck()
      .get(...args) as number;
  }
  return out;
}

export function integrity(db: LabDb): string {
  return db.raw.pragma('integrity_check', { simple: true }) as string;
}
