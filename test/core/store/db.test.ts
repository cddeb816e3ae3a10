/**
 * Opening databases: migrating from empty, the pragmas the lab relies on, and refusing what it
 * must not touch (a newer schema, a file that is not SQLite, another application's database, a
 * read-only open of an unmigrated file).
 */
import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { APPLICATION_ID, LabStore, LabStoreError, MIGRATIONS, SCHEMA_VERSION, openLabDb } from '../../../src/core/store';
import { integrity, tempDbPath } from './helpers';

function errorOf(fn: () => unknown): LabStoreError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(LabStoreError);
    return e as LabStoreError;
  }
  throw new Error('expected an error');
}

describe('openLabDb', () => {
  it('migrates an empty file to the latest version, with STRICT tables', () => {
    const path = tempDbPath();
    const db = openLabDb(path);
    expect(SCHEMA_VERSION).toBe(MIGRATIONS.length);
    expect(db.raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(db.raw.pragma('application_id', { simple: true })).toBe(APPLICATION_ID);
    const tables = db.raw.prepare("SELECT name, strict FROM pragma_table_list WHERE schema = 'main' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as {
      name: string;
      strict: number;
    }[];
    expect(tables.map((t) => t.name)).toEqual([
      'checkpoints',
      'episodes',
      'evaluations',
      'events',
      'members',
      'metric_blocks',
      'metrics',
      'run_leases',
      'runs',
      'steps',
      'suite_runs',
      'suites',
    ]);
    expect(tables.every((t) => t.strict === 1)).toBe(true);
    expect(integrity(db)).toBe('ok');
    db.close();
  });

  it('sets WAL, synchronous NORMAL, foreign keys and a busy timeout', () => {
    const db = openLabDb(tempDbPath());
    expect(db.raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.raw.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    expect(db.raw.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.raw.pragma('busy_timeout', { simple: true })).toBe(5000);
    db.close();
  });

  it('reopens a migrated database without migrating again, keeping its data', () => {
    const path = tempDbPath();
    const a = LabStore.open(path);
    const id = a.createRun({ name: 'kept', config: {}, seed: 1, workflow: 'math', algorithm: 'srpo' });
    a.close();
    const b = LabStore.open(path);
    expect(b.getRun(id)?.name).toBe('kept');
    b.close();
  });

  it('works in memory', () => {
    const s = LabStore.open(':memory:');
    expect(s.listRuns()).toEqual([]);
    s.close();
  });

  it('refuses a database with a newer user_version, naming the file and both versions', () => {
    const path = tempDbPath('future.db');
    openLabDb(path).close();
    const raw = new Database(path);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 3}`);
    raw.close();
    const e = errorOf(() => openLabDb(path));
    expect(e.code).toBe('newer_version');
    expect(e.message).toContain(path);
    expect(e.message).toContain(`schema version ${SCHEMA_VERSION + 3}`);
    expect(e.message).toContain(`(${SCHEMA_VERSION})`);
    expect(errorOf(() => openLabDb(path, { readonly: true })).code).toBe('newer_version');
    // Refusing must not have touched it.
    const check = new Database(path, { readonly: true });
    expect(check.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION + 3);
    check.close();
  });

  it('refuses a file that is not a SQLite database, naming the file', () => {
    const path = tempDbPath('notes.db');
    writeFileSync(path, 'these are my notes, not a database\n'.repeat(200));
    const e = errorOf(() => openLabDb(path));
    expect(e.code).toBe('not_a_database');
    expect(e.message).toContain(path);
    expect(e.message).toMatch(/not a SQLite file/);
  });

  it("refuses another application's SQLite database", () => {
    const path = tempDbPath('other.db');
    const raw = new Database(path);
    raw.exec('CREATE TABLE contacts (name TEXT)');
    raw.close();
    const e = errorOf(() => openLabDb(path));
    expect(e.code).toBe('foreign_database');
    expect(e.message).toContain(path);
  });

  it('opens read-only: reads work, writes fail, an unmigrated or missing file is refused', () => {
    const path = tempDbPath();
    const w = LabStore.open(path);
    const id = w.createRun({ name: 'r', config: {}, seed: 1, workflow: 'math', algorithm: 'srpo' });
    const r = LabStore.open(path, { readonly: true });
    expect(r.getRun(id)?.name).toBe('r');
    expect(() => r.createRun({ name: 'x', config: {}, seed: 1, workflow: 'math', algorithm: 'srpo' })).toThrow(/readonly/);
    r.close();
    w.close();

    const empty = tempDbPath('empty.db');
    new Database(empty).close();
    expect(errorOf(() => openLabDb(empty, { readonly: true })).code).toBe('empty_file');
    const older = tempDbPath('v1.db');
    const raw = new Database(older);
    raw.transaction(() => {
      MIGRATIONS[0].up(raw);
      raw.pragma(`application_id = ${APPLICATION_ID}`);
      raw.pragma('user_version = 1');
    })();
    raw.close();
    expect(errorOf(() => openLabDb(older, { readonly: true })).code).toBe('needs_migration');
    expect(errorOf(() => openLabDb(tempDbPath('missing.db'), { readonly: true })).code).toBe('open_failed');
  });

  it('migrates a version-1 database to the latest, keeping its rows; old members read back with logpCur null', () => {
    const path = tempDbPath('v1.db');
    const raw = new Database(path);
    raw.transaction(() => {
      MIGRATIONS[0].up(raw);
      raw.pragma(`application_id = ${APPLICATION_ID}`);
      raw.pragma('user_version = 1');
    })();
    raw.exec(`
      INSERT INTO runs (id, name, config, status, seed, workflow, algorithm, created_at) VALUES (1, 'old', '{}', 'completed', 1, 'math', 'srpo', 0);
      INSERT INTO steps (run_id, step, wall_time, tokens) VALUES (1, 0, 0, 1);
      INSERT INTO episodes (id, run_id, step, key, split, task_id, benchmark, rollout, reward, correct, generated_tokens, calls, tool_calls, latency_ms)
        VALUES (1, 1, 0, 's0/t0', 'train', 't0', 'gsm8k', 0, 1, 1, 2, 1, 0, 1);
      INSERT INTO events (id, episode_id, run_id, step, key, seq, kind, state_id, group_key, expected_k, member_count, invalid_members, complete, reward)
        VALUES (1, 1, 1, 0, 's0/t0/e0', 0, 'solve', 'st', 'g', 1, 1, 0, 1, 1);
      INSERT INTO members (event_id, run_id, step, member_index, role, policy_id, policy_version, valid, log_ratio, prompt_len, output_len,
        prompt, output, prompt_tokens, output_tokens, logp_old, mask)
        VALUES (1, 1, 0, 0, 'solver', 'shared', 0, 1, 0.01, 1, 2, 'p', 'o', x'01000000', x'0200000003000000', x'0000803f00000040', x'0101');
      UPDATE runs SET last_step = 0 WHERE id = 1;
    `);
    raw.close();

    const s = LabStore.open(path);
    expect(s.db.raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(2);
    const cols = (s.db.raw.prepare("SELECT name FROM pragma_table_info('members')").all() as { name: string }[]).map((c) => c.name);
    expect(cols).toContain('logp_cur');
    const m = s.getEvent(1)!.members[0];
    expect(m.logRatio).toBeCloseTo(0.01);
    expect(Array.from(m.tokens!.outputTokens)).toEqual([2, 3]);
    expect(Array.from(m.tokens!.logpOld)).toEqual([1, 2]);
    expect(m.tokens!.logpCur).toBeNull();
    expect(integrity(s.db)).toBe('ok');
    s.close();
  });

  it('prepares each statement once per connection', () => {
    const db = openLabDb(':memory:');
    const a = db.stmt('SELECT 1');
    expect(db.stmt('SELECT 1')).toBe(a);
    db.close();
  });
});
