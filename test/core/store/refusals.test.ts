/**
 * Refused databases are left untouched: every check that can refuse a file (another
 * application's application_id, tables without a lab schema version, a newer user_version, not a
 * SQLite file, an empty file given to a command that does not create databases) runs before
 * anything writes to it. Each refused file is compared byte for byte (SHA-256), its journal mode
 * and its folder's listing (no -wal / -shm left behind) before and after, for every open access.
 * Read commands never create a missing file or turn an empty one into a lab database.
 */
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/commands';
import type { CliIO } from '../../../src/cli/io';
import { LabStore, LabStoreError, SCHEMA_VERSION, openLabDb, type OpenOptions } from '../../../src/core/store';
import { tempDbPath } from './helpers';

const ACCESSES: NonNullable<OpenOptions['access']>[] = ['create', 'write', 'read', 'createOrRead', 'readonly'];

interface Snapshot {
  sha: string;
  size: number;
  journalMode: string;
  folder: string[];
}

function snapshot(path: string): Snapshot {
  const bytes = readFileSync(path);
  // Bytes 18 and 19 of a SQLite header are 2 in WAL mode, 1 for a rollback journal.
  const journalMode = bytes.length >= 20 && bytes.subarray(0, 15).toString('latin1') === 'SQLite format 3' ? (bytes[18] === 2 ? 'wal' : 'rollback') : 'none';
  return { sha: createHash('sha256').update(bytes).digest('hex'), size: bytes.length, journalMode, folder: readdirSync(dirname(path)).sort() };
}

function refusalOf(fn: () => unknown): LabStoreError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(LabStoreError);
    return e as LabStoreError;
  }
  throw new Error('expected the open to be refused');
}

/** Each kind of file the lab must refuse, written in rollback-journal mode so a switch to WAL would show. */
const REFUSED = {
  'another application (application_id)': {
    code: 'foreign_database',
    make: (path: string) => {
      const raw = new Database(path);
      raw.pragma('application_id = 1234');
      raw.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')");
      raw.close();
    },
  },
  'tables but no lab schema version': {
    code: 'foreign_database',
    make: (path: string) => {
      const raw = new Database(path);
      raw.exec("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('ada')");
      raw.close();
    },
  },
  'a newer lab schema version': {
    code: 'newer_version',
    make: (path: string) => {
      LabStore.open(path).close();
      const raw = new Database(path);
      raw.pragma('journal_mode = DELETE');
      raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
      raw.close();
    },
  },
  'not a SQLite file': {
    code: 'not_a_database',
    make: (path: string) => writeFileSync(path, 'my notes, not a database\n'.repeat(300)),
  },
} satisfies Record<string, { code: string; make: (path: string) => void }>;

describe('a refused database is left exactly as it was', () => {
  for (const [what, { code, make }] of Object.entries(REFUSED)) {
    it(`${what}: refused by every access, same bytes, same journal mode, nothing beside it`, () => {
      const path = tempDbPath('theirs.db');
      make(path);
      const before = snapshot(path);
      expect(before.journalMode).not.toBe('wal');
      for (const access of ACCESSES) {
        const e = refusalOf(() => openLabDb(path, { access }));
        expect(e.code, access).toBe(code);
        expect(e.message, access).toContain(path);
        expect(snapshot(path), access).toEqual(before);
      }
    });
  }

  it('the foreign database still reads back its own rows afterwards', () => {
    const path = tempDbPath('theirs.db');
    REFUSED['another application (application_id)'].make(path);
    for (const access of ACCESSES) refusalOf(() => openLabDb(path, { access }));
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('delete');
    expect(raw.pragma('application_id', { simple: true })).toBe(1234);
    expect(raw.prepare('SELECT body FROM notes').pluck().all()).toEqual(['mine']);
    raw.close();
  });
});

describe('empty and missing files', () => {
  it('an empty (0-byte) file is refused by every access that does not create databases, and stays empty', () => {
    const path = tempDbPath('empty.db');
    writeFileSync(path, '');
    for (const access of ['write', 'read', 'readonly'] as const) {
      const e = refusalOf(() => openLabDb(path, { access }));
      expect(e.code, access).toBe('empty_file');
      expect(e.message).toContain(path);
      expect(statSync(path).size, access).toBe(0);
    }
    expect(readdirSync(dirname(path))).toEqual(['empty.db']);
  });

  it('an empty file becomes a lab database where databases are created (train)', () => {
    const path = tempDbPath('empty.db');
    writeFileSync(path, '');
    const s = LabStore.open(path, { access: 'create' });
    expect(s.db.raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    s.close();
  });

  it('a missing file is not created by a read or write open', () => {
    const path = tempDbPath('missing.db');
    for (const access of ['write', 'read', 'readonly'] as const) {
      const e = refusalOf(() => openLabDb(path, { access }));
      expect(e.code).toBe('open_failed');
      expect(e.message).toContain(path);
      expect(existsSync(path), access).toBe(false);
    }
    expect(readdirSync(dirname(path))).toEqual([]);
  });
});

/** Runs one command line in-process (read commands start no engine). */
async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = {
    out: (l) => out.push(l),
    tty: null,
    launcher: {
      launch: () => {
        throw new Error('no engine in this test');
      },
    },
    onInterrupt: () => () => {},
  };
  const code = await runCli(argv, io, (l) => err.push(l));
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('read commands on an empty or missing file', () => {
  const READS = [['runs'], ['show', '1'], ['export', '1', '--format', 'json'], ['eval', '1']];

  for (const argv of READS) {
    it(`${argv[0]}: refuses a 0-byte file naming it, and leaves it 0 bytes`, async () => {
      const path = tempDbPath('empty.db');
      writeFileSync(path, '');
      const r = await cli([...argv, '--db', path]);
      expect(r.code).toBe(1);
      expect(r.err).toContain(path);
      expect(r.err).toMatch(/empty/);
      expect(statSync(path).size).toBe(0);
      expect(readdirSync(dirname(path))).toEqual(['empty.db']);
    });

    it(`${argv[0]}: does not create a missing file`, async () => {
      const path = tempDbPath('missing.db');
      const r = await cli([...argv, '--db', path]);
      expect(r.code).toBe(1);
      expect(r.err).toContain(path);
      expect(existsSync(path)).toBe(false);
    });
  }

  it('runs: refuses a foreign database and leaves it byte for byte', async () => {
    const path = tempDbPath('theirs.db');
    REFUSED['another application (application_id)'].make(path);
    const before = snapshot(path);
    const r = await cli(['runs', '--db', path]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(path);
    expect(snapshot(path)).toEqual(before);
  });
});
