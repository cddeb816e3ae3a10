/**
 * The trace list by split (migration 6, events.split with events_by_split): the listing and count
 * the viewer sends seek the index instead of walking the run's events, they return the same rows
 * as the episodes' split says (training and evaluation events interleaved in one run, written
 * ahead of their step and inside it), and a version-5 database migrates keeping every row.
 */
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { APPLICATION_ID, LabStore, LabStoreError, MIGRATIONS, SCHEMA_VERSION, type EpisodeRecord, type EventFilter } from '../../../src/core/store';
import { makeStep, newRun, SMALL } from './fixtures/makeStep';
import { integrity, tempDbPath } from './helpers';

const SHAPE = { ...SMALL, episodes: 5, eventsPerEpisode: 4 };
const STEPS = 12;
const EVAL_STEPS = [0, 4, 8];

/** An evaluation's episodes: split 'eval', keys of their own (makeStep's with an `eval/` prefix). */
function evalEpisodes(step: number): EpisodeRecord[] {
  return makeStep(step, { ...SHAPE, episodes: 3 }, 5).episodes.map((ep) => ({
    ...ep,
    key: `eval/${ep.key}`,
    split: 'eval',
    events: ep.events.map((ev) => ({ ...ev, key: `eval/${ev.key}` })),
  }));
}

let path: string;
let s: LabStore;
let run: number;

beforeAll(() => {
  path = tempDbPath('v6.db');
  s = LabStore.open(path);
  run = s.createRun(newRun());
  const decoy = s.createRun(newRun('decoy'));
  for (let step = 0; step < STEPS; step++) {
    // As the trainer does: an evaluation step's eval episodes are written ahead of the step;
    // makeStep's own episodes are split 'train' but for every fifth one ('eval', inside the step).
    if (EVAL_STEPS.includes(step)) s.writeEvaluation(run, { step, wallTime: 0, metrics: { 'eval/acc': 0.5 }, episodes: evalEpisodes(step), tokens: true });
    s.writeStep(run, makeStep(step, SHAPE));
    s.writeStep(decoy, makeStep(step, SMALL, 9));
  }
});

/** The rows a filter must list, from the episodes' split (the only split before migration 6). */
function reference(db: Database.Database, runId: number, where: string): number[] {
  return db
    .prepare(`SELECT e.id FROM events e JOIN episodes p ON p.id = e.episode_id WHERE e.run_id = ? AND ${where} ORDER BY e.step, e.id`)
    .pluck()
    .all(runId) as number[];
}

function listIds(store: LabStore, runId: number, f: EventFilter, limit: number): number[] {
  const ids: number[] = [];
  let page = store.listEvents(runId, f, { limit });
  for (let guard = 0; ; guard++) {
    ids.push(...page.events.map((e) => e.id));
    if (!page.next) return ids;
    page = store.listEvents(runId, f, { limit, after: page.next });
    expect(guard).toBeLessThan(1000);
  }
}

const cases: [string, EventFilter, string][] = [
  ['eval', { split: 'eval' }, "p.split = 'eval'"],
  ['train', { split: 'train' }, "p.split = 'train'"],
  ['eval in a step range', { split: 'eval', fromStep: 3, toStep: 9 }, "p.split = 'eval' AND e.step BETWEEN 3 AND 9"],
  ['train, one kind, complete', { split: 'train', kind: 'verify', complete: true }, "p.split = 'train' AND e.kind = 'verify' AND e.complete = 1"],
  [
    'eval, one step, one kind (the group lookup)',
    { split: 'eval', fromStep: 4, toStep: 4, kind: 'solve', complete: true },
    "p.split = 'eval' AND e.step = 4 AND e.kind = 'solve' AND e.complete = 1",
  ],
];

