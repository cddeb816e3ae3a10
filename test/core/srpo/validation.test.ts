/**
 * Bad input and configuration: each error names the field and the event (or the config field,
 * its value and what is allowed); incomplete events are dropped and counted, never shrunk; an
 * unknown variant lists the valid names. No NaN ever comes back.
 */
import { describe, expect, it } from 'vitest';
import { ALGORITHMS, computeObjective, getVariant, objectiveConfig, resolveObjectiveConfig, type ObjectiveBatch } from '../../../src/core/srpo';

function goodBatch(): ObjectiveBatch {
  return {
    events: [
      { id: 'e1', group: 'g', reward: 1, expectedK: 2 },
      { id: 'e2', group: 'g', reward: 0, expectedK: 1 },
    ],
    members: [
      { event: 'e1', role: 'solver', logpCur: [-1, -2], logpOld: [-1, -2], mask: [1, 1] },
      { event: 'e1', role: 'solver', logpCur: [-1], logpOld: [-1], mask: [1] },
      { event: 'e2', role: 'solver', logpCur: [-1], logpOld: [-1.1], mask: [1] },
    ],
  };
}

describe('batch validation', () => {
  const cases: [string, (b: ObjectiveBatch) => void, RegExp][] = [
    ['NaN current log-prob', (b) => (b.members[1].logpCur[0] = NaN), /event "e1".*"logpCur".*non-finite value NaN at token 0/],
    ['infinite old log-prob', (b) => (b.members[2].logpOld[0] = -Infinity), /event "e2".*"logpOld".*-Infinity/],
    ['mask and log-prob lengths differ', (b) => b.members[0].mask.push(1), /event "e1".*lengths differ \(logpCur 2, logpOld 2, mask 3\)/],
    ['K < 1', (b) => (b.events[1].expectedK = 0), /event "e2".*"expectedK" must be an integer >= 1, got 0/],
    ['fractional K', (b) => (b.events[1].expectedK = 1.5), /event "e2".*"expectedK"/],
    ['member naming no event', (b) => (b.members[2].event = 'ghost'), /members\[2\]\.event "ghost" names no event/],
    ['non-finite reward', (b) => (b.events[0].reward = NaN), /event "e1".*"reward" must be a finite number/],
    ['mask value not 0/1', (b) => (b.members[0].mask[1] = 0.5), /event "e1".*"mask" must hold 0 or 1, got 0.5 at token 1/],
    ['duplicate event id', (b) => (b.events[1].id = 'e1'), /events\[1\]\.id "e1" is a duplicate/],
  ];
  for (const [what, mutate, message] of cases) {
    it(`rejects ${what}, naming the field and the event`, async () => {
      const batch = goodBatch();
      mutate(batch);
      await expect(computeObjective(batch)).rejects.toThrow(message);
    });
  }

  it('drops an event with a missing or an extra member and counts it, never shrinking it', async () => {
    const missing = goodBatch();
    missing.members.splice(1, 1); // e1 now has 1 of 2
    const extra = goodBatch();
    extra.members.push({ event: 'e2', role: 'solver', logpCur: [-1], logpOld: [-1], mask: [1] }); // e2 has 2 of 1
    for (const [batch, kept] of [
      [missing, 'e2'],
      [extra, 'e1'],
    ] as const) {
      const r = await computeObjective(batch);
      expect(r.completeEvents).toBe(1);
      expect(r.droppedEvents).toBe(1);
      expect(r.events.map((e) => e.id)).toEqual([kept]);
      expect(r.metrics['events/dropped']).toBe(1);
      expect(r.metrics['set/size_mean']).toBe(kept === 'e1' ? 2 : 1);
    }
  });

  it('never returns NaN: every number in a report is finite', async () => {
    for (const algorithm of ALGORITHMS) {
      const r = await computeObjective(goodBatch(), { algorithm });
      for (const [k, v] of Object.entries(r.metrics)) expect(Number.isFinite(v), `${algorithm} ${k}`).toBe(true);
      expect(Number.isFinite(r.loss)).toBe(true);
    }
  });
});

describe('objective config', () => {
  it('fills the documented defaults', () => {
    expect(resolveObjectiveConfig({})).toEqual({
      algorithm: 'srpo',
      grouping: null, // the algorithm's own
      setNorm: 'sqrt',
      reduction: 'event',
      lengthNorm: false,
      clipLow: 0.2,
      clipHigh: 0.2,
      dualClip: null,
      advEps: 1e-6,
      scaleByStd: true,
      stdFloor: 0,
    });
  });

  it('names the field, the value and what is allowed', () => {
    expect(() => objectiveConfig({ clipLow: 1.5 })).toThrow(/field "clipLow" = 1.5: .*1/);
    expect(() => objectiveConfig({ setNorm: 'cube' })).toThrow(/field "setNorm" = "cube": .*"sqrt".*"mean".*"none"/);
    expect(() => objectiveConfig({ dualClip: 0.5 })).toThrow(/field "dualClip" = 0.5/);
    expect(() => objectiveConfig({ clipHihg: 0.3 })).toThrow(/clipHihg/);
  });

  it('rejects an unknown variant with the list of valid names', () => {
    const valid = new RegExp(ALGORITHMS.join(', '));
    expect(() => getVariant('ppo_magic')).toThrow(/unknown objective variant "ppo_magic"/);
    expect(() => getVariant('ppo_magic')).toThrow(valid);
    expect(() => objectiveConfig({ algorithm: 'ppo_magic' })).toThrow(valid);
  });
});
