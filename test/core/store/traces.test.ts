/**
 * The trace list and detail reads: every filter agrees with a plain filter over the records that
 * were written, keyset pages concatenate to the full list, and episodes come back in order.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { LabStore, type EventFilter, type EventRecord, type EpisodeRecord } from '../../../src/core/store';
import { DETAIL_SQL } from '../../../src/core/store/traces';
import { makeStep, newRun, SMALL } from './fixtures/makeStep';

interface Written {
  step: number;
  episode: EpisodeRecord;
  event: EventRecord;
}

let s: LabStore;
let run: number;
const written: Written[] = [];

beforeAll(() => {
  s = LabStore.open(':memory:');
  run = s.createRun(newRun());
  const decoy = s.createRun(newRun('decoy'));
  for (let step = 0; step < 12; step++) {
    const rec = makeStep(step, { ...SMALL, episodes: 5, eventsPerEpisode: 4 });
    s.writeStep(run, rec);
    s.writeStep(decoy, makeStep(step, SMALL, 9));
    for (const episode of rec.episodes) for (const event of episode.events) written.push({ step, episode, event });
  }
});

/** The obvious filter over what was written: the specification of EventFilter. */
function expected(f: EventFilter): string[] {
  const kinds = typeof f.kind === 'string' ? [f.kind] : f.kind;
  return written
    .filter(({ step, episode, event: e }) => {
      if (f.fromStep !== undefined && step < f.fromStep) return false;
      if (f.toStep !== undefined && step > f.toStep) return false;
      if (kinds && !kinds.includes(e.kind)) return false;
      if (f.k !== undefined && e.expectedK !== f.k) return false;
      if (f.minReward !== undefined && e.reward < f.minReward) return false;
      if (f.maxReward !== undefined && e.reward > f.maxReward) return false;
      if (f.clipped === 'any' && e.clipped === null) return false;
      if (f.clipped === 'none' && e.clipped !== null) return false;
      if ((f.clipped === 'low' || f.clipped === 'high') && e.clipped !== f.clipped) return false;
      if (f.role !== undefined && !e.members.some((m) => m.role === f.role)) return false;
      if (f.complete !== undefined && e.complete !== f.complete) return false;
      if (f.parseFailures !== undefined && e.members.some((m) => !m.valid) !== f.parseFailures) return false;
      if (f.split !== undefined && episode.split !== f.split) return false;
      return true;
    })
    .map((w) => w.event.key);
}

function listAll(f: EventFilter, limit: number): string[] {
  const keys: string[] = [];
  let page = s.listEvents(run, f, { limit });
  for (let guard = 0; ; guard++) {
    expect(page.events.length).toBeLessThanOrEqual(limit);
    keys.push(...page.events.map((e) => e.key));
    if (!page.next) break;
    expect(page.events).toHaveLength(limit);
    page = s.listEvents(run, f, { limit, after: page.next });
    expect(guard).toBeLessThan(1000);
  }
  return keys;
}

const filters: [string, EventFilter][] = [
  ['no filter', {}],
  ['step range', { fromStep: 3, toStep: 7 }],
  ['one kind', { kind: 'verify' }],
  ['several kinds', { kind: ['router', 'aggregate'] }],
  ['K', { k: 2 }],
  ['reward range', { minReward: 0.25, maxReward: 0.6 }],
  ['clipped any', { clipped: 'any' }],
  ['clipped none', { clipped: 'none' }],
  ['clipped low', { clipped: 'low' }],
  ['clipped high', { clipped: 'high' }],
  ['role of any member', { role: 'searcher' }],
  ['incomplete events', { complete: false }],
  ['parse failures', { parseFailures: true }],
  ['all members parsed', { parseFailures: false }],
  ['split', { split: 'eval' }],
  ['combined', { fromStep: 2, kind: 'solve', role: 'solver', complete: true, minReward: 0.1 }],
  ['nothing matches', { k: 99 }],
];

