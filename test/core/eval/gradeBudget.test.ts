/**
 * The math grader is deterministic: its work bound is a count of operations, not a clock, so a
 * pair gets the same grade on an idle or a loaded machine (a reward must not depend on load, or
 * an exact resume could differ from the uninterrupted run); and integers compare exactly, not
 * within the relative tolerance used for other numbers.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_MAX_OPERATIONS, gradeMath, mathAnswersEqual, numbersEqual } from '../../../src/core/eval';

const boxed = (s: string): string => `so the answer is $\\boxed{${s}}$.`;

/** 64 rational functions, and the same set respelled in reverse order: ~215k operations to match. */
const N = 64;
const SET = Array.from({ length: N }, (_, i) => `\\frac{x^{2}+${i}}{x+1}`).join(',');
const SET_REVERSED = Array.from({ length: N }, (_, i) => `(x^2+${N - 1 - i})/(x+1)`).join(',');

describe('grading is bounded by operations, not by time', () => {
  afterEach(() => vi.restoreAllMocks());

  it('a costly pair (64-item set against its reversed respelling) grades equal within the default bound', () => {
    expect(gradeMath(boxed(SET), SET_REVERSED).correct).toBe(true);
  });

  it('the same verdict when the clock jumps one second per reading (a machine under heavy load)', () => {
    const calm = gradeMath(boxed(SET), SET_REVERSED).correct;
    let t = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => (t += 1000));
    vi.spyOn(Date, 'now').mockImplementation(() => (t += 1000));
    const loaded = gradeMath(boxed(SET), SET_REVERSED).correct;
    expect(loaded).toBe(calm);
    expect(loaded).toBe(true);
  });

  it('a bound too small for the pair counts as not equal, every time (a count, so no flakiness)', () => {
    const verdicts = Array.from({ length: 5 }, () => mathAnswersEqual(SET, SET_REVERSED, { maxOperations: 100_000 }));
    expect(verdicts).toEqual([false, false, false, false, false]);
    expect(mathAnswersEqual(SET, SET_REVERSED, { maxOperations: DEFAULT_MAX_OPERATIONS })).toBe(true);
  });

  it('textually equal answers need no budget; anything else needs some', () => {
    expect(mathAnswersEqual('\\frac{1}{2}', '\\frac{1}{2}', { maxOperations: 0 })).toBe(true);
    expect(mathAnswersEqual('\\frac{1}{2}', '0.5', { maxOperations: 0 })).toBe(false);
    expect(mathAnswersEqual('\\frac{1}{2}', '0.5', { maxOperations: 100 })).toBe(true);
  });
});

describe('integers compare exactly', () => {
  it('3986730 is not 3986729 (a relative 1e-6 would accept it), nor inside a tuple or a set', () => {
    expect(gradeMath(boxed('3986730'), '3986729').correct).toBe(false);
    expect(gradeMath(boxed('3986729'), '3986730').correct).toBe(false);
    expect(gradeMath(boxed('(3986730, 1)'), '(3986729, 1)').correct).toBe(false);
    expect(gradeMath(boxed('\\{1, 3986730\\}'), '\\{3986729, 1\\}').correct).toBe(false);
    expect(gradeMath(boxed('1000001'), '1000000').correct).toBe(false);
  });

  it('the same integer in other spellings still grades equal', () => {
    expect(gradeMath(boxed('3,986,729'), '3986729').correct).toBe(true);
    expect(gradeMath(boxed('3986729.0'), '3986729').correct).toBe(true);
    expect(gradeMath(boxed('\\frac{7973458}{2}'), '3986729').correct).toBe(true);
    expect(gradeMath(boxed('2^{20}'), '1048576').correct).toBe(true);
  });

  it('non-integers keep the relative tolerance, including integers that float arithmetic misses', () => {
    expect(gradeMath(boxed('(\\sqrt{2})^2'), '2').correct).toBe(true); // 2.0000000000000004
    expect(gradeMath(boxed('0.3333333'), '\\frac{1}{3}').correct).toBe(true);
    expect(gradeMath(boxed('0.0000672'), '0.0000673').correct).toBe(false);
  });

  it('numbersEqual: exact on safe integers, tolerant elsewhere, beyond 2^53 tolerant again', () => {
    expect(numbersEqual(3986730, 3986729)).toBe(false);
    expect(numbersEqual(3986729, 3986729)).toBe(true);
    expect(numbersEqual(2.0000000000000004, 2)).toBe(true);
    expect(numbersEqual(1e20, 1e20 * (1 + 1e-9))).toBe(true);
    expect(numbersEqual(NaN, NaN)).toBe(false);
  });
});
