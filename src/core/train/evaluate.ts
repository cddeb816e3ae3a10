/**
 * Evaluation of the current policies: n samples of each query of every eval benchmark, run
 * through the same orchestrator and workflow as training (no updates), summarised as Avg@n,
 * Pass@n, macro averages and cost (src/core/eval/metrics.ts).
 *
 * Tests: test/core/train/trainer.test.ts.
 */
import type { RunConfig } from '../config';
import { summarizeEvaluation, summaryToMetrics, type QueryOutcome } from '../eval/metrics';
import type { CharTokenizer } from '../models/tokenizer';
import type { PolicySet } from '../models/policySet';
import { mixSeed } from '../models/random';
import { runRollouts } from '../rollout/orchestrator';
import type { EvaluationRecord } from '../store/records';
import { createEpisodes, type Environment } from './environment';

export interface EvaluationResult {
  records: EvaluationRecord[];
  metrics: Record<string, number>;
}

export function evaluate(env: Environment, config: RunConfig, policies: PolicySet, tokenizer: CharTokenizer, step: number): EvaluationResult {
  const queries: QueryOutcome[] = [];
  env.evalSets.forEach(({ benchmark, rows }, b) => {
    // Queries go through the sampler in chunks of at most eval.batchEpisodes episodes: one batch
    // of every query's n samples can outgrow the WebAssembly heap on long prompts. The first
    // chunk keeps the unchunked episode ids and seed, so an evaluation that fits one batch is
    // the same as before chunking existed.
    const perChunk = Math.max(1, Math.floor(config.eval.batchEpisodes / config.eval.n));
    for (let start = 0, chunk = 0; start < rows.length; start += perChunk, chunk++) {
      const part = rows.slice(start, start + perChunk);
      const prefix = chunk === 0 ? `eval${step}/${benchmark}` : `eval${step}/${benchmark}/c${chunk}`;
      const episodes = createEpisodes(env, config, part, config.eval.n, prefix);
      const batch = runRollouts(episodes, { policies, tokenizer }, {
        temperature: config.eval.temperature,
        topP: 1,
        maxNewTokens: config.rollout.maxNewTokens,
        seed: chunk === 0 ? mixSeed(config.seed, 0x5eed, step, b) : mixSeed(config.seed, 0x5eed, step, b, chunk),
      });
      part.forEach((row, q) => {
        const samples = batch.episodes.slice(q * config.eval.n, (q + 1) * config.eval.n).map((e) => ({
          correct: e.result.correct,
          tokens: e.generatedTokens,
          calls: e.result.calls,
          toolCalls: e.result.toolCalls,
          latencyMs: e.latencyMs,
        }));
        queries.push({ benchmark, queryId: row.id, samples });
      });
    }
  });
  const summary = summarizeEvaluation(queries);
  const records: EvaluationRecord[] = summary.benchmarks.map((m) => ({
    benchmark: m.benchmark,
    n: config.eval.n,
    queries: m.queries,
    avgAtN: m.avgAtN,
    passAtN: m.passAtN,
    tokensPerQuery: m.tokensPerQuery,
    callsPerQuery: m.callsPerQuery,
    toolCallsPerQuery: m.toolCallsPerQuery,
    successesPerMTok: m.uTok ?? 0,
    latencyP50Ms: m.latencyP50Ms,
    latencyP95Ms: m.latencyP95Ms,
  }));
  return { records, metrics: summaryToMetrics(summary) };
}
