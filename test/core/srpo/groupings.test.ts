/**
 * The three advantage groupings on a hand-worked multi-turn search batch: one prompt, three
 * trajectories in which the searcher and the answerer act different numbers of times (a 2-member
 * search set, a revision by the answerer, an invalid search charged 0.5). Every expected value
 * below is worked by hand in the comments, not produced by the code under test.
 */
import { describe, expect, it } from 'vitest';
import { computeObjective, getGrouping, objectiveConfig, prepareObjectiveBatch, referenceObjective, type ObjectiveBatch } from '../../../src/core/srpo';

const m = (event: string, role: string) => ({ event, role, logpCur: [-0.5, -0.4], logpOld: [-0.6, -0.4], mask: [1, 1] });
const ev = (traj: string, n: number, kind: string, reward: number, expectedK = 1) => ({
  id: `${traj}/e${n}`,
  group: `q/${kind}`,
  reward,
  expectedK,
  prompt: 'q',
  trajectory: traj,
});

// A: search(1) answer(1).                team reward 1
// B: search K=2 (0,0) answer(0) revise(0).  team reward 0
// C: search(0.5: invalid, -0.5) search(1) answer(1) revise(1).  team reward 1
const batch: ObjectiveBatch = {
  events: [
    ev('A', 0, 'search', 1),
    ev('A', 1, 'answer', 1),
    ev('B', 0, 'search', 0, 2),
    ev('B', 1, 'answer', 0),
    ev('B', 2, 'revise', 0),
    ev('C', 0, 'search', 0.5),
    ev('C', 1, 'search', 1),
    ev('C', 2, 'answer', 1),
    ev('C', 3, 'revise', 1),
  ],
  members: [
    m('A/e0', 'searcher'),
    m('A/e1', 'answerer'),
    m('B/e0', 'searcher'),
    m('B/e0', 'searcher'),
    m('B/e1', 'answerer'),
    m('B/e2', 'answerer'),
    m('C/e0', 'searcher'),
    m('C/e1', 'searcher'),
    m('C/e2', 'answerer'),
    m('C/e3', 'answerer'),
  ],
};

// Centred only (scaleByStd off), so every value is a plain fraction.
const centred = { scaleByStd: false };
const memberAdv = (config: object) => prepareObjectiveBatch(batch, objectiveConfig(config)).members.map((x) => x.advantage);
const expectAll = (got: number[], want: number[]) => {
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => expect(g, `member ${i}`).toBeCloseTo(want[i], 12));
};

