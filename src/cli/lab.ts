/**
 * Helpers every run command shares: the `--db` path (default ./lab.db), opening the store for
 * reading (openLabForReading) or writing (openLab), finding a run by id, and number/time
 * formatting for tables. Tests: test/cli/train.test.ts, test/core/store/readonly.test.ts.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { adoptLegacyRunFolders } from '../core/host/runFolders';
import { LabStore, type RunRecord } from '../core/store';
import type { ParsedArgs } from './args';

export const DEFAULT_DB = './lab.db';

/**
 * How a user runs the lab's CLI, for hints (`resume with: … resume 2`): the installed `srpo-lab`
 * bin (package.json "bin", put on the PATH by `npm link` or a global install) when this process
 * was started through it, else `npm run lab --` (a clone's way: nothing on the PATH needed).
 */
export function labCommand(argv1: string | undefined = process.argv[1], lifecycle: string | undefined = process.env.npm_lifecycle_event): string {
  if (lifecycle === 'lab') return 'npm run lab --';
  return /(^|[\\/])srpo-lab(\.cjs)?$/.test(argv1 ?? '') ? 'srpo-lab' : 'npm run lab --';
}

export function dbPathOf(args: ParsedArgs): string {
  return resolve(args.options.db ?? DEFAULT_DB);
}

/**
 * Opens the lab database for a command that writes (train: `create`, resume): `create` false, it
 * must already be a lab database. Moves run folders of the old shared layout where that is
 * unambiguous (host/runFolders.ts) and tells `notice` what it did or why it did not.
 */
export function openLab(args: ParsedArgs, create: boolean, notice?: (line: string) => void): { store: LabStore; dbPath: string } {
  const dbPath = dbPathOf(args);
  if (!create && !existsSync(dbPath)) throw new Error(`no lab database at ${dbPath} (train a run first, or pass --db PATH)`);
  const store = LabStore.open(dbPath, { access: create ? 'create' : 'write' });
  try {
    const folders = adoptLegacyRunFolders(store, dbPath);
    if (folders.message) notice?.(folders.message);
  } catch (err) {
    store.close();
    throw err;
  }
  return { store, dbPath };
}

/**
 * Opens the lab database for a read command (runs, show, export, eval): it must exist and be a
 * lab database (never created, an empty file refused); read-only when the file or its folder is.
 */
export function openLabForReading(args: ParsedArgs): { store: LabStore; dbPath: string } {
  const dbPath = dbPathOf(args);
  if (!existsSync(dbPath)) throw new Error(`no lab database at ${dbPath} (train a run first, or pass --db PATH)`);
  return { store: LabStore.open(dbPath, { access: 'read' }), dbPath };
}

export function runArg(args: ParsedArgs, command: string): number {
  const v = args.positionals[0];
  const id = Number(v);
  if (v === undefined || !Number.isInteger(id) || id < 1) throw new Error(`${command} expects a run id (see: ${labCommand()} runs), got ${v ?? 'nothing'}`);
  return id;
}

export function getRunOrThrow(store: LabStore, runId: number, dbPath: string): RunRecord {
  const run = store.getRun(runId);
  if (!run) {
    const ids = store.listRuns().map((r) => r.id);
    throw new Error(`no run ${runId} in ${dbPath}; runs: ${ids.length ? ids.join(', ') : 'none'}`);
  }
  return run;
}

/** A number for a table: '-' for absent, 'NaN' kept visible. */
export function num(x: number | null | undefined, digits = 3): string {
  if (x === null || x === undefined) return '-';
  if (Number.isNaN(x)) return 'NaN';
  return Number.isInteger(x) && Math.abs(x) < 1e6 ? String(x) : x.toFixed(digits);
}

/** A rate or mean with a fixed number of decimals ('-' absent, NaN kept visible). */
export function fixed(x: number | null | undefined, digits = 3): string {
  if (x === null || x === undefined) return '-';
  return Number.isNaN(x) ? 'NaN' : x.toFixed(digits);
}

/** Local time as `YYYY-MM-DD HH:MM`. */
export function when(ms: number | null): string {
  if (ms === null) return '-';
  const d = new Date(ms);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

export function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '-';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** A plain text table: columns padded to their widest cell, numbers right-aligned. */
export function table(headers: string[], rows: string[][]): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => /^(-?[\d.]+(e[-+]?\d+)?|-|NaN|\d+\/\d+)$/.test(r[i] ?? '')));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}

/** Best value of a run's metric series (max), or null when the run has none. */
export function bestMetric(store: LabStore, runId: number, key: string): number | null {
  const values = store
    .metricSeries(runId, key)
    .map((p) => p.value)
    .filter((v) => Number.isFinite(v));
  return values.length ? Math.max(...values) : null;
}
