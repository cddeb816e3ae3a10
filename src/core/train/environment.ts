/**
 * The environment side of a run, built once from its config: the workflow, the train and eval
 * task pools, the retrieval tool for QA tasks, and episode factories. Each task entry is a
 * built-in generator (its train split for training, a prefix of eval.queries of its test split
 * for evaluation) or a dataset file (every row, or `limit`, for both; src/core/data/datasetTasks.ts,
 * which refuses a file whose content hash changed since the run was created). The search tool
 * is the FTS5 index of `workflow.options.corpus` when given (kept beside the lab database, keyed
 * by the file's hash: src/core/data/corpusIndex.ts), else an in-memory index of the tasks' own
 * corpora (the knowledge base, the paragraphs HotpotQA / 2Wiki / MuSiQue records carry).
 * Task choice is a pure function of (seed, step), so a resumed run draws the same tasks.
 *
 * Not here: sampling (rollout/), updates (update.ts). Tests: test/core/train/trainer.test.ts,
 * test/core/data/datasetTasks.test.ts (dataset entries, resume refusal).
 */
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { RunConfig } from '../config';
import { Bm25Retriever, getTaskGenerator, type DatasetRow, type Passage } from '../data';
import { openCorpusIndex, type CorpusProgress } from '../data/corpusIndex';
import { assertDatasetUnchanged, datasetTaskName, loadDatasetTask, missingDataSlots, missingDataSlotsMessage } from '../data/datasetTasks';
import { mixSeed, mulberry32, permutation } from '../models/random';
import { getWorkflow } from '../workflows/registry';
import type { Episode, Workflow, WorkflowTools } from '../workflows/types';

export interface Environment {
  workflow: Workflow;
  tools: WorkflowTools;
  /** Training tasks, the entries' rows interleaved. */
  trainPool: DatasetRow[];
  /** Evaluation queries per benchmark. */
  evalSets: { benchmark: string; rows: DatasetRow[] }[];
}

export interface EnvironmentOptions {
  /** train (default): the trainer; eval: evaluation only, where the gold policy may play. */
  purpose?: 'train' | 'eval';
  /** Where corpus indexes live (`<db>.corpora`); default derived from runDir, else the temp folder. */
  indexDir?: string;
  /** The run's folder `<dir>/<db>.runs/<id>`: the index folder is then `<dir>/<db>.corpora`. */
  runDir?: string;
  /** Progress of a corpus index build (the CLI's progress bar). */
  onIndexProgress?: (p: CorpusProgress) => void;
}

type TaskEntry = RunConfig['tasks']['train'][number];

interface LoadedEntry {
  name: string;
  domain: 'math' | 'qa';
  train(): DatasetRow[];
  eval(queries: number): DatasetRow[];
  corpus: Passage[];
}

/** Entry kinds: a generator name or a dataset file (a registry of two, keyed by the entry's type). */
const ENTRY_LOADERS = {
  string: (name: string): LoadedEntry => {
    const g = getTaskGenerator(name);
    return { name: g.name, domain: g.domain, train: () => g.rows('train'), eval: (n) => g.rows('test', n), corpus: g.corpus?.() ?? [] };
  },
  object: (task: Exclude<TaskEntry, string>): LoadedEntry => {
    const file = loadDatasetTask(task);
    return { name: datasetTaskName(task), domain: file.domain, train: () => file.rows, eval: () => file.rows, corpus: file.passages };
  },
};

function loadEntry(entry: TaskEntry): LoadedEntry {
  return typeof entry === 'string' ? ENTRY_LOADERS.string(entry) : ENTRY_LOADERS.object(entry);
}

/** `<dir>/<db>.runs/<id>` -> `<dir>/<db>.corpora`. */
export function corpusIndexDirForRunDir(runDir: string): string {
  const runsRoot = dirname(runDir);
  return join(dirname(runsRoot), `${basename(runsRoot).replace(/\.runs$/, '')}.corpora`);
}

export function buildEnvironment(config: RunConfig, options: EnvironmentOptions = {}): Environment {
  if (config.policies.kind === 'gold' && (options.purpose ?? 'train') === 'train') {
    throw new Error(
      'run config: field "policies.kind" = "gold": the gold policy is a scripted dry run that cannot be trained; evaluate with it instead: srpo-lab eval --config FILE --policy gold',
    );
  }
  const missing = missingDataSlots(config);
  if (missing.length) throw new Error(`run config: field "tasks.paths": ${missingDataSlotsMessage(missing)}`);
  const workflow = getWorkflow(config.workflow.name);
  const wfOptions = config.workflow.options as { corpus?: string; corpusSha256?: string; domain?: 'math' | 'qa' };
  const train = config.tasks.train.map(loadEntry);
  const evals = config.tasks.eval.map(loadEntry);
  for (const e of [...train, ...evals]) {
    const wanted = config.workflow.name === 'single' ? [wfOptions.domain ?? 'math'] : workflow.domains;
    if (!wanted.includes(e.domain)) {
      throw new Error(
        `run config: task "${e.name}" is ${e.domain}, but workflow "${config.workflow.name}" takes ${wanted.join(' or ')} tasks${config.workflow.name === 'single' ? ' (set workflow.options.domain)' : ''}`,
      );
    }
  }

  let tools: WorkflowTools = {};
  if (wfOptions.corpus) {
    const sha256 = assertDatasetUnchanged(wfOptions.corpus, wfOptions.corpusSha256, 'corpus');
    const dir = options.indexDir ?? (options.runDir ? corpusIndexDirForRunDir(options.runDir) : join(tmpdir(), 'srpo-lab-corpora'));
    tools = { search: openCorpusIndex(wfOptions.corpus, { dir, sha256, onProgress: options.onIndexProgress }) };
  } else {
    const corpus = [...train, ...evals].flatMap((e) => e.corpus);
    const unique = [...new Map(corpus.map((p) => [p.id, p])).values()];
    if (unique.length) tools = { search: Bm25Retriever.open(unique) };
  }
  if (config.workflow.name === 'search' && !tools.search) {
    throw new Error(
      `run config: workflow "search" needs a corpus: set workflow.options.corpus to a corpus file, or use tasks that bring one (kb-single, kb-multi, HotpotQA / 2Wiki / MuSiQue files); got ${train.map((e) => e.name).join(', ')}`,
    );
  }
  const trainRows = train.map((e) => e.train());
  const trainPool: DatasetRow[] = [];
  const longest = Math.max(0, ...trainRows.map((r) => r.length));
  for (let i = 0; i < longest; i++) {
    for (const rows of trainRows) if (i < rows.length) trainPool.push(rows[i]);
  }
  const evalSets = evals.map((e) => ({ benchmark: e.name, rows: e.eval(config.eval.queries) }));
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