describe('advantage groupings on a multi-turn search batch', () => {
  it('event (SRPO): per prompt and event kind, one value per event', () => {
    // q/search events A0=1, B0=0, C0=0.5, C1=1: mean 0.625 -> 0.375, -0.625, -0.125, 0.375
    // q/answer A1=1, B1=0, C2=1: mean 2/3 -> 1/3, -2/3, 1/3;  q/revise B2=0, C3=1: mean 0.5 -> -0.5, 0.5
    expectAll(memberAdv({ algorithm: 'srpo', ...centred }), [0.375, 1 / 3, -0.625, -0.625, -2 / 3, -0.5, -0.125, 0.375, 1 / 3, 0.5]);
  });

  it('trajectory (GRPO): one outcome per trajectory, counted once, taken by all its steps', () => {
    // Outcomes (mean R_e over member outputs): A (1+1)/2 = 1; B 0; C (0.5+1+1+1)/4 = 0.875.
    // Mean 1.875 / 3 = 0.625 -> A 0.375, B -0.625, C 0.25.
    expectAll(memberAdv({ algorithm: 'grpo_token', ...centred }), [0.375, 0.375, -0.625, -0.625, -0.625, -0.625, 0.25, 0.25, 0.25, 0.25]);
  });

  it('agent (Dr. MAS): per prompt and role, every invocation counted', () => {
    // searcher: A0 1, B0 0, B0 0, C0 0.5, C1 1 (5 invocations): mean 0.5 -> 0.5, -0.5, -0.5, 0, 0.5
    // answerer: A1 1, B1 0, B2 0, C2 1, C3 1 (5 invocations): mean 0.6 -> 0.4, -0.6, -0.6, 0.4, 0.4
    expectAll(memberAdv({ algorithm: 'drmas', ...centred }), [0.5, 0.4, -0.5, -0.5, -0.6, -0.6, 0, 0.5, 0.4, 0.4]);
  });

  it('divides by the sample std of the trajectory outcomes', () => {
    // Outcomes 1, 0, 0.875: deviations 0.375, -0.625, 0.25; ss = 0.59375; std = sqrt(0.59375 / 2).
    const std = Math.sqrt(0.59375 / 2);
    const a = memberAdv({ algorithm: 'grpo_seq' });
    expect(a[0]).toBeCloseTo(0.375 / (std + 1e-6), 12);
    expect(a[2]).toBeCloseTo(-0.625 / (std + 1e-6), 12);
    expect(a[9]).toBeCloseTo(0.25 / (std + 1e-6), 12);
  });

  it('gives every default a different answer, and any grouping to any loss', () => {
    const event = memberAdv({ algorithm: 'srpo' });
    const traj = memberAdv({ algorithm: 'grpo_token' });
    const agent = memberAdv({ algorithm: 'drmas' });
    expect(traj).not.toEqual(event);
    expect(agent).not.toEqual(traj);
    expect(agent).not.toEqual(event);
    // An ablation: SRPO's loss with Dr. MAS's advantages; the event takes its members' mean.
    const p = prepareObjectiveBatch(batch, objectiveConfig({ algorithm: 'srpo', grouping: 'agent', ...centred }));
    expect(p.grouping).toBe('agent');
    expect(p.events[2].advantage).toBeCloseTo(-0.5, 12); // B's 2-member search set: (-0.5 - 0.5) / 2
    expect(p.members.map((x) => x.advantage)).toEqual(memberAdv({ algorithm: 'drmas', ...centred }));
  });

  it('counts the comparison groups of the grouping in use', () => {
    const stats = (algorithm: string) => prepareObjectiveBatch(batch, objectiveConfig({ algorithm })).groups;
    expect(stats('srpo')).toEqual({ count: 3, singleton: 0, zeroStd: 0 }); // search, answer, revise
    expect(stats('grpo_token')).toEqual({ count: 1, singleton: 0, zeroStd: 0 }); // the prompt
    expect(stats('drmas')).toEqual({ count: 2, singleton: 0, zeroStd: 0 }); // searcher, answerer
  });

  it('defaults prompt to the group and trajectory to the event id', () => {
    const bare: ObjectiveBatch = {
      events: [
        { id: 'x', group: 'g', reward: 1, expectedK: 1 },
        { id: 'y', group: 'g', reward: 0, expectedK: 1 },
      ],
      members: [m('x', 'solver'), m('y', 'solver')],
    };
    const p = prepareObjectiveBatch(bare, objectiveConfig({ algorithm: 'grpo_token', ...centred }));
    expect(p.events.map((e) => [e.prompt, e.trajectory])).toEqual([
      ['g', 'x'],
      ['g', 'y'],
    ]);
    expect(p.members.map((x) => x.advantage)).toEqual([0.5, -0.5]);
  });

  it('agrees with the float64 reference and reports the grouping', async () => {
    for (const algorithm of ['srpo', 'grpo_token', 'drmas'] as const) {
      const fast = await computeObjective(batch, { algorithm });
      const ref = referenceObjective(batch, { algorithm });
      expect(fast.loss).toBeCloseTo(ref.loss, 5);
      expect(fast.grouping).toBe({ srpo: 'event', grpo_token: 'trajectory', drmas: 'agent' }[algorithm]);
    }
  });

  it('refuses unknown groupings and non-string ids, naming them', () => {
    expect(() => getGrouping('team')).toThrow(/unknown advantage grouping "team"; valid names: event, trajectory, agent/);
    expect(() => objectiveConfig({ grouping: 'team' })).toThrow(/grouping/);
    const bad = { events: [{ ...batch.events[0], trajectory: 3 }], members: [] } as unknown as ObjectiveBatch;
    expect(() => prepareObjectiveBatch(bad, objectiveConfig({}))).toThrow(/event "A\/e0": field "trajectory" must be a string/);
  });
});
