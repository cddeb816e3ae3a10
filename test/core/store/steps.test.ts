/**
 * writeStep and truncateAfter: a step round-trips exactly (token blobs bit for bit), is all or
 * nothing, is never recorded twice, and truncation rewinds a run to an earlier step.
 */
import { describe, expect, it } from 'vitest';
import { LabStore, LabStoreError, type StepRecord, type StoredMember } from '../../../src/core/store';
import { makeStep, newRun, SMALL, stepCounts } from './fixtures/makeStep';
import { integrity, rowCounts, tempDbPath } from './helpers';

const bits = (f: Float32Array): number[] => Array.from(new Uint32Array(f.buffer, f.byteOffset, f.length));

function storeWithRun(path = ':memory:'): { s: LabStore; run: number } {
  const s = LabStore.open(path);
  return { s, run: s.createRun(newRun()) };
}

function allEventIds(s: LabStore, run: number): number[] {
  return s.db.raw.prepare('SELECT id FROM events WHERE run_id = ? ORDER BY id').pluck().all(run) as number[];
}

function errorCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return (e as LabStoreError).code;
  }
  return undefined;
}

describe('writeStep', () => {
  it('round-trips one step: rows, fields and token blobs bit-exact', () => {
    const { s, run } = storeWithRun(tempDbPath());
    const rec = makeStep(3, SMALL);
    rec.metrics['loss'] = NaN;
    rec.metrics['grad/norm'] = Infinity;
    s.writeStep(run, rec);
    expect(s.getRun(run)!.lastStep).toBe(3);
    expect(s.committedSteps(run)).toEqual([3]);
    const counts = stepCounts(rec);
    expect(rowCounts(s.db, run, 3)).toEqual({ steps: 1, ...counts, evaluations: 0, checkpoints: 1 });

    expect(s.metricSeries(run, 'loss')).toEqual([{ step: 3, value: NaN, wallTime: rec.wallTime }]);
    expect(s.metricSeries(run, 'grad/norm')[0].value).toBe(Infinity);

    const episodeIds = s.db.raw.prepare('SELECT id FROM episodes WHERE run_id = ? ORDER BY id').pluck().all(run) as number[];
    expect(episodeIds).toHaveLength(rec.episodes.length);
    rec.episodes.forEach((ep, p) => {
      const got = s.getEpisode(episodeIds[p])!;
      const { events, ...fields } = ep;
      expect(got).toMatchObject({ ...fields, runId: run, step: 3 });
      expect(got.events.map((e) => e.seq)).toEqual(events.map((e) => e.seq));
      events.forEach((ev, q) => {
        const g = got.events[q];
        const { members, ...evFields } = ev;
        expect(g).toMatchObject({ ...evFields, memberCount: members.length, invalidMembers: members.filter((m) => !m.valid).length });
        expect(s.getEvent(g.id)).toEqual(g);
        members.forEach((m, j) => {
          const sm: StoredMember = g.members[j];
          expect(sm).toMatchObject({
            memberIndex: m.memberIndex,
            role: m.role,
            policyId: m.policyId,
            policyVersion: m.policyVersion,
            prompt: m.prompt,
            output: m.output,
            valid: m.valid,
            parseError: m.parseError,
            logRatio: m.logRatio,
            promptLength: m.promptTokens.length,
            outputLength: m.outputTokens.length,
          });
          expect(Array.from(sm.tokens!.promptTokens)).toEqual(Array.from(m.promptTokens));
          expect(Array.from(sm.tokens!.outputTokens)).toEqual(Array.from(m.outputTokens));
          expect(bits(sm.tokens!.logpOld)).toEqual(bits(m.logpOld));
          expect(Array.from(sm.tokens!.mask)).toEqual(Array.from(m.mask));
          if (m.logpCur) expect(bits(sm.tokens!.logpCur!)).toEqual(bits(m.logpCur));
          else expect(sm.tokens!.logpCur).toBeNull();
        });
      });
    });
    expect(s.checkpoints(run)).toEqual([{ runId: run, step: 3, path: 'ckpt/step-3.safetensors', wallTime: rec.wallTime }]);
    expect(integrity(s.db)).toBe('ok');
    s.close();
  });

  it('stores no token blobs when the step says tokens: false, but keeps token counts', () => {
    const { s, run } = storeWithRun();
    const rec = makeStep(1, { ...SMALL, tokens: false });
    s.writeStep(run, rec);
    const ev = s.getEvent(allEventIds(s, run)[0])!;
    expect(ev.members.length).toBeGreaterThan(0);
    for (const [j, m] of ev.members.entries()) {
      expect(m.tokens).toBeNull();
      expect(m.outputLength).toBe(rec.episodes[0].events[0].members[j].outputTokens.length);
    }
    expect(s.db.raw.prepare('SELECT count(*) FROM members WHERE output_tokens IS NOT NULL OR logp_cur IS NOT NULL').pluck().get()).toBe(0);
  });

  it('round-trips per-token current log-probs (logpCur) bit-exact, null where absent, and refuses a wrong length', () => {
    const { s, run } = storeWithRun();
    const rec = makeStep(2, SMALL);
    const members = rec.episodes.flatMap((e) => e.events.flatMap((ev) => ev.members));
    expect(members.some((m) => m.logpCur)).toBe(true);
    expect(members.some((m) => !m.logpCur)).toBe(true);
    s.writeStep(run, rec);
    const stored = allEventIds(s, run).flatMap((id) => s.getEvent(id)!.members);
    expect(stored).toHaveLength(members.length);
    stored.forEach((sm, i) => {
      const want = members[i].logpCur;
      if (want) expect(bits(sm.tokens!.logpCur!)).toEqual(bits(want));
      else expect(sm.tokens!.logpCur).toBeNull();
    });
    // A logpCur that does not match the output length rolls the step back, naming the member.
    const bad = makeStep(3, SMALL);
    const victim = bad.episodes[0].events.flatMap((ev) => ev.members)[0] ?? bad.episodes[1].events[0].members[0];
    victim.logpCur = new Float32Array(victim.outputTokens.length + 1);
    expect(() => s.writeStep(run, bad)).toThrow(/member \d+: logpCur has \d+ values/);
    expect(s.committedSteps(run)).toEqual([2]);
    // The CHECK holds at the SQL level too.
    const row = s.db.raw.prepare('SELECT id, output_len FROM members WHERE output_tokens IS NOT NULL LIMIT 1').get() as { id: number; output_len: number };
    expect(() => s.db.raw.prepare('UPDATE members SET logp_cur = zeroblob(?) WHERE id = ?').run(4 * row.output_len + 4, row.id)).toThrow(/CHECK/);
    s.close();
  });

  it('stores evaluations in step order', () => {
    const { s, run } = storeWithRun();
    for (let step = 0; step <= 10; step++) s.writeStep(run, makeStep(step));
    expect(s.evaluations(run).map((e) => e.step)).toEqual([0, 5, 10]);
    expect(s.evaluations(run)[0]).toEqual({ step: 0, ...makeStep(0).evaluations![0] });
  });

  it('is atomic: a step failing midway leaves nothing of itself and the previous step intact', () => {
    const { s, run } = storeWithRun(tempDbPath());
    s.writeStep(run, makeStep(0));
    const before = rowCounts(s.db, run);
    const bad: StepRecord = makeStep(1);
    // The last member of the last event: everything before it has been inserted when it fails.
    const lastEp = bad.episodes[bad.episodes.length - 1];
    const lastEv = lastEp.events[lastEp.events.length - 1];
    lastEv.members.push({ ...lastEv.members[0], memberIndex: -1 });
    expect(() => s.writeStep(run, bad)).toThrow(
      new RegExp(`writeStep run ${run} step 1: episode "${lastEp.key}": event "${lastEv.key}": member -1: CHECK constraint failed`),
    );
    expect(rowCounts(s.db, run)).toEqual(before);
    expect(rowCounts(s.db, run, 1)).toEqual({ steps: 0, metrics: 0, episodes: 0, events: 0, members: 0, evaluations: 0, checkpoints: 0 });
    expect(s.getRun(run)!.lastStep).toBe(0);

    // Another kind of midway failure: log-probs shorter than the output tokens.
    const bad2 = makeStep(1);
    const m = bad2.episodes[1].events[0].members[0];
    m.logpOld = m.logpOld.subarray(0, m.logpOld.length - 1);
    expect(() => s.writeStep(run, bad2)).toThrow(/CHECK constraint failed: logp_old/);
    expect(rowCounts(s.db, run)).toEqual(before);

    // The step can then be written correctly.
    s.writeStep(run, makeStep(1));
    expect(s.committedSteps(run)).toEqual([0, 1]);
    expect(integrity(s.db)).toBe('ok');
    s.close();
  });

  it('refuses a step already committed, and one below the last committed step', () => {
    const { s, run } = storeWithRun();
    s.writeStep(run, makeStep(0));
    s.writeStep(run, makeStep(2)); // gaps are fine
    const before = rowCounts(s.db, run);
    expect(errorCode(() => s.writeStep(run, makeStep(2)))).toBe('duplicate_step');
    expect(() => s.writeStep(run, makeStep(0))).toThrow(/step 0 of run \d+ is already committed .*truncateAfter\(\d+, -1\)/);
    expect(errorCode(() => s.writeStep(run, makeStep(1)))).toBe('step_out_of_order');
    expect(errorCode(() => s.writeStep(run + 100, makeStep(5)))).toBe('run_not_found');
    expect(errorCode(() => s.writeStep(run, { ...makeStep(3), step: 2.5 }))).toBe('step_out_of_order');
    expect(rowCounts(s.db, run)).toEqual(before);
    expect(s.getRun(run)!.lastStep).toBe(2);
  });

  it('refuses an event key used twice in a run, rolling back the step', () => {
    const { s, run } = storeWithRun();
    s.writeStep(run, makeStep(0));
    const dup = makeStep(1);
    dup.episodes[0].events[0].key = makeStep(0).episodes[0].events[0].key;
    expect(() => s.writeStep(run, dup)).toThrow(/UNIQUE constraint failed: events.run_id, events.key/);
    expect(s.committedSteps(run)).toEqual([0]);
  });
});

