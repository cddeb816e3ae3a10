/**
 * Evaluation metrics against numbers worked by hand: Avg@n, Pass@n, the unweighted macro
 * average, cost per query, U_tok (eq. 9) and linear-interpolation percentiles.
 */
import { describe, expect, it } from 'vitest';
import { passAtK, percentile, summarizeEvaluation, summaryToMetrics, type QueryOutcome, type SampleOutcome } from '../../../src/core/eval';

const s = (correct: boolean, tokens: number, latencyMs: number, calls = 3, toolCalls = 0): SampleOutcome => ({
  correct,
  tokens,
  calls,
  toolCalls,
  latencyMs,
});

// Benchmark A: q1 has 2/4 correct, q2 has 0/4 -> Avg = (0.5 + 0) / 2 = 0.25, Pass = 1/2.
// Benchmark B: q3 has 4/4 correct            -> Avg = 1, Pass = 1.
const queries: QueryOutcome[] = [
  { benchmark: 'A', queryId: 'q1', samples: [s(true, 100, 10), s(false, 200, 20), s(true, 100, 30), s(false, 200, 40)] },
  { benchmark: 'A', queryId: 'q2', samples: [s(false, 50, 50, 1, 2), s(false, 50, 60, 1, 2), s(false, 50, 70, 1, 2), s(false, 50, 80, 1, 2)] },
  { benchmark: 'B', queryId: 'q3', samples: [s(true, 1000, 100), s(true, 1000, 100), s(true, 1000, 100), s(true, 1000, 100)] },
];

describe('summarizeEvaluation', () => {
  const sum = summarizeEvaluation(queries);
  const [a, b] = sum.benchmarks;

  it('Avg@n and Pass@n per benchmark', () => {
    expect(a.benchmark).toBe('A');
    expect(a.avgAtN).toBeCloseTo(0.25, 12);
    expect(a.passAtN).toBeCloseTo(0.5, 12);
    expect(b.avgAtN).toBe(1);
    expect(b.passAtN).toBe(1);
  });

  it('macro average is unweighted over benchmarks, not over queries', () => {
    expect(sum.macro.avgAtN).toBeCloseTo((0.25 + 1) / 2, 12); // 0.625; pooled over queries it would be 0.5
    expect(sum.macro.passAtN).toBeCloseTo((0.5 + 1) / 2, 12);
    expect(sum.overall.avgAtN).toBeCloseTo((0.5 + 0 + 1) / 3, 12);
  });

  it('cost per query: mean over queries of the mean per-sample cost', () => {
    // q1 mean tokens = 150, q2 = 50 -> 100; calls q1 = 3, q2 = 1 -> 2; tool calls 0 and 2 -> 1.
    expect(a.tokensPerQuery).toBeCloseTo(100, 12);
    expect(a.callsPerQuery).toBeCloseTo(2, 12);
    expect(a.toolCallsPerQuery).toBeCloseTo(1, 12);
  });

  it('U_tok = 1e6 * sum Avg / sum C_tok', () => {
    // A: (0.5 + 0) / (150 + 50) * 1e6 = 2500. Equals correct samples per token: 2 / (600 + 200) * 1e6.
    expect(a.uTok).toBeCloseTo(2500, 9);
    // pooled: (0.5 + 0 + 1) / (150 + 50 + 1000) * 1e6 = 1250
    expect(sum.overall.uTok).toBeCloseTo(1250, 9);
  });

  it('P50 / P95 latency over samples, linear interpolation', () => {
    // A latencies 10..80 step 10 (8 values): P50 at position 3.5 -> 45; P95 at 6.65 -> 70 + 0.65 * 10 = 76.5
    expect(a.latencyP50Ms).toBeCloseTo(45, 12);
    expect(a.latencyP95Ms).toBeCloseTo(76.5, 12);
  });

  it('flattens into slash-namespaced metric keys', () => {
    const m = summaryToMetrics(sum);
    expect(m['eval/macro/avg']).toBeCloseTo(0.625, 12);
    expect(m['eval/A/u_tok']).toBeCloseTo(2500, 9);
    expect(m['eval/all/pass']).toBeCloseTo(2 / 3, 12);
  });

  it('no tokens gives U_tok null rather than Infinity', () => {
    const z = summarizeEvaluation([{ benchmark: 'Z', queryId: 'z', samples: [s(true, 0, 1)] }]);
    expect(z.benchmarks[0].uTok).toBeNull();
  });
});

describe('percentile and passAtK', () => {
  it('percentile of one value is that value; empty is NaN', () => {
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
    expect(percentile([3, 1, 2], 0)).toBe(1);
    expect(percentile([3, 1, 2], 100)).toBe(3);
  });
  it('unbiased pass@k: n=4, c=1, k=2 is 1 - C(3,2)/C(4,2) = 1 - 3/6', () => {
    expect(passAtK(4, 1, 2)).toBeCloseTo(0.5, 12);
    expect(passAtK(4, 0, 4)).toBe(0);
    expect(passAtK(4, 1, 4)).toBeCloseTo(1, 12);
    expect(() => passAtK(2, 1, 3)).toThrow(/k <= n/);
  });
});