describe('listing by split', () => {
  it('stores each event with its episode split, eval events written ahead of and inside their step', () => {
    const raw = s.db.raw;
    expect(raw.prepare('SELECT count(*) FROM events e JOIN episodes p ON p.id = e.episode_id WHERE e.split <> p.split').pluck().get()).toBe(0);
    const ahead = raw.prepare("SELECT count(*) FROM events WHERE run_id = ? AND split = 'eval' AND key LIKE 'eval/%'").pluck().get(run) as number;
    const inside = raw.prepare("SELECT count(*) FROM events WHERE run_id = ? AND split = 'eval' AND key NOT LIKE 'eval/%'").pluck().get(run) as number;
    expect(ahead).toBeGreaterThan(0);
    expect(inside).toBeGreaterThan(0);
  });

  for (const [name, f, where] of cases) {
    it(`lists and counts the rows the episodes' split gives: ${name}`, () => {
      const want = reference(s.db.raw, run, where);
      expect(want.length).toBeGreaterThan(0);
      for (const limit of [1, 7, 1000]) expect(listIds(s, run, f, limit)).toEqual(want);
      expect(s.countEvents(run, f)).toBe(want.length);
    });
  }

  it('the fixture interleaves the splits in (step, id) order, so a filter that ignored split would fail', () => {
    const evalIds = new Set(reference(s.db.raw, run, "p.split = 'eval'"));
    const all = listIds(s, run, {}, 1000);
    const changes = all.slice(1).filter((id, i) => evalIds.has(id) !== evalIds.has(all[i])).length;
    expect(changes).toBeGreaterThan(2 * EVAL_STEPS.length);
  });
});