describe('truncateAfter', () => {
  it('removes every step after the given one and rewinds last_step', () => {
    const { s, run } = storeWithRun(tempDbPath());
    const other = s.createRun(newRun('other'));
    for (let step = 0; step < 8; step++) {
      s.writeStep(run, makeStep(step));
      s.writeStep(other, makeStep(step, SMALL, 1));
    }
    const otherBefore = rowCounts(s.db, other);
    const keep = [0, 1, 2, 3].map((step) => rowCounts(s.db, run, step));
    expect(s.latestCheckpoint(run)!.step).toBe(7);

    expect(s.truncateAfter(run, 3)).toBe(4);
    expect(s.committedSteps(run)).toEqual([0, 1, 2, 3]);
    expect(s.getRun(run)!.lastStep).toBe(3);
    for (const step of [4, 5, 6, 7]) expect(Object.values(rowCounts(s.db, run, step)).every((n) => n === 0)).toBe(true);
    expect([0, 1, 2, 3].map((step) => rowCounts(s.db, run, step))).toEqual(keep);
    expect(s.metricSeries(run, 'loss').map((p) => p.step)).toEqual([0, 1, 2, 3]);
    expect(s.latestCheckpoint(run)).toEqual({ runId: run, step: 3, path: 'ckpt/step-3.safetensors', wallTime: makeStep(3).wallTime });
    expect(s.evaluations(run).map((e) => e.step)).toEqual([0]);
    expect(rowCounts(s.db, other)).toEqual(otherBefore);

    // Resuming rewrites step 4 onwards.
    s.writeStep(run, makeStep(4));
    expect(s.getRun(run)!.lastStep).toBe(4);
    expect(s.truncateAfter(run, -1)).toBe(5);
    expect(s.getRun(run)!.lastStep).toBe(-1);
    expect(s.latestCheckpoint(run)).toBeNull();
    expect(() => s.truncateAfter(run + 100, 0)).toThrow(/no run with id/);
    expect(integrity(s.db)).toBe('ok');
    s.close();
  });
});
