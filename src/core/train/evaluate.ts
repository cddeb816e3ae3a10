/**
 * Evaluation: n samples of each query of every eval benchmark, run through the same workflow
 * as training (no updates), summarised as Avg@n, Pass@n, macro averages and cost
 * (src/core/eval/metrics.ts). Who plays the roles is an `EpisodeRunner`: the run's policies
 * through the rollout orchestrator (`modelRunner`, what `evaluate` uses), a Hugging Face model
 * folder (`hfRunner`), or the scripted gold policy (`goldRunner`, src/core/workflows/gold.ts),
 * whose score on a file proves the loaders, prompts, parsers and graders before a model is involved.
 * Asked to (`storeQueries`, the trainer's eval.storeEpisodes / eval.storeQueries), it also returns
 * the store records of the first queries' episodes (evalEpisodes.ts) for the trace viewer.
 *
 * The trainer evaluates through its rollout driver (`evaluateAsync` with `driverRunner`: the same
 * chunks, seeds and records as `evaluateWith`, awaited, so an external program can play them).
 *
 * Tests: test/core/train/trainer.test.ts; the gold runner: test/core/eval/goldRun.test.ts; the
 * Hugging Face runner (tiny random qwen3 fixture): test/cli/evalData.test.ts; stored episodes:
 * test/core/train/evalEpisodes.test.ts.
 */
import type { RunConfig } from '../config';
import { summarizeEvaluation, summaryToMetrics, type EvaluationSummary, type QueryOutcome } from '../eval/metrics';
import { hfPromptIds } from '../policies/hf';
import type { Policies } from '../policies/types';
import { mixSeed } from '../models/random';
import type { PlayHooks, RolloutDriver } from '../rollout/drivers';
import { runRollouts } from '../rollout/orchestrator';
import type { EpisodeRecord, EvaluationRecord } from '../store/records';
import type { HfModel } from '../models/hf/model';
import { sampleHf } from '../models/hf/sampler';
import type { HfTokenizer } from '../models/hf/tokenizer';
import type { HfGenerationConfig } from '../models/hf/types';
import { runEpisode, runLockstep } from '../workflows/drive';
import { goldPolicy } from '../workflows/gold';
import type { Episode, EpisodeResult } from '../workflows/types';
import { createEpisodes, type Environment } from './environment';
import { evalEpisodeRecords, type PlayedEvalEpisode } from './evalEpisodes';

export interface EvaluationResult {
  records: EvaluationRecord[];
  metrics: Record<string, number>;
  summary: EvaluationSummary;
  /** Store records (split 'eval') of the first `storeQueries` queries' episodes of each benchmark; empty unless asked. */
  episodes: EpisodeRecord[];
}

/** One finished episode as evaluation sees it (the model runner's also carry their sampled tokens). */
export interface EvaluatedEpisode extends PlayedEvalEpisode {
  result: EpisodeResult;
  generatedTokens: number;
  latencyMs: number;
}

/** Plays a chunk of episodes to the end; `seed` is the chunk's sampling seed. */
export type EpisodeRunner = (episodes: Episode[], seed: number) => EvaluatedEpisode[];

/** The run's policies, sampled by the rollout orchestrator at the eval temperature. */
export function modelRunner(config: RunConfig, policies: Policies): EpisodeRunner {
  return (episodes, seed) =>
    runRollouts(episodes, { policies }, { temperature: config.eval.temperature, topP: 1, maxNewTokens: config.rollout.maxNewTokens, seed }).episodes;
}

/** The gold policy; its "tokens" are generated characters (the lab's tokenizer is per character). */
export const goldRunner: EpisodeRunner = (episodes) =>
  episodes.map((episode) => {
    const t0 = performance.now();
    const result = runEpisode(episode, goldPolicy);
    const generatedTokens = result.events.reduce((a, e) => a + e.members.reduce((b, m) => b + m.output.length, 0), 0);
    return { result, generatedTokens, latencyMs: performance.now() - t0 };
  });

