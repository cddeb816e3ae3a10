/**
 * The pure helpers the dashboard, compare view and reports share (src/shared/analysis.ts):
 * bias-corrected EMA, config diffs, and the paper-style eval table over seeds.
 */
import { describe, expect, it } from 'vitest';
import { configDiff, emaSmooth, evalTable, formatMeanStd, sampleStd } from '../../src/shared/analysis';
import type { StoredEvaluation } from '../../src/shared/records';

const ev = (step: number, benchmark: string, avg: number, pass: number): StoredEvaluation => ({
  step,
  benchmark,
  n: 4,
  queries: 8,
  avgAtN: avg,
  passAtN: pass,
  tokensPerQuery: 0,
  callsPerQuery: 0,
  toolCallsPerQuery: 0,
  successesPerMTok: 0,
  latencyP50Ms: 0,
  latencyP95Ms: 0,
});

describe('shared analysis', () => {
  it('EMA with bias correction: a constant stays constant from the first point', () => {
    expect(emaSmooth([2, 2, 2], 0.9).map((v) => Number(v!.toFixed(12)))).toEqual([2, 2, 2]);
  });

  it('EMA: weight 0 is the raw series; NaN (null) stays a gap and does not advance the average', () => {
    expect(emaSmooth([1, 3], 0)).toEqual([1, 3]);
    const s = emaSmooth([1, null, 3], 0.5);
    expect(s[1]).toBeNull();
    expect(s[2]).toBeCloseTo((0.5 * 0.5 * 1 + 0.5 * 3) / (1 - 0.25), 12);
  });

  it('config diff lists changed leaves with before and after', () => {
    expect(configDiff({ a: { b: 1, c: [1] }, d: 'x' }, { a: { b: 2, c: [1] }, d: 'x' })).toEqual([{ path: 'a.b', before: 1, after: 2 }]);
  });

  it('eval table: runs differing only in seed form one row, mean ± sample std of the final evaluation', () => {
    const config = (seed: number, lr = 1) => ({ seed, name: `x-s${seed}`, optimizer: { lr } });
    const t = evalTable([
      { runId: 1, name: 'x-s1', seed: 1, config: config(1), evaluations: [ev(0, 'a', 0, 0), ev(4, 'a', 0.5, 1), ev(4, 'b', 0.1, 0)] },
      { runId: 2, name: 'x-s2', seed: 2, config: config(2), evaluations: [ev(4, 'a', 0.7, 1), ev(4, 'b', 0.3, 1)] },
      { runId: 3, name: 'y-s1', seed: 1, config: config(1, 2), evaluations: [ev(4, 'a', 0.2, 0)] },
    ]);
    expect(t.benchmarks).toEqual(['a', 'b']);
    expect(t.rows).toHaveLength(2);
    const [x] = t.rows;
    expect(x.runIds).toEqual([1, 2]);
    expect(x.cells.a.avg.mean).toBeCloseTo(0.6);
    expect(x.cells.a.avg.std).toBeCloseTo(sampleStd([0.5, 0.7]));
    expect(x.macro.avg.mean).toBeCloseTo((0.3 + 0.5) / 2);
    expect(formatMeanStd(x.cells.a.avg)).toBe('60.0 ± 14.1');
    expect(formatMeanStd(t.rows[1].cells.a.avg)).toBe('20.0');
  });
});
