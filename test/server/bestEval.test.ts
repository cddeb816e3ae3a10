/**
 * The one "best eval" of a run (src/shared/analysis.ts): the highest finite eval/macro/avg, the
 * earliest step on a tie, null without one; the same whether folded over a stored series or
 * updated push by push.
 */
import { describe, expect, it } from 'vitest';
import { bestEval, bestEvalAfter } from '../../src/shared/analysis';

describe('bestEval', () => {
  it('the highest finite value and its step; NaN, null and infinities never win', () => {
    const points = [
      { step: 1, value: 0.2 },
      { step: 2, value: NaN },
      { step: 3, value: 0.5 },
      { step: 4, value: null },
      { step: 5, value: 0.4 },
      { step: 6, value: Infinity },
    ];
    expect(bestEval(points)).toEqual({ step: 3, value: 0.5 });
  });
  it('a tie keeps the earlier step', () => {
    expect(
      bestEval([
        { step: 2, value: 0.5 },
        { step: 9, value: 0.5 },
      ]),
    ).toEqual({ step: 2, value: 0.5 });
  });
  it('no finite value: null', () => {
    expect(bestEval([])).toBeNull();
    expect(
      bestEval([
        { step: 1, value: null },
        { step: 2, value: NaN },
      ]),
    ).toBeNull();
  });
  it('pushes folded one by one give the same answer as the whole series', () => {
    const series = [0.1, 0.3, NaN, 0.3, 0.25, 0.7, 0.69].map((value, step) => ({ step, value }));
    let live = null as ReturnType<typeof bestEval>;
    for (const p of series) live = bestEvalAfter(live, p.step, p.value);
    expect(live).toEqual(bestEval(series));
    expect(live).toEqual({ step: 5, value: 0.7 });
    expect(bestEvalAfter(live, 9, undefined)).toBe(live);
  });
});
