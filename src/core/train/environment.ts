/**
 * The environment side of a run, built once from its config: the workflow, the train and eval
 * task pools (built-in generators), the retrieval tool for QA tasks, and episode factories.
 * Task choice is a pure function of (seed, step), so a resumed run draws the same tasks.
 *
 * Not here: sampling (rollout/), updates (update.ts). Tests: test/core/train/trainer.test.ts.
 */
import type { RunConfig } from '../config';
import { Bm25Retriever, getTaskGenerator, type DatasetRow } from '../data';
import { mixSeed, mulberry32, permutation } from '../models/random';
import { getWorkflow } from '../workflows/registry';
import type { Episode, Workflow, WorkflowTools } from '../workflows/types';

export interface Environment {
  workflow: Workflow;
  tools: WorkflowTools;
  /** Training tasks, the generators' train splits interleaved. */
  trainPool: DatasetRow[];
  /** Evaluation queries per benchmark (a prefix of each test split). */
  evalSets: { benchmark: string; rows: DatasetRow[] }[];
}

export function buildEnvironment(config: RunConfig): Environment {
  const workflow = getWorkflow(config.workflow.name);
  const generators = [...new Set([...config.tasks.train, ...config.tasks.eval])].map((name) => getTaskGenerator(name));
  const corpus = generators.flatMap((g) => g.corpus?.() ?? []);
  const unique = [...new Map(corpus.map((p) => [p.id, p])).values()];
  const tools: WorkflowTools = unique.length ? { search: Bm25Retriever.open(unique) } : {};
  if (config.workflow.name === 'search' && !tools.search) {
    throw new Error(`run config: workflow "search" needs QA tasks with a corpus (kb-single, kb-multi); got ${config.tasks.train.join(', ')}`);
  }
  const train = config.tasks.train.map((name) => getTaskGenerator(name).rows('train'));
  const trainPool: DatasetRow[] = [];
  for (let i = 0; trainPool.length < train.reduce((a, r) => a + r.length, 0); i++) {
    for (const rows of train) if (i < rows.length) trainPool.push(rows[i]);
  }
  const evalSets = config.tasks.eval.map((name) => ({ benchmark: name, rows: getTaskGenerator(name).rows('test', config.eval.queries) }));
  return { workflow, tools, trainPool, evalSets };
}

/** The N distinct training tasks of a step: a seeded draw without replacement. */
export function tasksForStep(env: Environment, config: RunConfig, step: number): DatasetRow[] {
  const order = permutation(env.trainPool.length, mulberry32(mixSeed(config.seed, step)));
  return order.slice(0, Math.min(config.rollout.tasksPerStep, order.length)).map((i) => env.trainPool[i]);
}

/** G episodes per task; ids `<prefix>/t<task>/g<rollout>` are unique within the run. */
export function createEpisodes(env: Environment, config: RunConfig, tasks: readonly DatasetRow[], copies: number, prefix: string): Episode[] {
  return tasks.flatMap((task, t) =>
    Array.from({ length: copies }, (_, g) =>
      env.workflow.createEpisode(
        { id: task.id, question: task.question, answers: task.answers, benchmark: task.benchmark, meta: task.meta },
        { episodeId: `${prefix}/t${t}/g${g}`, config: config.workflow.options, tools: env.tools, seed: `${config.seed}/${prefix}/t${t}/g${g}` },
      ),
    ),
  );
}