describe('listEvents', () => {
  for (const [name, f] of filters) {
    it(`filters: ${name}`, () => {
      const want = expected(f);
      if (name !== 'nothing matches') expect(want.length).toBeGreaterThan(0);
      if (name !== 'no filter') expect(want.length).toBeLessThan(written.length);
      expect(listAll(f, 1000)).toEqual(want);
      expect(s.countEvents(run, f)).toBe(want.length);
    });
  }

  it('pages with a keyset cursor: pages concatenate to the full list, none repeated', () => {
    const all = listAll({}, 1000);
    expect(all).toHaveLength(written.length);
    for (const limit of [1, 7, 50]) expect(listAll({}, limit)).toEqual(all);
    expect(listAll({ kind: 'solve', clipped: 'none' }, 3)).toEqual(expected({ kind: 'solve', clipped: 'none' }));
  });

  it('returns summaries with member counts, and refuses a silly page size', () => {
    const first = s.listEvents(run, {}, { limit: 5 });
    const w = written[0].event;
    expect(first.events[0]).toMatchObject({
      key: w.key,
      runId: run,
      step: 0,
      kind: w.kind,
      expectedK: w.expectedK,
      memberCount: w.members.length,
      invalidMembers: w.members.filter((m) => !m.valid).length,
      clipped: w.clipped,
    });
    expect(() => s.listEvents(run, {}, { limit: 0 })).toThrow(/page.limit/);
    expect(() => s.listEvents(run, {}, { limit: 5000 })).toThrow(/page.limit/);
  });
});

describe('getEpisode and getEvent', () => {
  it('returns an episode with its events in seq order and their members', () => {
    const ev = s.listEvents(run, { fromStep: 5 }, { limit: 1 }).events[0];
    const ep = s.getEpisode(ev.episodeId)!;
    const rec = written.find((w) => w.event.key === ev.key)!.episode;
    expect(ep.key).toBe(rec.key);
    expect(ep.events.map((e) => e.key)).toEqual(rec.events.map((e) => e.key));
    expect(ep.events.map((e) => e.members.map((m) => m.memberIndex))).toEqual(rec.events.map((e) => e.members.map((m) => m.memberIndex)));
    expect(s.getEpisode(123456)).toBeNull();
    expect(s.getEvent(123456)).toBeNull();
  });

  it('reads an episode without its members when asked (the viewer timeline)', () => {
    const ev = s.listEvents(run, { fromStep: 5 }, { limit: 1 }).events[0];
    const full = s.getEpisode(ev.episodeId)!;
    const bare = s.getEpisode(ev.episodeId, { members: false })!;
    expect(bare.events.every((e) => e.members.length === 0)).toBe(true);
    expect(bare.events.map(({ members: _, ...e }) => e)).toEqual(full.events.map(({ members: _, ...e }) => e));
    expect({ ...bare, events: [] }).toEqual({ ...full, events: [] });
  });
});

describe('query plans of the detail reads and the list page', () => {
  const plan = (sql: string, ...params: unknown[]) =>
    (s.db.raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail);

  it('finds one event, its members, an episode and its events by index, with no scan and no sort', () => {
    for (const [name, sql] of Object.entries(DETAIL_SQL)) {
      const steps = plan(sql, 1);
      expect(
        steps.every((d) => d.startsWith('SEARCH ')),
        `${name}: ${steps.join(' | ')}`,
      ).toBe(true);
      expect(
        steps.some((d) => /TEMP B-TREE/.test(d)),
        `${name}: ${steps.join(' | ')}`,
      ).toBe(false);
    }
  });

  it('pages the unfiltered list along (run_id, step) in index order', () => {
    const steps = plan('SELECT e.* FROM events e WHERE e.run_id = ? AND (e.step, e.id) > (?, ?) ORDER BY e.step, e.id LIMIT 201', run, 3, 4);
    expect(steps.join(' | ')).toMatch(/^SEARCH e USING INDEX events_by_step/);
    expect(steps.some((d) => /TEMP B-TREE/.test(d))).toBe(false);
  });
});