/** What a Hugging Face model folder gives evaluation (models/hf/load.ts `LoadedHfModel`). */
export interface HfEvalModel {
  model: HfModel;
  tokenizer: HfTokenizer;
  generation: HfGenerationConfig;
}

/**
 * A Hugging Face model plays every member: each member's prompt goes through the model's chat
 * template as training renders it (the role's system instructions, then the state as the user
 * turn; workflow.enableThinking), all pending members of the chunk are sampled as one batch per lockstep
 * round (eval temperature, rollout.maxNewTokens, the folder's stop ids), and the decoded text
 * (special tokens dropped) goes to the workflow's parsers. Tokens are the model's own.
 */
export function hfRunner(m: HfEvalModel, config: RunConfig): EpisodeRunner {
  return (episodes, seed) => {
    const t0 = performance.now();
    const tokens = new Map<string, number>();
    const ended = new Map<string, number>();
    const markEnded = (): void => {
      for (const e of episodes) if (e.done && !ended.has(e.id)) ended.set(e.id, performance.now() - t0);
    };
    let round = 0;
    runLockstep(episodes, (requests) => {
      markEnded();
      // The messages training renders (policies/hf.ts promptIds): the role's system instructions, then the state.
      const enableThinking = config.workflow.enableThinking ?? undefined;
      const prompts = requests.map(({ member }) => hfPromptIds(m.tokenizer, member.instruction, member.prompt, enableThinking, member.role));
      const rows = sampleHf(m.model, prompts, {
        maxNewTokens: config.rollout.maxNewTokens,
        temperature: config.eval.temperature,
        topP: 1,
        stopIds: m.generation.stopIds,
        seed: mixSeed(seed, round++),
      });
      requests.forEach(({ set }, i) => tokens.set(set.episodeId, (tokens.get(set.episodeId) ?? 0) + rows[i].ids.length));
      return rows.map((r) => m.tokenizer.decode(r.ids, { skipSpecialTokens: true }));
    });
    markEnded();
    return episodes.map((e) => ({ result: e.result(), generatedTokens: tokens.get(e.id) ?? 0, latencyMs: ended.get(e.id) ?? 0 }));
  };
}

export function evaluate(env: Environment, config: RunConfig, policies: Policies, step: number, storeQueries = 0): EvaluationResult {
  const runner = config.policies.kind === 'gold' ? goldRunner : modelRunner(config, policies);
  return evaluateWith(env, config, runner, step, undefined, storeQueries);
}

/** Evaluation with the gold policy: needs no model. */
export function evaluateGold(env: Environment, config: RunConfig, step = 0): EvaluationResult {
  return evaluateWith(env, config, goldRunner, step);
}

/** One chunk of an evaluation: a benchmark's queries, their episodes and the chunk's sampling seed. */
interface EvalChunk {
  benchmark: string;
  rows: Environment['evalSets'][number]['rows'];
  /** Index of the chunk's first query within its benchmark. */
  start: number;
  episodes: Episode[];
  seed: number;
}

/**
 * The chunks of an evaluation, in order. Queries go through the sampler in chunks of at most
 * eval.batchEpisodes episodes: one batch of every query's n samples can outgrow the WebAssembly
 * heap on long prompts. The first chunk keeps the unchunked episode ids and seed, so an
 * evaluation that fits one batch is the same as before chunking existed. Episodes are created
 * as each chunk is reached (a generator), as the loop did before.
 */
