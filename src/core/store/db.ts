/**
 * Opening an SRPO Lab database: refusal of files this code must not touch, pragmas, schema
 * migrations, and a per-connection cache of prepared statements. Not the schema (migrations/) and
 * not the queries (runs.ts, steps.ts, series.ts, traces.ts, results.ts). This is one of the few
 * core files that touch a native module (better-sqlite3).
 *
 * Order, and why: every check that can refuse a file (not SQLite, another application's
 * application_id, a user_version newer than this code, an empty file the caller may not turn into
 * a database) runs first, on the header bytes and then through a read-only connection; only a
 * file that passed them all is opened for writing, so a refused file keeps every byte, its
 * journal mode included. A missing file is
 * created only by the accesses that create databases (OpenAccess); read commands never create one,
 * and a read-only file or folder gives a read-only connection instead of an error.
 *
 * Pragmas, and why:
 * - journal_mode = WAL: readers (the host, the UI) never block the engine's writes and see only
 *   committed steps.
 * - synchronous = NORMAL: in WAL mode a commit is durable against a crash of the process
 *   (kill -9, out of memory, a CUDA abort) because the WAL is in the OS page cache; only a power
 *   loss or OS crash can lose the last few commits, and even then the database stays consistent
 *   (never half a step). FULL would fsync the WAL on every commit, a few ms per training step
 *   for no gain against the failures the lab actually sees.
 * - foreign_keys = ON: deleting a run cascades to everything it owns (OFF only while migrations
 *   run, see migrate).
 * - busy_timeout = 5000 ms: a reader and the writer contending for the WAL wait instead of
 *   failing with SQLITE_BUSY.
 *
 * Tests: test/core/store/db.test.ts (migrating from empty, newer user_version refused, a file that
 * is not SQLite refused, read-only opens), refusals.test.ts (refused files unchanged byte for
 * byte; empty and missing files per access), readonly.test.ts (read-only file and folder).
 */
