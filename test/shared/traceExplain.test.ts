/**
 * The trace viewer's arithmetic (src/shared/traceExplain.ts) against values worked by hand from
 * SRPO.md: the set log-ratio and its normalisations, the clip side per advantage sign, the
 * group-relative advantage (N - 1 std, eps, singleton 0, Dr. GRPO centring), contribution, sorts.
 */
import { describe, expect, it } from 'vitest';
import { contribution, explainAdvantage, explainClip, explainSetRatio, sortEvents } from '../../src/shared/traceExplain';

describe('set log-ratio', () => {
  it('sqrt: L = (l1 + l2 + l3) / sqrt(3), rho = exp(L)', () => {
    const x = explainSetRatio([0.3, -0.1, 0.1], 'sqrt')!;
    expect(x.sum).toBeCloseTo(0.3, 12);
    expect(x.factorText).toBe('1/√3');
    expect(x.logRatio).toBeCloseTo(0.3 / Math.sqrt(3), 12);
    expect(x.ratio).toBeCloseTo(Math.exp(0.17320508), 6);
  });

  it('mean divides by K, none by 1; lengthNorm divides each member by its length first', () => {
    expect(explainSetRatio([0.2, 0.4], 'mean')!.logRatio).toBeCloseTo(0.3, 12);
    expect(explainSetRatio([0.2, 0.4], 'none')!.logRatio).toBeCloseTo(0.6, 12);
    expect(explainSetRatio([0.2, 0.4], 'none', { lengthNorm: true, lengths: [2, 4] })!.logRatio).toBeCloseTo(0.2, 12);
  });

  it('clamps at ±20 before exp and says so; a member without a log-ratio gives no explanation', () => {
    const x = explainSetRatio([30], 'sqrt')!;
    expect(x.clamped).toBe(true);
    expect(x.ratio).toBeCloseTo(Math.exp(20), 0);
    expect(explainSetRatio([0.1, null], 'sqrt')).toBeNull();
  });
});

describe('clip', () => {
  it('A > 0 can only be clipped high, above 1 + eps_high', () => {
    const c = explainClip(0.7, 1.25, 0.2, 0.28);
    expect(c.side).toBe('high');
    expect(c.interval[1]).toBeCloseTo(1.28, 12);
    expect(c.outside).toBe(false);
    expect(explainClip(0.7, 1.3, 0.2, 0.28).outside).toBe(true);
    expect(c.rule).toBe('A > 0: clipped high when ρ > 1 + ε_high = 1.28');
  });

  it('A < 0 only low, below 1 - eps_low (a high ratio is not clipped); the dual clip is named', () => {
    expect(explainClip(-0.7, 0.7, 0.2, 0.2).outside).toBe(true);
    expect(explainClip(-0.7, 5, 0.2, 0.2).outside).toBe(false);
    expect(explainClip(-0.7, 0.9, 0.2, 0.2, 3).rule).toMatch(/clipped low when ρ < 1 − ε_low = 0\.8; dual clip: the term is at least 3·A/);
  });

  it('A = 0 adds no gradient', () => {
    expect(explainClip(0, 2, 0.2, 0.2).side).toBe('none');
  });
});

describe('advantage from the group', () => {
  it('{0, 1}: mean 0.5, std 0.707 (N - 1), advantages ±0.707 (SRPO.md point 5)', () => {
    const g = explainAdvantage(1, [0, 1]);
    expect(g.mean).toBe(0.5);
    expect(g.std).toBeCloseTo(Math.SQRT1_2, 12);
    expect(g.advantage).toBeCloseTo(0.5 / (Math.SQRT1_2 + 1e-6), 9);
  });

  it('a single event gets 0; equal rewards give 0; scaleByStd off centres only; the std floor applies', () => {
    expect(explainAdvantage(1, [1]).advantage).toBe(0);
    expect(explainAdvantage(1, [1, 1, 1]).advantage).toBe(0);
    expect(explainAdvantage(1, [0, 1, 1, 0], { scaleByStd: false }).advantage).toBe(0.5);
    expect(explainAdvantage(1, [0.99, 1], { stdFloor: 0.5, eps: 0 }).advantage).toBeCloseTo(0.005 / 0.5, 12);
  });
});

describe('contribution and sorting', () => {
  const events = [
    { id: 1, advantage: 0.5, ratio: 1 },
    { id: 2, advantage: -2, ratio: 0.9 },
    { id: 3, advantage: null, ratio: null },
    { id: 4, advantage: 1, ratio: 1.1 },
  ];
  it('contribution is |A x rho|, 0 without either', () => {
    expect(contribution(events[1])).toBeCloseTo(1.8, 12);
    expect(contribution(events[2])).toBe(0);
  });
  it('sorts descending by default, events without a value last, list order kept for "list"', () => {
    expect(sortEvents(events, 'contribution').map((e) => e.id)).toEqual([2, 4, 1, 3]);
    expect(sortEvents(events, 'advantage').map((e) => e.id)).toEqual([4, 1, 2, 3]);
    expect(sortEvents(events, 'ratio', 'asc').map((e) => e.id)).toEqual([2, 1, 4, 3]);
    expect(sortEvents(events, 'list').map((e) => e.id)).toEqual([1, 2, 3, 4]);
  });
});
