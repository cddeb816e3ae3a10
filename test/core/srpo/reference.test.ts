/**
 * The float64 reference against cases worked by hand from SRPO.md's formulas: K = 1 is
 * sequence-level PPO-clip, the set normalisations scale as sqrt / mean / none, clipping low and
 * high, a singleton group, a dropped event, the three reductions, the dual clip and the clamp.
 */
import { describe, expect, it } from 'vitest';
import { referenceObjective, type BatchMember, type ObjectiveBatch } from '../../../src/core/srpo';

/** A member whose summed log-ratio is exactly `l` (spread over its tokens), all tokens masked. */
function member(event: string, l: number, len = 2, role = 'solver'): BatchMember {
  const logpOld = Array.from({ length: len }, (_, t) => -1 - t);
  const logpCur = logpOld.map((v) => v + l / len);
  return { event, role, logpCur, logpOld, mask: logpOld.map(() => 1) };
}

const SQRT_HALF_ADV = 1 / (Math.SQRT1_2 + 1e-6) / 2; // A for rewards {1, 0}: 0.5 / (0.7071 + eps)

describe('reference objective, worked by hand', () => {
  it('K = 1 everywhere equals sequence-level PPO-clip per response', () => {
    // Two responses to one task, rewards 1 and 0: A = ±0.5 / (0.70711 + 1e-6).
    const batch: ObjectiveBatch = {
      events: [
        { id: 'a', group: 'g', reward: 1, expectedK: 1 },
        { id: 'b', group: 'g', reward: 0, expectedK: 1 },
      ],
      members: [member('a', 0.1), member('b', -0.05)],
    };
    const ref = referenceObjective(batch);
    const A = SQRT_HALF_ADV;
    // PPO: min(rho A, clip(rho) A), both inside the clip range here.
    const expected = -(Math.exp(0.1) * A + Math.exp(-0.05) * -A) / 2;
    expect(ref.loss).toBeCloseTo(expected, 12);
    expect(ref.events.map((e) => e.advantage)).toEqual([A, -A]);
    // Same numbers from the member-level baseline, which clips each response separately.
    expect(referenceObjective(batch, { algorithm: 'grpo_seq' }).loss).toBeCloseTo(expected, 12);
  });

  it('scales the summed member log-ratios by 1/sqrt(K), 1/K or 1', () => {
    const batch: ObjectiveBatch = {
      events: [
        { id: 'set', group: 'g', reward: 1, expectedK: 4 },
        { id: 'other', group: 'g', reward: 0, expectedK: 1 },
      ],
      members: [member('set', 0.01), member('set', 0.02), member('set', 0.03), member('set', 0.04), member('other', 0)],
    };
    const sum = 0.1;
    const cases = { sqrt: sum / 2, mean: sum / 4, none: sum } as const;
    for (const [setNorm, L] of Object.entries(cases)) {
      const ev = referenceObjective(batch, { setNorm, clipHigh: 1 }).events[0];
      expect(ev.logRatio, setNorm).toBeCloseTo(L, 12);
      expect(ev.ratio, setNorm).toBeCloseTo(Math.exp(L), 12);
    }
  });

  it('clips high when A > 0 and rho > 1 + eps_high, and low when A < 0 and rho < 1 - eps_low', () => {
    const batch: ObjectiveBatch = {
      events: [
        { id: 'up', group: 'g', reward: 1, expectedK: 1 },
        { id: 'down', group: 'g', reward: 0, expectedK: 1 },
      ],
      members: [member('up', 0.5), member('down', -0.5)],
    };
    const ref = referenceObjective(batch, { clipLow: 0.2, clipHigh: 0.28 });
    expect(ref.events.map((e) => e.clipped)).toEqual(['high', 'low']);
    const A = SQRT_HALF_ADV;
    // Clipped values: (1 + 0.28) A and (1 - 0.2)(-A).
    expect(ref.loss).toBeCloseTo(-((1.28 * A + 0.8 * -A) / 2), 12);
    expect(ref.metrics['clip/frac_high']).toBe(0.5);
    expect(ref.metrics['clip/frac_low']).toBe(0.5);
    // The other sides are not clipped: A > 0 with a small ratio keeps rho A (pessimistic min).
    const swapped = referenceObjective({ ...batch, members: [member('up', -0.5), member('down', 0.5)] });
    expect(swapped.events.map((e) => e.clipped)).toEqual([false, false]);
    expect(swapped.loss).toBeCloseTo(-((Math.exp(-0.5) * A + Math.exp(0.5) * -A) / 2), 12);
  });

  it('gives a single-event group advantage 0 and separates groups strictly', () => {
    const batch: ObjectiveBatch = {
      events: [
        { id: 'alone', group: 'task1/verify', reward: 1, expectedK: 1 },
        { id: 'a', group: 'task1/solve', reward: 1, expectedK: 1 },
        { id: 'b', group: 'task1/solve', reward: 1, expectedK: 1 },
        { id: 'c', group: 'task2/solve', reward: 0, expectedK: 1 },
      ],
      members: [member('alone', 0.1), member('a', 0), member('b', 0), member('c', 0)],
    };
    const ref = referenceObjective(batch);
    // 'alone' has no comparable event; a and b tie (std 0); c is alone in its task's group.
    expect(ref.events.map((e) => e.advantage)).toEqual([0, 0, 0, 0]);
    expect(ref.loss === 0).toBe(true); // every psi is 0
  });

  it('drops an event that lost a member instead of shrinking it, before grouping', () => {
    const full: ObjectiveBatch = {
      events: [
        { id: 'a', group: 'g', reward: 1, expectedK: 2 },
        { id: 'b', group: 'g', reward: 0, expectedK: 1 },
        { id: 'c', group: 'g', reward: 0, expectedK: 1 },
      ],
      members: [member('a', 0.1), member('b', 0.05), member('c', -0.05)],
    };
    const ref = referenceObjective(full);
    // 'a' expected 2 members and has 1: gone. b and c tie at reward 0: no signal left.
    expect(ref.events.map((e) => e.id)).toEqual(['b', 'c']);
    expect(ref.events.map((e) => e.advantage)).toEqual([0, 0]);
    expect(ref.loss).toBe(0);
  });

  it('reduces by event, by token and by member as weighted means of psi', () => {
    const batch: ObjectiveBatch = {
      events: [
        { id: 'big', group: 'g', reward: 1, expectedK: 3 },
        { id: 'small', group: 'g', reward: 0, expectedK: 1 },
      ],
      // big: 3 members x 4 tokens, L = 0.06 / sqrt(3); small: 1 member x 2 tokens, L = -0.02.
      members: [member('big', 0.02, 4), member('big', 0.02, 4), member('big', 0.02, 4), member('small', -0.02, 2)],
    };
    const A = SQRT_HALF_ADV;
    const psiBig = Math.exp(0.06 / Math.sqrt(3)) * A;
    const psiSmall = Math.exp(-0.02) * -A;
    expect(referenceObjective(batch, { reduction: 'event' }).loss).toBeCloseTo(-(psiBig + psiSmall) / 2, 12);
    expect(referenceObjective(batch, { reduction: 'token' }).loss).toBeCloseTo(-(12 * psiBig + 2 * psiSmall) / 14, 12);
    expect(referenceObjective(batch, { reduction: 'member' }).loss).toBeCloseTo(-(3 * psiBig + psiSmall) / 4, 12);
  });

  it('counts only masked tokens, and length-normalises members when asked', () => {
    const m = member('a', 0.3, 3);
    m.mask = [1, 0, 1]; // the middle token's 0.1 does not count
    const batch: ObjectiveBatch = {
      events: [
        { id: 'a', group: 'g', reward: 1, expectedK: 1 },
        { id: 'b', group: 'g', reward: 0, expectedK: 1 },
      ],
      members: [m, member('b', 0)],
    };
    expect(referenceObjective(batch).events[0].logRatio).toBeCloseTo(0.2, 12);
    expect(referenceObjective(batch, { lengthNorm: true }).events[0].logRatio).toBeCloseTo(0.1, 12);
  });

  it('applies the dual clip to negative advantages and clamps set log-ratios at ±20', () => {
    const batch: ObjectiveBatch = {
      events: [
        { id: 'up', group: 'g', reward: 1, expectedK: 1 },
        { id: 'down', group: 'g', reward: 0, expectedK: 1 },
      ],
      members: [member('up', 0), member('down', 25)],
    };
    const A = SQRT_HALF_ADV;
    const plain = referenceObjective(batch);
    expect(plain.events[1].logRatio).toBe(20);
    expect(plain.metrics['ratio/clamped']).toBe(1);
    expect(plain.loss).toBeCloseTo(-(A + Math.exp(20) * -A) / 2, 6);
    const dual = referenceObjective(batch, { dualClip: 3 });
    expect(dual.loss).toBeCloseTo(-(A + 3 * -A) / 2, 12);
    expect(dual.metrics['clip/frac_dual']).toBe(0.5);
  });

  it('mean-centres without dividing when scaleByStd is off, and floors the std when asked', () => {
    const batch: ObjectiveBatch = {
      events: [
        { id: 'a', group: 'g', reward: 0.3, expectedK: 1 },
        { id: 'b', group: 'g', reward: 0.1, expectedK: 1 },
      ],
      members: [member('a', 0), member('b', 0)],
    };
    expect(referenceObjective(batch, { scaleByStd: false }).events.map((e) => e.advantage)).toEqual([0.3 - 0.2, 0.1 - 0.2]);
    const std = Math.SQRT2 * 0.1;
    const floored = referenceObjective(batch, { stdFloor: 0.5 }).events[0].advantage;
    expect(floored).toBeCloseTo(0.1 / (0.5 + 1e-6), 12);
    expect(referenceObjective(batch).events[0].advantage).toBeCloseTo(0.1 / (std + 1e-6), 12);
  });
});