import Database from 'better-sqlite3';
import { accessSync, closeSync, constants, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { LabStoreError } from './errors';
import { MIGRATIONS, SCHEMA_VERSION } from './migrations';

/** `PRAGMA application_id` of an SRPO Lab database: 'SRPO' in ASCII. */
export const APPLICATION_ID = 0x5352504f;
const BUSY_TIMEOUT_MS = 5000;

export interface OpenOptions {
  /** What the open may do to the file (OpenAccess below). Default 'create', or 'readonly' when `readonly` is set. */
  access?: OpenAccess;
  /** Shorthand for access 'readonly': the database must already be migrated; nothing is written. */
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
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- better-sqlite3's own bound on Statement's parameters.
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
 * How an open may touch the file; each caller picks the narrowest that does its job. Every check
 * that can refuse a file (not SQLite, another application's, newer than this code, not yet a lab
 * database) runs before any writable connection is opened, so a refused file is left
 * byte-for-byte as it was (journal mode included).
 */
export type OpenAccess =
  /** Read-write; a missing or empty (0-byte) file becomes a new lab database. train, creating runs, tests. */
  | 'create'
  /** Read-write; the file must already be a lab database. resume, the engine. */
  | 'write'
  /**
   * The file must already be a lab database; read-write (so an older schema is migrated) when the
   * file and its folder are writable, read-only otherwise. A WAL database in a read-only folder
   * (where SQLite cannot create its -shm file) is read from an in-memory snapshot taken at the
   * open (nobody can commit to it there anyway). runs, show, export, eval.
   */
  | 'read'
  /** 'create' when the file (or, for a new one, its folder) is writable, 'read' otherwise. serve, the desktop app. */
  | 'createOrRead'
  /** Read-only, never writes, even where it could: an older schema is refused (needs_migration). */
  | 'readonly';

interface AccessRule {
  /** A missing or empty file may become a new lab database. */
  mayCreate: boolean;
  /** The connection: read-write, read-only, or read-write only where the file and its folder allow. */
  connection: 'readwrite' | 'readonly' | 'readwriteIfWritable';
}

const ACCESS_RULES = {
  create: { mayCreate: true, connection: 'readwrite' },
  write: { mayCreate: false, connection: 'readwrite' },
  read: { mayCreate: false, connection: 'readwriteIfWritable' },
  createOrRead: { mayCreate: true, connection: 'readwriteIfWritable' },
  readonly: { mayCreate: false, connection: 'readonly' },
} satisfies Record<OpenAccess, AccessRule>;

/** What the read-only inspection found in the file. */
interface Found {
  version: number;
  appId: number;
  tables: number;
}

/**
 * Opens (and migrates, as `access` allows) the lab database at `path` (':memory:' allowed: always
 * a fresh read-write database). Throws LabStoreError naming the file for: a missing or empty file
 * the access may not create, not a SQLite file, a foreign SQLite database, a database newer than
 * this code, an older one that cannot be migrated (read-only), and any other failure to open.
 */
export function openLabDb(path: string, options: OpenOptions = {}): LabDb {
  const access: OpenAccess = options.access ?? (options.readonly ? 'readonly' : 'create');
  if (path === ':memory:') {
    const raw = new Database(':memory:');
    try {
      setPragmas(raw, true);
      migrate(raw, inspect(raw, path), path);
    } catch (e) {
      raw.close();
      throw named(e, path);
    }
    return new LabDb(raw, path);
  }
  try {
    return openFile(path, ACCESS_RULES[access]);
  } catch (e) {
    throw named(e, path);
  }
}

function openFile(path: string, rule: AccessRule): LabDb {
  const state = fileState(path);
  if (state !== 'present' && !rule.mayCreate) throw refusalOf(state, path);
  const writable = isWritable(path, state);
  const readwrite = rule.connection === 'readwrite' || (rule.connection === 'readwriteIfWritable' && writable);
  if (!readwrite && state !== 'present') throw refusalOf(state, path, 'and its folder is not writable, so no lab database can be created there');

  // 1. Inspect on a read-only connection: nothing below writes before every refusal had its chance.
  let found: Found = { version: 0, appId: 0, tables: 0 };
  let reader: Database.Database | null = null;
  if (state === 'present') {
    refuseForeignOrNewer(headerOf(path), path); // before SQLite opens it: not even a -shm beside a refused file
    reader = openReadonly(path);
    try {
      found = inspect(reader, path);
      refuse(found, path, rule);
    } catch (e) {
      reader.close();
      throw e;
    }
  }

  // 2. Read-write: the pragmas that write (WAL) and the migrations, only now.
  if (readwrite) {
    reader?.close();
    if (!writable) {
      throw new LabStoreError(
        'read_only',
        `${path} is read-only (the file or its folder): this command writes to it; the read commands (runs, show, export, eval) still open it`,
      );
    }
    return new LabDb(openWritable(path, state, rule), path);
  }
  if (found.version < SCHEMA_VERSION) {
    reader!.close();
    throw new LabStoreError(
      'needs_migration',
      `${path} has schema version ${found.version} and needs migrating to ${SCHEMA_VERSION}, but it is open read-only ` +
        '(the file or its folder is read-only, or a read-only open was asked for); open it once writable (any lab command does where it may write)',
    );
  }
  setPragmas(reader!, false);
  return new LabDb(reader!, path);
}

/** A writable connection with the pragmas set and the schema migrated; the checks run again first (reads only). */
function openWritable(path: string, state: FileState, rule: AccessRule): Database.Database {
  const raw = new Database(path, { fileMustExist: state === 'present' });
  try {
    const found = inspect(raw, path);
    refuse(found, path, rule);
    setPragmas(raw, true);
    migrate(raw, found, path);
  } catch (e) {
    raw.close();
    throw e;
  }
  return raw;
}

type FileState = 'missing' | 'empty' | 'present';

function fileState(path: string): FileState {
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw e;
  }
  if (st.isDirectory()) throw new LabStoreError('open_failed', `${path} is a directory, not a lab database file`);
  return st.size === 0 ? 'empty' : 'present';
}

function refusalOf(state: FileState, path: string, why = ''): LabStoreError {
  return state === 'missing'
    ? new LabStoreError('open_failed', `no lab database at ${path}${why ? ` ${why}` : ' (this command does not create one)'}`)
    : new LabStoreError(
        'empty_file',
        `${path} is an empty file, not a lab database${why ? ` ${why}` : ' (only a command that creates databases, such as train, makes one of it)'}`,
      );
}

/** Whether SQLite could write the file and its WAL/-shm (which live in its folder). */
function isWritable(path: string, state: FileState): boolean {
  try {
    accessSync(dirname(resolve(path)), constants.W_OK);
    if (state !== 'missing') accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * A read-only connection. In a read-only folder SQLite cannot create the -shm file a WAL
 * database needs, so such a file is read from an in-memory copy (its header switched to the
 * rollback journal, which is all a copy needs); refused when a -wal file holds commits the copy
 * would miss.
 */
function openReadonly(path: string): Database.Database {
  const raw = new Database(path, { readonly: true, fileMustExist: true });
  try {
    raw.pragma('schema_version', { simple: true });
    return raw;
  } catch (e) {
    raw.close();
    const code = (e as { code?: string }).code;
    if (code !== 'SQLITE_READONLY_DIRECTORY' && code !== 'SQLITE_CANTOPEN') throw asNotADatabase(e, path);
  }
  const wal = `${path}-wal`;
  if (existsSync(wal) && statSync(wal).size > 0) {
    throw new LabStoreError(
      'open_failed',
      `${path} is in a read-only folder and ${wal} holds commits not yet in the file; open it once where its folder is writable`,
    );
  }
  const copy = readFileSync(path);
  if (copy.length >= 20 && copy[18] === 2 && copy[19] === 2) copy[18] = copy[19] = 1; // WAL -> rollback journal, in the copy only
  return new Database(copy, { readonly: true });
}

/** Reads what the refusals need; a non-SQLite file fails here. Reads only. */
function inspect(raw: Database.Database, path: string): Found {
  try {
    raw.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    raw.pragma('schema_version', { simple: true });
    return {
      version: raw.pragma('user_version', { simple: true }) as number,
      appId: raw.pragma('application_id', { simple: true }) as number,
      tables: raw.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'").pluck().get() as number,
    };
  } catch (e) {
    throw asNotADatabase(e, path);
  }
}

function asNotADatabase(e: unknown, path: string): unknown {
  const code = (e as { code?: string }).code;
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
    return new LabStoreError('not_a_database', `${path} is not an SRPO Lab database: not a SQLite file (${(e as Error).message})`);
  }
  return e;
}

/**
 * The header fields the refusals need (https://sqlite.org/fileformat.html#the_database_header),
 * read as plain bytes. In WAL mode a newer header may sit in the -wal file; the inspection
 * through SQLite afterwards sees that one.
 */
function headerOf(path: string): Pick<Found, 'version' | 'appId'> {
  const header = Buffer.alloc(100);
  const fd = openSync(path, 'r');
  let n: number;
  try {
    n = readSync(fd, header, 0, 100, 0);
  } finally {
    closeSync(fd);
  }
  if (n < 100 || header.toString('latin1', 0, 16) !== 'SQLite format 3\0') {
    throw new LabStoreError('not_a_database', `${path} is not an SRPO Lab database: not a SQLite file (no SQLite header)`);
  }
  return { version: header.readUInt32BE(60), appId: header.readUInt32BE(68) };
}

function refuseForeignOrNewer({ version, appId }: Pick<Found, 'version' | 'appId'>, path: string): void {
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
}

function refuse(found: Found, path: string, rule: AccessRule): void {
  refuseForeignOrNewer(found, path);
  const { version, tables } = found;
  if (version === 0 && tables > 0) {
    throw new LabStoreError('foreign_database', `${path} is a SQLite database with ${tables} tables but no SRPO Lab schema version; not an SRPO Lab database`);
  }
  if (version === 0 && !rule.mayCreate) {
    throw new LabStoreError(
      'empty_file',
      `${path} is an empty SQLite database, not yet a lab database (only a command that creates databases, such as train, makes one of it)`,
    );
  }
}

function setPragmas(raw: Database.Database, readwrite: boolean): void {
  raw.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  if (readwrite) {
    raw.pragma('journal_mode = WAL'); // ':memory:' stays 'memory', which is fine for tests
    raw.pragma('synchronous = NORMAL');
  }
  raw.pragma('foreign_keys = ON');
}

/**
 * Runs the missing migrations. Foreign keys are off while they run (SQLite's procedure for
 * rebuilding a table, which migration 3 does: otherwise dropping the old `runs` would cascade to
 * every row of every run) and each migration's transaction checks them before it commits.
 */
function migrate(raw: Database.Database, found: Found, path: string): void {
  if (found.version === SCHEMA_VERSION) return;
  raw.pragma('foreign_keys = OFF');
  try {
    for (const m of MIGRATIONS.slice(found.version)) {
      // Each migration and its user_version bump commit together: a crash mid-migration leaves
      // the previous version intact.
      raw
        .transaction(() => {
          m.up(raw);
          const broken = raw.pragma('foreign_key_check') as unknown[];
          if (broken.length > 0)
            throw new LabStoreError('open_failed', `${path}: migration ${m.name} would leave ${broken.length} rows with a dangling foreign key; not applied`);
          if (m.version === 1) raw.pragma(`application_id = ${APPLICATION_ID}`);
          raw.pragma(`user_version = ${m.version}`);
        })
        .immediate();
    }
  } finally {
    raw.pragma('foreign_keys = ON');
  }
}

/** Any error of an open, as a LabStoreError whose message names the file. */
function named(e: unknown, path: string): LabStoreError {
  if (e instanceof LabStoreError) return e.message.includes(path) ? e : new LabStoreError(e.code, `${path}: ${e.message}`);
  const code = (e as { code?: string }).code;
  const why = code === 'SQLITE_READONLY' || code === 'SQLITE_READONLY_DIRECTORY' ? ' (the file or its folder is read-only)' : '';
  return new LabStoreError('open_failed', `cannot open lab database ${path}: ${(e as Error)?.message ?? String(e)}${why}`);
}
