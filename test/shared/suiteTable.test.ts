/**
 * The statistics of the suite tables against values worked by hand: the t quantile, the paired
 * difference with its 95% interval and seeds won, and a two-row, two-seed, two-benchmark table
 * (final evaluations only, macro averages, paired differences, cost and grad-norm columns), and
 * what the reports print of it.
 */
import { describe, expect, it } from 'vitest';
import type { StoredEvaluation } from '../../src/shared/records';
import { excludesZero, pairedDifference, tQuantile975 } from '../../src/shared/pairedStats';
import { suiteTableCsv, suiteTableRows } from '../../src/shared/report';
import { buildSuiteTable, formatDifference, gradDynamics, type SuiteTableRun } from '../../src/shared/suites';

describe('paired statistics', () => {
  it('takes t_{0.975} from the table and interpolates beyond df 30', () => {
    expect(tQuantile975(1)).toBe(12.706);
    expect(tQuantile975(2)).toBe(4.303);
    expect(tQuantile975(30)).toBe(2.042);
    expect(tQuantile975(60)).toBeCloseTo(2.0, 9);
    // df 1000: between 120 (1.98) and infinity (1.96), w = (1/120 - 1/1000) / (1/120) = 0.88.
    expect(tQuantile975(1000)).toBeCloseTo(1.98 - 0.88 * 0.02, 9);
    expect(() => tQuantile975(0)).toThrow(/df/);
  });

  it('pairs by seed: mean, t interval and wins', () => {
    // d = 0.1, 0, 0.2 (seed 4 has no partner): mean 0.1, sd 0.1, half-width 4.303 * 0.1 / sqrt(3).
    const d = pairedDifference(
      new Map([
        [1, 0.5],
        [2, 0.6],
        [3, 0.7],
        [4, 0.9],
      ]),
      new Map([
        [1, 0.4],
        [2, 0.6],
        [3, 0.5],
      ]),
    )!;
    const half = (4.303 * 0.1) / Math.sqrt(3);
    expect(d.n).toBe(3);
    expect(d.seeds).toEqual([1, 2, 3]);
    expect(d.mean).toBeCloseTo(0.1, 12);
    expect(d.lo).toBeCloseTo(0.1 - half, 12);
    expect(d.hi).toBeCloseTo(0.1 + half, 12);
    expect(d.wins).toBe(2); // a tie is not a win
    expect(excludesZero(d)).toBe(false);
    // d = 0.2, 0.25, 0.22: mean 0.2233, sd 0.0252, half-width 4.303 * 0.0252 / sqrt(3) = 0.063: above 0.
    expect(
      excludesZero(
        pairedDifference(
          new Map([
            [1, 0.6],
            [2, 0.7],
            [3, 0.62],
          ]),
          new Map([
            [1, 0.4],
            [2, 0.45],
            [3, 0.4],
          ]),
        ),
      ),
    ).toBe(true);
  });

  it('has no interval for one pair and no difference without one', () => {
    expect(pairedDifference(new Map([[1, 0.5]]), new Map([[1, 0.25]]))).toEqual({ n: 1, seeds: [1], mean: 0.25, lo: null, hi: null, wins: 1 });
    expect(pairedDifference(new Map([[1, 0.5]]), new Map([[2, 0.25]]))).toBeNull();
  });
});

const ev = (step: number, benchmark: string, avgAtN: number, passAtN: number, tokensPerQuery = 0): StoredEvaluation => ({
  step,
  benchmark,
  n: 4,
  queries: 10,
  avgAtN,
  passAtN,
  tokensPerQuery,
  callsPerQuery: 3,
  toolCallsPerQuery: 0,
  successesPerMTok: 1000,
  latencyP50Ms: 10,
  latencyP95Ms: 20,
});

// Step 0's evaluations are earlier ones: only step 5's (the final) count.
const runs: SuiteTableRun[] = [
  { label: 'A', seed: 1, runId: 1, evaluations: [ev(0, 'x', 0, 0), ev(5, 'x', 0.5, 1, 10), ev(5, 'y', 0.3, 0.5, 30)], gradNorm: [1, 2, 3, null] },
  { label: 'A', seed: 2, runId: 2, evaluations: [ev(5, 'x', 0.7, 1, 20), ev(5, 'y', 0.1, 0, 40)], gradNorm: [2, 2] },
  { label: 'B', seed: 1, runId: 3, evaluations: [ev(5, 'x', 0.6, 1), ev(5, 'y', 0.4, 1)], gradNorm: [] },
  { label: 'B', seed: 2, runId: 4, evaluations: [ev(5, 'x', 0.8, 1), ev(5, 'y', 0.4, 0.5)], gradNorm: [] },
];

