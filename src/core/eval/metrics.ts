/**
 * Evaluation metrics from per-query sample outcomes (paper section 5, "Metric", and 5.6):
 * Avg@n (mean fraction of correct samples), Pass@n (fraction of queries solved at least once),
 * per benchmark and as the unweighted macro average over benchmarks; cost per query (generated
 * tokens, policy calls, tool calls); successes per million generated tokens (U_tok, eq. 9);
 * P50 / P95 latency.
 *
 * Pure functions over plain numbers; no I/O. Not here: grading (grade.ts) or running episodes.
 * Conventions decided here: a query's C_tok is the mean generated team tokens of one of its
 * samples, so U_tok = 1e6 * sum_x Avg(x) / sum_x C_tok(x), which is correct samples per
 * million generated tokens when every query has the same n. Percentiles interpolate linearly
 * between order statistics (numpy's default). Tested by test/core/eval/metrics.test.ts with
 * numbers worked by hand.
 */

/** One sampled episode (or response) for one query. */
export interface SampleOutcome {
  /** Graded correct (for QA, EM or F1 above a threshold, decided by the caller). */
  correct: boolean;
  /** Generated team tokens, sum over events and members (C_tok of eq. 8). */
  tokens: number;
  /** Policy calls, sum over events of K_e (C_call). */
  calls: number;
  /** Tool calls such as retrievals (C_tool). */
  toolCalls: number;
  /** Wall-clock latency of the episode, ms. */
  latencyMs: number;
}

/** All samples of one evaluation query. */
export interface QueryOutcome {
  benchmark: string;
  queryId: string;
  samples: readonly SampleOutcome[];
}

export interface BenchmarkMetrics {
  benchmark: string;
  queries: number;
  /** Samples per query (mean, in case n differs between queries). */
  samplesPerQuery: number;
  /** Mean over queries of the fraction of correct samples, in [0, 1]. */
  avgAtN: number;
  /** Fraction of queries with at least one correct sample, in [0, 1]. */
  passAtN: number;
  /** Mean over queries of the mean per-sample cost. */
  tokensPerQuery: number;
  callsPerQuery: number;
  toolCallsPerQuery: number;
  /** Correct samples per million generated tokens (eq. 9); null when no tokens were generated. */
  uTok: number | null;
  latencyP50Ms: number;
  latencyP95Ms: number;
}

export interface EvaluationSummary {
  /** One row per benchmark, in first-seen order. */
  benchmarks: BenchmarkMetrics[];
  /** Unweighted mean of the per-benchmark Avg@n and Pass@n. */
  macro: { avgAtN: number; passAtN: number };
  /** All queries pooled (cost and U_tok are naturally pooled quantities). */
  overall: BenchmarkMetrics;
}

/** Fraction of correct samples of one query (0 for a query without samples). */
export function avgAtN(samples: readonly SampleOutcome[]): number {
  if (samples.length === 0) return 0;
  return samples.filter((s) => s.correct).length / samples.length;
}

/** 1 when at least one sample of the query is correct. */
export function passAtN(samples: readonly SampleOutcome[]): number {
  return samples.some((s) => s.correct) ? 1 : 0;
}

/**
 * Unbiased pass@k from n samples with c correct (Chen et al., 2021): 1 - C(n-c, k) / C(n, k),
 * computed as a running product to stay finite. Equals passAtN when k = n.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (!(k >= 1 && k <= n && c >= 0 && c <= n)) throw new Error(`passAtK: need 1 <= k <= n and 0 <= c <= n, got n=${n} c=${c} k=${k}`);
  if (n - c < k) return 1;
  let miss = 1;
  for (let i = n - c + 1; i <= n; i++) miss *= 1 - k / i;
  return 1 - miss;
}

/** Linear-interpolation percentile (numpy default), p in [0, 100]; NaN for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (Math.min(100, Math.max(0, p)) / 100) * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

function mean(xs: readonly number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

function perSampleMean(q: QueryOutcome, pick: (s: SampleOutcome) => number): number {
  return mean(q.samples.map(pick));
}

/** Metrics of one set of queries (one benchmark, or everything pooled). */
export function benchmarkMetrics(benchmark: string, queries: readonly QueryOutcome[]): BenchmarkMetrics {
  const avgs = queries.map((q) => avgAtN(q.samples));
  const tokens = queries.map((q) => perSampleMean(q, (s) => s.tokens));
  const tokenSum = tokens.reduce((a, b) => a + b, 0);
  const latencies = queries.flatMap((q) => q.samples.map((s) => s.latencyMs));
  return {
    benchmark,
    queries: queries.length,
    samplesPerQuery: mean(queries.map((q) => q.samples.length)),
    avgAtN: mean(avgs),
    passAtN: mean(queries.map((q) => passAtN(q.samples))),
    tokensPerQuery: mean(tokens),
    callsPerQuery: mean(queries.map((q) => perSampleMean(q, (s) => s.calls))),
    toolCallsPerQuery: mean(queries.map((q) => perSampleMean(q, (s) => s.toolCalls))),
    uTok: tokenSum > 0 ? (1e6 * avgs.reduce((a, b) => a + b, 0)) / tokenSum : null,
    latencyP50Ms: percentile(latencies, 50),
    latencyP95Ms: percentile(latencies, 95),
  };
}

/** Per-benchmark metrics, their unweighted macro average, and the pooled totals. */
export function summarizeEvaluation(queries: readonly QueryOutcome[]): EvaluationSummary {
  const byBench = new Map<string, QueryOutcome[]>();
  for (const q of queries) {
    const list = byBench.get(q.benchmark);
    if (list) list.push(q);
    else byBench.set(q.benchmark, [q]);
  }
  const benchmarks = [...byBench].map(([name, qs]) => benchmarkMetrics(name, qs));
  return {
    benchmarks,
    macro: {
      avgAtN: mean(benchmarks.map((b) => b.avgAtN)),
      passAtN: mean(benchmarks.map((b) => b.passAtN)),
    },
    overall: benchmarkMetrics('all', queries),
  };
}

/** Flatten a summary into slash-namespaced metric keys (`eval/<bench>/avg`, `eval/macro/pass`). */
export function summaryToMetrics(summary: EvaluationSummary): Record<string, number> {
  const out: Record<string, number> = {
    'eval/macro/avg': summary.macro.avgAtN,
    'eval/macro/pass': summary.macro.passAtN,
  };
  for (const b of [...summary.benchmarks, summary.overall]) {
    const k = `eval/${b.benchmark}`;
    out[`${k}/avg`] = b.avgAtN;
    out[`${k}/pass`] = b.passAtN;
    out[`${k}/tokens_per_query`] = b.tokensPerQuery;
    out[`${k}/calls_per_query`] = b.callsPerQuery;
    out[`${k}/tool_calls_per_query`] = b.toolCallsPerQuery;
    if (b.uTok !== null) out[`${k}/u_tok`] = b.uTok;
    out[`${k}/latency_p50_ms`] = b.latencyP50Ms;
    out[`${k}/latency_p95_ms`] = b.latencyP95Ms;
  }
  return out;
}
