/**
 * The report palette (src/shared/palette.ts): CIEDE2000 checked against published reference
 * pairs, and every two of the eight colours far apart (the old palette's orange and red were not).
 */
import { describe, expect, it } from 'vitest';
import { deltaE2000, hexToLab, minPairDifference, REPORT_PALETTE } from '../../src/shared/palette';

describe('CIEDE2000', () => {
  // Sharma, Wu, Dalal (2005), Table 1: pairs 1, 7, 13, 17, 25 and 34.
  const pairs: [number[], number[], number][] = [
    [[50, 2.6772, -79.7751], [50, 0, -82.7485], 2.0425],
    [[50, 0, 0], [50, -1, 2], 2.3669],
    [[50, 2.5, 0], [56, -27, -3], 31.903],
    [[50, 2.5, 0], [50, 0, -2.5], 4.3065],
    [[60.2574, -34.0099, 36.2677], [60.4626, -34.1751, 39.4387], 1.2644],
    [[2.0776, 0.0795, -1.135], [0.9033, -0.0636, -0.5514], 0.9082],
  ];
  it('matches the reference pairs to 4 decimals', () => {
    for (const [a, b, want] of pairs) {
      expect(deltaE2000(a, b)).toBeCloseTo(want, 4);
      expect(deltaE2000(b, a)).toBeCloseTo(want, 4);
    }
  });
  it('converts sRGB to Lab (white, black, pure red)', () => {
    expect(hexToLab('#ffffff').map((v) => Math.round(v) + 0)).toEqual([100, 0, 0]);
    expect(hexToLab('#000000').map((v) => Math.round(v) + 0)).toEqual([0, 0, 0]);
    expect(hexToLab('#ff0000').map((v) => Math.round(v) + 0)).toEqual([53, 80, 67]);
  });
});

describe('the report palette', () => {
  it('keeps eight runs apart: every pair differs by more than 30', () => {
    expect(REPORT_PALETTE).toHaveLength(8);
    expect(minPairDifference(REPORT_PALETTE)).toBeGreaterThan(30);
  });
  it('is visible on white: no colour lighter than L* 70', () => {
    for (const c of REPORT_PALETTE) expect(hexToLab(c)[0]).toBeLessThan(70);
  });
  it('the check is not vacuous: the previous palette (orange #f28e2b, red #e15759, pink #ff9da7) fails it', () => {
    expect(minPairDifference(['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7'])).toBeLessThan(30);
  });
});