describe('the suite table', () => {
  const t = buildSuiteTable(runs, ['A', 'B', 'C'], 'A');
  const [a, b, c] = t.rows;

  it("takes each run's final evaluation: per benchmark and macro, mean ± sample std over seeds", () => {
    expect(t.benchmarks).toEqual(['x', 'y']);
    expect(a.cells.x.avg.mean).toBeCloseTo(0.6, 12);
    expect(a.cells.x.avg.std).toBeCloseTo(Math.sqrt(0.02), 12); // (0.1^2 + 0.1^2) / 1
    // Macro per run: A (0.5+0.3)/2 = 0.4 and (0.7+0.1)/2 = 0.4; pass 0.75 and 0.5.
    expect(a.macro.avg.mean).toBeCloseTo(0.4, 12);
    expect(a.macro.avg.std).toBeCloseTo(0, 12);
    expect(a.macro.pass.mean).toBeCloseTo(0.625, 12);
    expect(a.macro.pass.std).toBeCloseTo(Math.sqrt(0.03125), 12);
    expect(b.macro.avg.mean).toBeCloseTo(0.55, 12);
    expect(c).toMatchObject({ label: 'C', n: 0, seeds: [] });
  });

  it('gives each row its paired difference against the baseline', () => {
    expect(a.diff).toBeNull();
    // B - A macro avg per seed: 0.5 - 0.4, 0.6 - 0.4 -> 0.1, 0.2: mean 0.15, sd sqrt(0.005), t(1) = 12.706.
    const half = (12.706 * Math.sqrt(0.005)) / Math.sqrt(2);
    expect(b.diff!.avg).toMatchObject({ n: 2, wins: 2 });
    expect(b.diff!.avg!.mean).toBeCloseTo(0.15, 12);
    expect(b.diff!.avg!.lo).toBeCloseTo(0.15 - half, 12);
    expect(b.diff!.avg!.hi).toBeCloseTo(0.15 + half, 12);
    // Pass: 1 - 0.75, 0.75 - 0.5: both 0.25, no spread.
    expect(b.diff!.pass!.lo).toBeCloseTo(0.25, 12);
    expect(c.diff).toEqual({ avg: null, pass: null });
    expect(formatDifference(b.diff!.avg)).toBe(`+15.0 [${((0.15 - half) * 100).toFixed(1)}, +${((0.15 + half) * 100).toFixed(1)}] (2/2)`);
  });

  it('averages cost over benchmarks per run, then over seeds', () => {
    // C_tok: A seed 1 (10+30)/2 = 20, seed 2 (20+40)/2 = 30 -> 25 ± sqrt(50).
    expect(a.cost.cTok.mean).toBeCloseTo(25, 12);
    expect(a.cost.cTok.std).toBeCloseTo(Math.sqrt(50), 12);
    expect(a.cost.uTok.mean).toBe(1000);
    expect(a.cost.p95Ms.mean).toBe(20);
  });

  it('summarises the grad-norm curve: mean, CV, range', () => {
    // Seed 1: [1, 2, 3] mean 2, std 1, CV 0.5; seed 2: [2, 2] mean 2, CV 0.
    expect(gradDynamics([1, 2, 3, null])).toEqual({ mean: 2, cv: 0.5, min: 1, max: 3 });
    expect(a.dynamics.gradMean.mean).toBe(2);
    expect(a.dynamics.gradCv.mean).toBeCloseTo(0.25, 12);
    expect(a.dynamics.gradCv.std).toBeCloseTo(Math.sqrt(0.125), 12);
    expect([a.dynamics.gradMin, a.dynamics.gradMax]).toEqual([1, 3]);
    expect(b.dynamics.gradMean.n).toBe(0);
  });

  it('prints the three tables and a CSV of every figure', () => {
    const [quality, cost, dynamics] = suiteTableRows(t);
    expect(quality.head).toEqual([
      'row',
      'seeds',
      'x Avg@n',
      'x Pass@n',
      'y Avg@n',
      'y Pass@n',
      'macro Avg@n',
      'macro Pass@n',
      'Δ macro Avg@n',
      'Δ macro Pass@n',
    ]);
    expect(quality.rows[0]).toEqual([
      'A',
      '1 2',
      '60.0 ± 14.1',
      '100.0 ± 0.0',
      '20.0 ± 14.1',
      '25.0 ± 35.4',
      '40.0 ± 0.0',
      '62.5 ± 17.7',
      'baseline',
      'baseline',
    ]);
    expect(cost.rows[0]).toEqual(['A', '1000 ± 0', '25 ± 7.07', '3 ± 0', '0 ± 0', '10 ± 0', '20 ± 0']);
    expect(dynamics.rows[0]).toEqual(['A', '2 ± 0', '0.25 ± 0.354', '[1, 3]']);
    const csv = suiteTableCsv(t).trim().split('\n');
    expect(csv).toHaveLength(4);
    const head = csv[0].split(',');
    const rowB = csv[2].split(',');
    expect(Number(rowB[head.indexOf('diff_avg_mean')])).toBeCloseTo(0.15, 12);
    expect(rowB[head.indexOf('diff_avg_wins')]).toBe('2');
  });
});
