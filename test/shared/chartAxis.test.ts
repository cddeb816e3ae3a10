/**
 * The curve panels' x axis and pace figures (src/shared/chartAxis.ts): whole-step ticks, wall
 * time as h:mm on round ticks, decades on a log axis, s/step and the ETA.
 */
import { describe, expect, it } from 'vitest';
import { elapsedLabel, logTickLabel, logYRange, paceText, secondsPerStep, stepTickLabel, timeAxis, timeTickStep } from '../../src/shared/chartAxis';

describe('step ticks', () => {
  it('label whole steps only, so a 4-step run never shows 0.5', () => {
    expect([0, 0.5, 1, 1.5, 2, 3].map(stepTickLabel)).toEqual(['0', '', '1', '', '2', '3']);
    expect(stepTickLabel(12000)).toBe('12,000');
  });
});

describe('wall time', () => {
  it('reads h:mm, with seconds when the ticks are finer than a minute', () => {
    expect(elapsedLabel(0, false)).toBe('0:00');
    expect(elapsedLabel(3725, false)).toBe('1:02');
    expect(elapsedLabel(3725, true)).toBe('1:02:05');
    expect(elapsedLabel(59.6, true)).toBe('0:01:00');
    expect(elapsedLabel(-3, true)).toBe('0:00:00');
  });

  it('ticks on round seconds, minutes and hours, about five per axis', () => {
    expect(timeTickStep(40)).toBe(10);
    expect(timeTickStep(600)).toBe(120);
    expect(timeTickStep(5 * 3600)).toBe(3600);
    expect(timeTickStep(0)).toBe(1);
    const short = timeAxis(90);
    expect(short.name).toBe('h:mm:ss');
    expect(short.label(30)).toBe('0:00:30');
    const long = timeAxis(8 * 3600);
    expect(long.name).toBe('h:mm');
    expect(long.interval).toBe(7200);
    expect(long.label(7200)).toBe('2:00');
  });
});

describe('log axis', () => {
  it('spans whole decades around the positive data', () => {
    expect(logYRange(0.02, 3)).toEqual({ min: 0.01, max: 10 });
    expect(logYRange(1, 1)).toEqual({ min: 1, max: 10 });
    expect(logYRange(-1, 5)).toEqual({ min: 1e-3, max: 1 }); // no positive minimum: the default
    expect(logYRange(Infinity, -Infinity)).toEqual({ min: 1e-3, max: 1 });
    expect([1e-4, 0.01, 0.1, 1, 10, 100, 1e4].map(logTickLabel)).toEqual(['1e-4', '0.01', '0.1', '1', '10', '100', '1e4']);
  });
});

describe('pace', () => {
  const pts = (stepsAndSeconds: [number, number][]) => stepsAndSeconds.map(([step, s]) => ({ step, wallTime: 1_700_000_000_000 + s * 1000 }));

  it('is the mean seconds per step over the last steps, and the ETA at that pace', () => {
    expect(secondsPerStep(pts([[0, 0]]))).toBeNull();
    expect(
      secondsPerStep(
        pts([
          [0, 0],
          [1, 2],
          [2, 4],
          [3, 6],
        ]),
      ),
    ).toBe(2);
    // Only the last `window` intervals: a slow start does not weigh on it.
    expect(
      secondsPerStep(
        pts([
          [0, 0],
          [1, 100],
          [2, 101],
          [3, 102],
        ]),
        2,
      ),
    ).toBe(1);
    // Downsampled points (steps apart) still give seconds per step.
    expect(
      secondsPerStep(
        pts([
          [0, 0],
          [10, 30],
        ]),
      ),
    ).toBe(3);
    expect(paceText(2, 30)).toEqual({ pace: '2 s/step', eta: 'ETA 0:01:00' });
    expect(paceText(1.2345, 0)).toEqual({ pace: '1.23 s/step', eta: '' });
    expect(paceText(null, 10)).toEqual({ pace: '', eta: '' });
  });
});
