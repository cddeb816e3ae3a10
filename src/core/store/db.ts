/**
 * Opening an SRPO Lab database: pragmas, schema migrations, refusal of files this code must not
 * touch, and a per-connection cache of prepared statements. Not the schema (migrations/) and not
 * the queries (runs.ts, steps.ts, series.ts, traces.ts, results.ts). This is one of the few core
 * files that touch a native module (better-sqlite3).
 *
 * Pragmas, and why:
 * - journal_mode = WAL: readers (the host, the UI) never block the engine's writes and see only
 *   committed steps.
 * - synchronous = NORMAL: in WAL mode a commit is durable against a crash of the process
 *   (kill -9, out of memory, a CUDA abort) because the WAL is in the OS page cache; only a power
 *   loss or OS crash can lose the last few commits, and even then the database stays consistent
 *   (never half a step). FULL would fsync the WAL on every commit, a few ms per training step
 *   for no gain against the failures the lab actually sees.
 * - foreign_keys = ON: deleting a run cascades to everything it owns.
 * - busy_timeout = 5000 ms: a reader and the writer contending for the WAL wait instead of
 *   failing with SQLITE_BUSY.
 *
 * Tests: test/core/store/db.test.ts (migrating from empty, newer user_version refused, a file that
 * is not SQLite refused, read-only opens).
 */
import Database from 'better-sqlite3';
import { LabStoreError } from './errors';
import { MIGRATIONS, SCHEMA_VERSION } from './migrations';

/** `PRAGMA application_id` of an SRPO Lab database: 'SRPO' in ASCII. */
export const APPLICATION_ID = 0x5352504f;
const BUSY_TIMEOUT_MS = 5000;

export interface OpenOptions {
  /** Open read-only (the host and report builders); the database must already be migrated. */
  readonly?: boolean;
}

/** One connection to a lab database, with its prepared statements. */
export class LabDb {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(
    readonly raw: Database.Database,
    readonly path: string,
  ) {}

  get readonly(): boolean {
    return this.raw.readonly;
  }

  /** The statement for `sql`, prepared on first use and reused for the connection's lifetime. */
  stmt<P extends unknown[] | {} = unknown[], R = unknown>(sql: string): Database.Statement<P, R> {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.raw.prepare(sql);
      this.statements.set(sql, s);
    }
    return s as unknown as Database.Statement<P, R>;
  }

  close(): void {
    this.statements.clear();
    if (this.raw.open) this.raw.close();
  }
}

/**
 * Opens (creating if needed, unless read-only) and migrates the database at `path` (':memory:'
 * allowed). Throws LabStoreError naming the file for: not a SQLite file, a foreign SQLite
 * database, a database newer than this code, a read-only open of an unmigrated database.
 */
export function openLabDb(path: string, options: OpenOptions = {}): LabDb {
  const readonly = options.readonly ?? false;
  let raw: Database.Database;
  try {
    raw = new Database(path, { readonly, fileMustExist: readonly });
  } catch (e) {
    throw new LabStoreError('open_failed', `cannot open lab database ${path}: ${(e as Error).message}`);
  }
  try {
    configure(raw, readonly, path);
    migrate(raw, readonly, path);
  } catch (e) {
    raw.close();
    throw e;
  }
  return new LabDb(raw, path);
}

function configure(raw: Database.Database, readonly: boolean, path: string): void {
  try {
    // The first statement reads the file header: a non-SQLite file fails here.
    raw.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    raw.pragma('schema_version', { simple: true });
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
      throw new LabStoreError('not_a_database', `${path} is not an SRPO Lab database: not a SQLite file (${(e as Error).message})`);
    }
    throw e;
  }
  if (!readonly) {
    raw.pragma('journal_mode = WAL'); // ':memory:' stays 'memory', which is fine for tests
    raw.pragma('synchronous = NORMAL');
  }
  raw.pragma('foreign_keys = ON');
}

function migrate(raw: Database.Database, readonly: boolean, path: string): void {
  const version = raw.pragma('user_version', { simple: true }) as number;
  const appId = raw.pragma('application_id', { simple: true }) as number;
  if (appId !== 0 && appId !== APPLICATION_ID) {
    throw new LabStoreError('foreign_database', `${path} is a SQLite database of another application (application_id ${appId}), not an SRPO Lab database`);
  }
  if (version > SCHEMA_VERSION) {
    throw new LabStoreError(
      'newer_version',
      `${path} has schema version ${version}, newer than this SRPO Lab understands (${SCHEMA_VERSION}); ` +
        'open it with a newer SRPO Lab (refusing to read or write it)',
    );
  }
  if (version === 0) {
    const tables = raw.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'").pluck().get() as number;
    if (tables > 0) {
      throw new LabStoreError('foreign_database', `${path} is a SQLite database with ${tables} tables but no SRPO Lab schema version; not an SRPO Lab database`);
    }
  }
  if (version === SCHEMA_VERSION) return;
  if (readonly) {
    throw new LabStoreError(
      'needs_migration',
      `${path} has schema version ${version} and needs migrating to ${SCHEMA_VERSION}; open it writable once (the engine or the host does)`,
    );
  }
  for (const m of MIGRATIONS.slice(version)) {
    // Each migration and its user_version bump commit together: a crash mid-migration leaves
    // the previous version intact.
    raw.transaction(() => {
      m.up(raw);
      if (m.version === 1) raw.pragma(`application_id = ${APPLICATION_ID}`);
      raw.pragma(`user_version = ${m.version}`);
    }).immediate();
  }
}
