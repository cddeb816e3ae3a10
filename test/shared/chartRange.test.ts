/**
 * The curve panels' y axis and faint colour (src/shared/chartRange.ts): nice bounds around the
 * data, kept while live points stay inside them, constant series given a readable band, labels
 * without float noise, and colours pre-mixed with the background.
 */
import { describe, expect, it } from 'vitest';
import { keepYRange, mixColor, niceStep, niceYRange, tickLabel } from '../../src/shared/chartRange';

describe('niceYRange', () => {
  it('contains the data with some room, bounds on multiples of a 1-2-5 step', () => {
    const r = niceYRange(-0.93, 1.07);
    expect(r.min).toBeLessThan(-0.93);
    expect(r.max).toBeGreaterThan(1.07);
    expect([0.5, 1]).toContain(r.interval);
    expect(Number.isInteger(Math.round((r.min / r.interval) * 1e9) / 1e9)).toBe(true);
    expect(Number.isInteger(Math.round((r.max / r.interval) * 1e9) / 1e9)).toBe(true);
    expect((r.max - r.min) / r.interval).toBeLessThanOrEqual(8);
  });

  it('has no float noise in its bounds', () => {
    const r = niceYRange(0.1, 0.3);
    expect(String(r.min)).not.toMatch(/000000|99999/);
    expect(String(r.max)).not.toMatch(/000000|99999/);
  });

  it('gives a constant series (float noise of 1e-17) a band of 10% of its value, not a zig-zag', () => {
    const r = niceYRange(0.5, 0.5 + 1e-17);
    expect(r.min).toBeLessThanOrEqual(0.45);
    expect(r.max).toBeGreaterThanOrEqual(0.55);
    expect(r.max - r.min).toBeLessThan(0.2);
    const zero = niceYRange(0, 0);
    expect(zero.min).toBe(0);
    expect(zero.max).toBeGreaterThan(0);
  });

  it('gives data that never go below 0 no negative axis, and shares no axis above 1', () => {
    // A share between 0 and 0.98 once drew from -0.05 to 1.05.
    expect(niceYRange(0, 0.98)).toMatchObject({ min: 0 });
    expect(niceYRange(0, 0.98).max).toBeGreaterThan(1);
    expect(niceYRange(0, 0.98, 1)).toMatchObject({ min: 0, max: 1 });
    expect(niceYRange(0.01, 0.07).min).toBe(0);
    // Data below 0 keep their room below; data past the ceiling are never cut.
    expect(niceYRange(-0.5, 0.5).min).toBeLessThan(-0.5);
    expect(niceYRange(0.2, 1.3, 1).max).toBeGreaterThanOrEqual(1.3);
  });

  it('no finite data: about [0, 1]', () => {
    const r = niceYRange(Infinity, -Infinity);
    expect(r.min).toBeLessThanOrEqual(0);
    expect(r.max).toBeGreaterThanOrEqual(1);
  });

  it('works on large and tiny magnitudes', () => {
    expect(niceYRange(100_000, 250_000).interval).toBe(50_000);
    expect(niceYRange(1e-6, 3e-6).interval).toBeCloseTo(5e-7, 20);
  });
});

describe('keepYRange', () => {
  it('keeps the same range (same object) while live points stay inside it', () => {
    const r = niceYRange(0, 1);
    expect(keepYRange(0.05, 0.98, r)).toBe(r);
  });

  it('moves when a point leaves the range', () => {
    const r = niceYRange(0, 1);
    const next = keepYRange(0, 3, r);
    expect(next).not.toBe(r);
    expect(next.max).toBeGreaterThanOrEqual(3);
  });

  it('shrinks when the data fill a small part of it (a zoom, a replaced line)', () => {
    const r = niceYRange(0, 100);
    expect(keepYRange(40, 45, r).max).toBeLessThan(50);
  });
});

describe('niceStep and tickLabel', () => {
  it('rounds up on the 1-2-5 scale', () => {
    expect(niceStep(0.13)).toBeCloseTo(0.2);
    expect(niceStep(3)).toBe(5);
    expect(niceStep(7)).toBe(10);
    expect(niceStep(1)).toBe(1);
  });

  it("labels with the step's decimals, no -0", () => {
    const r = niceYRange(-0.93, 1.07);
    expect(tickLabel(0.5, { ...r, digits: 1 })).toBe('0.5');
    expect(tickLabel(-0, { ...r, digits: 1 })).toBe('0.0');
    expect(tickLabel(-1e-17, { ...r, digits: 2 })).toBe('0.00');
  });
});

describe('mixColor', () => {
  it('is the colour over the background at alpha, opaque', () => {
    expect(mixColor('#ffffff', '#000000', 0.3)).toBe('#4d4d4d');
    expect(mixColor('#8fb8ff', '#171b24', 1)).toBe('#8fb8ff');
    expect(mixColor('#8fb8ff', '#171b24', 0)).toBe('#171b24');
  });
});
