/**
 * bench/uiRuns: a set's medians and ranges (the figure ui-set prints and the README quotes). The
 * runs are written by hand: odd and even set sizes, a figure whose median is not the middle run's,
 * and the load carried through like any other figure.
 */
import { describe, expect, it } from 'vitest';
import { setSummary, type Figures } from '../../bench/uiRuns';

const run = (dashboard: number, floor: number, load: number): Figures => ({
  dashboard_ms: dashboard,
  render_ms: dashboard * 0.6,
  update_ms: dashboard * 0.4,
  dashboard_cpu_ms: dashboard,
  echarts_floor_ms: floor,
  first_open_ms: 150,
  trace_step_ms: 22,
  ratio: dashboard / floor,
  cpu_ratio: 1,
  excess_ms: dashboard - floor,
  load,
});

describe('setSummary', () => {
  it('gives each figure the median over the runs and its range, the runs in any order', () => {
    const s = setSummary([run(90, 60, 0.5), run(75, 60, 0.2), run(80, 50, 0.9)]);
    expect(s.dashboard_ms).toEqual({ median: 80, min: 75, max: 90 });
    expect(s.echarts_floor_ms).toEqual({ median: 60, min: 50, max: 60 });
    // The ratios' median is taken over the runs' own ratios: 1.5, 1.25 and 1.6 -> 1.5, not 80 / 60.
    expect(s.ratio).toEqual({ median: 1.5, min: 1.25, max: 1.6 });
    expect(s.load).toEqual({ median: 0.5, min: 0.2, max: 0.9 });
    // The excess likewise: 30, 15 and 30 ms -> 30, not 80 - 60 = 20.
    expect(s.excess_ms).toEqual({ median: 30, min: 15, max: 30 });
  });
  it('takes the mean of the middle two for an even number of runs, and refuses an empty set', () => {
    expect(setSummary([run(70, 50, 0), run(90, 50, 0), run(80, 50, 0), run(100, 50, 0)]).dashboard_ms).toEqual({ median: 85, min: 70, max: 100 });
    expect(setSummary([run(70, 50, 0.1)]).ratio).toEqual({ median: 1.4, min: 1.4, max: 1.4 });
    expect(() => setSummary([])).toThrow('no runs');
  });
});
