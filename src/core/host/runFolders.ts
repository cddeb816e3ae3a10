/**
 * Moving run folders from the old shared layout (`<dir>/runs/<id>/`, one for every database of
 * the folder) to the one that belongs to one database (`<dir>/<db file name>.runs/<id>/`,
 * paths.ts), once, where it is unambiguous which database they belong to, and saying what was
 * done or why nothing was. Called by every host that opens a lab for writing (the CLI's train and
 * resume, LabService for serve and the desktop app); read commands move nothing.
 *
 * Unambiguous means: the database is open writable; no other lab database is in the folder (a
 * file with the lab's application_id in its header, or a SQLite file with a -wal beside it whose
 * header may not carry the id yet); every numbered folder under runs/ is a run of this database;
 * none of them exists in the new place already. Then each `runs/<id>` is renamed to
 * `<db>.runs/<id>` and the run's checkpoint rows are rewritten, the rename inside the rows'
 * transaction, so a failed rename changes nothing. Otherwise everything is left where it is and
 * the message says why and what to move by hand. A rename that happened while its transaction
 * never committed (a crash between the two) is repaired at the next open: rows that still point
 * into runs/<id> whose folder is gone and whose new folder exists are rewritten.
 *
 * Not here: the layout itself (paths.ts). Touches the file system. Tested by
 * test/core/host/runFolders.test.ts.
 */
import { existsSync, mkdirSync, openSync, readdirSync, readSync, closeSync, renameSync, rmdirSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { APPLICATION_ID, type LabStore } from '../store';
import { legacyRunsRootFor, runsRootFor } from './paths';

export interface RunFolderReport {
  /** Run ids whose folder was moved from runs/ now. */
  moved: number[];
  /** Whether a runs/ folder with run folders was left where it is (see message). */
  left: boolean;
  /** What was done or why not, for a log line; null when there was nothing to do. */
  message: string | null;
}

const NOTHING: RunFolderReport = { moved: [], left: false, message: null };
const SQLITE_MAGIC = 'SQLite format 3\0';

export function adoptLegacyRunFolders(store: LabStore, dbPath: string): RunFolderReport {
  if (dbPath === ':memory:') return NOTHING;
  const legacy = legacyRunsRootFor(dbPath);
  const root = runsRootFor(dbPath);
  const runIds = new Set(store.listRuns().map((r) => r.id));
  if (!store.readonly) repairInterrupted(store, legacy, root, runIds);

  const ids = numberedFolders(legacy);
  if (ids.length === 0) return NOTHING;
  const name = basename(dbPath);
  const leave = (why: string): RunFolderReport => ({
    moved: [],
    left: true,
    message: `run folders in ${legacy} left where they are: ${why}. Runs of ${name} now keep their files in ${root}; move each runs/<id> into the <database file>.runs folder of the database it belongs to`,
  });
  if (store.readonly) return leave(`${name} is open read-only`);
  const others = otherLabDatabases(dirname(resolve(dbPath)), resolve(dbPath));
  if (others.length > 0) return leave(`the folder holds other lab databases too (${others.join(', ')}), so they may belong to any of them`);
  const foreign = ids.filter((id) => !runIds.has(id));
  if (foreign.length > 0) return leave(`runs/${foreign.join(', runs/')} ${foreign.length === 1 ? 'is not a run' : 'are not runs'} of ${name}`);
  const clash = ids.filter((id) => existsSync(join(root, String(id))));
  if (clash.length > 0) return leave(`${clash.map((id) => join(root, String(id))).join(', ')} already exist${clash.length === 1 ? 's' : ''}`);

  mkdirSync(root, { recursive: true });
  const moved: number[] = [];
  for (const id of ids) {
    const from = join(legacy, String(id));
    const to = join(root, String(id));
    try {
      store.relocateRunFiles(id, from, to, () => renameSync(from, to));
    } catch (err) {
      // The lab still opens: this run's folder and rows stay as they were (one transaction).
      const done = moved.length ? `moved runs ${moved.join(', ')} to ${root}; ` : '';
      return {
        moved,
        left: true,
        message: `${done}could not move ${from} to ${to} (${(err as Error).message}); it and the folders after it are left where they are`,
      };
    }
    moved.push(id);
  }
  try {
    if (readdirSync(legacy).length === 0) rmdirSync(legacy);
  } catch {
    // A runs/ folder left empty or holding other files is harmless.
  }
  return {
    moved,
    left: false,
    message: `moved the folder${moved.length === 1 ? '' : 's'} of run${moved.length === 1 ? '' : 's'} ${moved.join(', ')} from ${legacy} to ${root} (run folders now belong to one database: ${name})`,
  };
}

/** Numbered sub-folders of `dir` (run ids), ascending; none when `dir` does not exist. */
function numberedFolders(dir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => /^[1-9]\d*$/.test(n) && statSync(join(dir, n)).isDirectory())
    .map(Number)
    .sort((a, b) => a - b);
}

/** Checkpoint rows left pointing into runs/<id> by a rename whose transaction did not commit. */
function repairInterrupted(store: LabStore, legacy: string, root: string, runIds: Set<number>): void {
  for (const id of runIds) {
    const from = join(legacy, String(id));
    const to = join(root, String(id));
    if (existsSync(from) || !existsSync(to)) continue;
    if (store.checkpoints(id).some((c) => resolve(dirname(resolve(store.db.path)), c.path).startsWith(from + sep))) store.relocateRunFiles(id, from, to);
  }
}

/** Files of `dir` other than `self` that are, or may be, lab databases (see the header). */
function otherLabDatabases(dir: string, self: string): string[] {
  const out: string[] = [];
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (p === self || /-(wal|shm|journal)$/.test(n)) continue;
    let header: Buffer;
    try {
      if (!statSync(p).isFile()) continue;
      header = readHeader(p);
    } catch {
      continue;
    }
    const walBeside = existsSync(`${p}-wal`);
    if (header.length === 0) {
      if (walBeside) out.push(n); // created, its header still in the WAL
      continue;
    }
    if (header.length < 72 || header.toString('latin1', 0, 16) !== SQLITE_MAGIC) continue;
    const appId = header.readUInt32BE(68);
    if (appId === APPLICATION_ID || (appId === 0 && walBeside)) out.push(n);
  }
  return out;
}

function readHeader(path: string): Buffer {
  const buf = Buffer.alloc(100);
  const fd = openSync(path, 'r');
  try {
    return buf.subarray(0, readSync(fd, buf, 0, 100, 0));
  } finally {
    closeSync(fd);
  }
}
