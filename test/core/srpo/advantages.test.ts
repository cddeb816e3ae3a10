/**
 * Group-relative advantages, by hand: the (N-1) std, eps, singleton groups, equal rewards,
 * scaleByStd off, the std floor against float residue (SRPO.md point 5), and Dr. MAS's
 * per-agent pooling on single-step trajectories (multi-turn batches: groupings.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { groupAdvantages, prepareObjectiveBatch, objectiveConfig, type ObjectiveBatch } from '../../../src/core/srpo';

const opts = { advEps: 1e-6, scaleByStd: true, stdFloor: 0 };

describe('group-relative advantages', () => {
  it('uses the sample std: a {0, 1} group gets ±0.707', () => {
    const [a, b] = groupAdvantages([1, 0], opts);
    expect(a).toBeCloseTo(0.5 / (Math.SQRT1_2 + 1e-6), 12);
    expect(b).toBeCloseTo(-a, 12);
    expect(a).toBeCloseTo(0.7071, 4);
  });

  it('matches (R - mean) / (std + eps) on a larger group', () => {
    const r = [0.2, 1, 0, 0.5];
    const mean = 0.425;
    const std = Math.sqrt(r.reduce((s, v) => s + (v - mean) ** 2, 0) / 3);
    groupAdvantages(r, opts).forEach((a, i) => expect(a).toBeCloseTo((r[i] - mean) / (std + 1e-6), 12));
  });

  it('gives 0 to a single-event group and to a group of equal rewards', () => {
    expect(groupAdvantages([1], opts)).toEqual([0]);
    expect(groupAdvantages([1, 1, 1], opts)).toEqual([0, 0, 0]);
  });

  it('mean-centres only when scaleByStd is off', () => {
    expect(groupAdvantages([3, 1], { ...opts, scaleByStd: false })).toEqual([1, -1]);
  });

  it('floors a near-zero std so float residue cannot blow up an advantage', () => {
    // Equal returns up to a 1e-5 residue (say a penalty summed in float32).
    const r = [1, 1 + 1e-5, 1];
    const raw = groupAdvantages(r, opts);
    expect(Math.max(...raw.map(Math.abs))).toBeGreaterThan(0.9); // residue became a full-scale signal
    const floored = groupAdvantages(r, { ...opts, stdFloor: 0.01 });
    expect(Math.max(...floored.map(Math.abs))).toBeLessThan(1e-3);
  });

  it('pools by prompt and role for Dr. MAS, and by prompt alone for GRPO', () => {
    const m = (event: string, role: string) => ({ event, role, logpCur: [0], logpOld: [0], mask: [1] });
    const batch: ObjectiveBatch = {
      events: [
        { id: 's1', group: 't/solve', reward: 1, expectedK: 1 },
        { id: 's2', group: 't/solve', reward: 0, expectedK: 1 },
        { id: 's3', group: 't/solve', reward: 0.5, expectedK: 1 },
      ],
      // s1 and s2 come from the "math" role, s3 from the "code" role: alone in its role.
      members: [m('s1', 'math'), m('s2', 'math'), m('s3', 'code')],
    };
    const group = prepareObjectiveBatch(batch, objectiveConfig({ algorithm: 'grpo_token' }));
    const role = prepareObjectiveBatch(batch, objectiveConfig({ algorithm: 'drmas' }));
    const groupAdv = groupAdvantages([1, 0, 0.5], opts);
    const roleAdv = groupAdvantages([1, 0], opts);
    expect(group.members.map((x) => x.advantage)).toEqual(groupAdv);
    expect(role.members.map((x) => x.advantage)).toEqual([roleAdv[0], roleAdv[1], 0]);
    expect(role.events.map((e) => e.advantage)).toEqual([roleAdv[0], roleAdv[1], 0]); // K = 1: the member's own
  });
});