function* evaluationChunks(env: Environment, config: RunConfig, step: number): Generator<EvalChunk> {
  const perChunk = Math.max(1, Math.floor(config.eval.batchEpisodes / config.eval.n));
  for (const [b, { benchmark, rows }] of env.evalSets.entries()) {
    for (let start = 0, chunk = 0; start < rows.length; start += perChunk, chunk++) {
      const part = rows.slice(start, start + perChunk);
      const prefix = chunk === 0 ? `eval${step}/${benchmark}` : `eval${step}/${benchmark}/c${chunk}`;
      const episodes = createEpisodes(env, config, part, config.eval.n, prefix);
      const seed = chunk === 0 ? mixSeed(config.seed, 0x5eed, step, b) : mixSeed(config.seed, 0x5eed, step, b, chunk);
      yield { benchmark, rows: part, start, episodes, seed };
    }
  }
}

/** Accumulates the played chunks into query outcomes and stored records, then the result. */
class EvaluationTally {
  readonly queries: QueryOutcome[] = [];
  private readonly stored: EpisodeRecord[] = [];
  readonly total: number;
  constructor(
    env: Environment,
    private readonly config: RunConfig,
    private readonly storeQueries: number,
  ) {
    this.total = env.evalSets.reduce((a, s) => a + s.rows.length, 0);
  }

  add(c: EvalChunk, played: readonly EvaluatedEpisode[]): void {
    const n = this.config.eval.n;
    c.rows.forEach((row, q) => {
      const mine = played.slice(q * n, (q + 1) * n);
      if (c.start + q < this.storeQueries) this.stored.push(...evalEpisodeRecords(mine, row.id, c.benchmark));
      const samples = mine.map((e) => ({
        correct: e.result.correct,
        tokens: e.generatedTokens,
        calls: e.result.calls,
        toolCalls: e.result.toolCalls,
        latencyMs: e.latencyMs,
      }));
      this.queries.push({ benchmark: c.benchmark, queryId: row.id, samples });
    });
  }

  result(): EvaluationResult {
    const summary = summarizeEvaluation(this.queries);
    const records: EvaluationRecord[] = summary.benchmarks.map((m) => ({
      benchmark: m.benchmark,
      n: this.config.eval.n,
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
    return { records, metrics: summaryToMetrics(summary), summary, episodes: this.stored };
  }
}

export function evaluateWith(
  env: Environment,
  config: RunConfig,
  runner: EpisodeRunner,
  step: number,
  onProgress?: (done: number, total: number) => void,
  /** Queries per benchmark (the first ones) whose episodes are returned as store records; 0: none. */
  storeQueries = 0,
): EvaluationResult {
  const tally = new EvaluationTally(env, config, storeQueries);
  for (const c of evaluationChunks(env, config, step)) {
    tally.add(c, runner(c.episodes, c.seed));
    onProgress?.(tally.queries.length, tally.total);
  }
  return tally.result();
}

/** Plays a chunk of episodes to the end, asynchronously (the trainer's rollout drivers, rollout/drivers.ts). */
export type AsyncEpisodeRunner = (episodes: Episode[], seed: number) => Promise<EvaluatedEpisode[]>;

/** `evaluateWith` for a runner that awaits (an external program); the same chunks, seeds and records. */
export async function evaluateAsync(
  env: Environment,
  config: RunConfig,
  runner: AsyncEpisodeRunner,
  step: number,
  onProgress?: (done: number, total: number) => void,
  storeQueries = 0,
): Promise<EvaluationResult> {
  const tally = new EvaluationTally(env, config, storeQueries);
  for (const c of evaluationChunks(env, config, step)) {
    tally.add(c, await runner(c.episodes, c.seed));
    onProgress?.(tally.queries.length, tally.total);
  }
  return tally.result();
}

/** The run's rollout driver as an evaluation runner: eval temperature, no top-p, as modelRunner. */
export function driverRunner(config: RunConfig, driver: RolloutDriver, hooks?: PlayHooks): AsyncEpisodeRunner {
  return async (episodes, seed) =>
    (await driver.play(episodes, { temperature: config.eval.temperature, topP: 1, maxNewTokens: config.rollout.maxNewTokens, seed }, 'eval', hooks)).episodes;
}