describe('query plans of the split listing and count', () => {
  /** The plan of each statement `call` prepares (the store's own SQL text), its named parameters bound. */
  function plansOf(call: () => unknown): string[][] {
    const spy = vi.spyOn(s.db, 'stmt');
    try {
      call();
      return spy.mock.calls.map(([sql]) => {
        const params = Object.fromEntries([...sql.matchAll(/:(\w+)/g)].map(([, name]) => [name, name === 'split' ? 'eval' : name === 'kinds' ? '[]' : 1]));
        return (s.db.raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map((r) => r.detail);
      });
    } finally {
      spy.mockRestore();
    }
  }
  const after = { step: 3, id: 40 };

  for (const split of ['eval', 'train'] as const) {
    it(`pages split=${split} along events_by_split with no scan, no subquery and no sort`, () => {
      for (const page of [{ limit: 200 }, { limit: 200, after }]) {
        const plans = plansOf(() => s.listEvents(run, { split }, page));
        expect(plans).toHaveLength(1);
        const text = plans[0].join(' | ');
        expect(text).toMatch(/^SEARCH e USING INDEX events_by_split \(run_id=\? AND split=\?/);
        expect(text).not.toMatch(/SCAN|SUBQUERY|TEMP B-TREE/);
      }
    });

    it(`counts split=${split} on the index alone`, () => {
      const plans = plansOf(() => s.countEvents(run, { split }));
      expect(plans).toHaveLength(1);
      expect(plans[0]).toEqual(['SEARCH e USING COVERING INDEX events_by_split (run_id=? AND split=?)']);
    });
  }

  // Two terms on step (a range, or a bound and the cursor) are where SQLite's default estimates
  // tie events_by_split with events_by_step and would take the latter (traces.ts eventsTable).
  const stepBounded: [string, EventFilter, { limit: number; after?: typeof after }][] = [
    ['from a step, next page', { split: 'eval', fromStep: 2 }, { limit: 200, after }],
    ['a step range', { split: 'eval', fromStep: 3, toStep: 9 }, { limit: 200 }],
    ['a step range, next page', { split: 'train', fromStep: 3, toStep: 9 }, { limit: 200, after }],
    ['the group lookup (one step, one kind)', { split: 'eval', fromStep: 4, toStep: 4, kind: 'solve', complete: true }, { limit: 1000 }],
    ['several kinds and a role', { split: 'eval', kind: ['solve', 'verify'], role: 'solver' }, { limit: 200, after }],
  ];
  for (const [name, f, page] of stepBounded) {
    it(`seeks events_by_split with the step bounds in the seek: ${name}`, () => {
      const plans = plansOf(() => s.listEvents(run, f, page));
      expect(plans).toHaveLength(1);
      const text = plans[0].join(' | ');
      expect(text).toMatch(
        f.fromStep === undefined
          ? /^SEARCH e USING INDEX events_by_split \(run_id=\? AND split=\?/
          : /^SEARCH e USING INDEX events_by_split \(run_id=\? AND split=\? AND step>\?/,
      );
      expect(text).not.toMatch(/SCAN e|TEMP B-TREE/);
    });
  }

  it('leaves a list without a split on events_by_step', () => {
    const plans = plansOf(() => s.listEvents(run, { fromStep: 3, toStep: 9 }, { limit: 200, after }));
    expect(plans[0].join(' | ')).toMatch(/^SEARCH e USING INDEX events_by_step \(run_id=\? AND step>\? AND step<\?\)/);
  });
});

describe('migration 6 on a version-5 database', () => {
  const v5Tables = (db: Database.Database): string[] =>
    db
      .prepare("SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      .pluck()
      .all() as string[];
  /** Every row of a table as sorted JSON lines, without the columns named in `drop`. */
  function rowsOf(db: Database.Database, table: string, drop: string[] = []): string[] {
    return (db.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[])
      .map((r) => JSON.stringify(Object.entries(r).filter(([k]) => !drop.includes(k))))
      .sort();
  }

  /** A version-5 file holding the fixture's rows: the v5 schema, filled from the v6 file column by column. */
  function v5Copy(): string {
    const v5 = tempDbPath('v5.db');
    const raw = new Database(v5);
    raw.transaction(() => {
      for (const m of MIGRATIONS.slice(0, 5)) m.up(raw);
      raw.pragma(`application_id = ${APPLICATION_ID}`);
      raw.pragma('user_version = 5');
    })();
    raw.pragma('foreign_keys = OFF');
    raw.prepare('ATTACH DATABASE ? AS src').run(path);
    raw.transaction(() => {
      for (const t of v5Tables(raw)) {
        const cols = (raw.prepare(`SELECT name FROM pragma_table_info('${t}')`).pluck().all() as string[]).join(', ');
        raw.exec(`INSERT INTO main.${t} (${cols}) SELECT ${cols} FROM src.${t}`);
      }
    })();
    raw.exec('DETACH DATABASE src');
    raw.close();
    return v5;
  }

  it('keeps every row of every table, and sets each event split as the writer would have', () => {
    s.db.raw.pragma('wal_checkpoint(TRUNCATE)');
    const v5 = v5Copy();
    const old = new Database(v5, { readonly: true });
    expect(old.pragma('user_version', { simple: true })).toBe(5);
    expect(old.prepare("SELECT count(*) FROM pragma_table_info('events') WHERE name = 'split'").pluck().get()).toBe(0);
    const tables = v5Tables(old);
    const before = Object.fromEntries(tables.map((t) => [t, rowsOf(old, t)]));
    old.close();
    expect(before.events.length).toBeGreaterThan(0);
    expect(before.members.length).toBeGreaterThan(0);

    const migrated = LabStore.open(v5);
    try {
      expect(migrated.db.raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      for (const t of tables) expect(rowsOf(migrated.db.raw, t, t === 'events' ? ['split'] : []), t).toEqual(before[t]);
      const splits = (db: Database.Database) => db.prepare('SELECT id, split FROM events ORDER BY id').all();
      expect(splits(migrated.db.raw)).toEqual(splits(s.db.raw));
      expect(migrated.db.raw.prepare("SELECT count(*) FROM events WHERE split = 'eval'").pluck().get()).toBeGreaterThan(0);
      expect(migrated.db.raw.prepare("SELECT count(*) FROM pragma_index_list('events') WHERE name = 'events_by_split'").pluck().get()).toBe(1);
      expect(integrity(migrated.db)).toBe('ok');
      expect(migrated.db.raw.pragma('foreign_key_check')).toEqual([]);
      for (const [, f] of cases) expect(listIds(migrated, run, f, 50)).toEqual(listIds(s, run, f, 50));
    } finally {
      migrated.close();
    }
  });

  it('is refused read-only until a writable open has migrated it (needs_migration, not a missing column)', () => {
    const v5 = v5Copy();
    let err: unknown = null;
    try {
      LabStore.open(v5, { readonly: true }).close();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LabStoreError);
    expect((err as LabStoreError).code).toBe('needs_migration');
    expect((err as LabStoreError).message).toContain(`schema version 5 and needs migrating to ${SCHEMA_VERSION}`);
  });
});
