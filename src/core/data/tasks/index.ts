/**
 * The registry of built-in task generators: arithmetic tiers (math) and knowledge-base QA
 * (single- and multi-hop). A new task is one file plus one line here; `getTaskGenerator` is the
 * only lookup and an unknown name lists the valid ones.
 */
import { arithGenerator } from './arith';
import { kbGenerator, type KbSizes } from './kb';
import type { TaskGenerator } from './types';

export const TASK_NAMES = ['arith-digits', 'arith-chain', 'arith-easy', 'arith-medium', 'arith-hard', 'kb-single', 'kb-multi'] as const;
export type TaskName = (typeof TASK_NAMES)[number];

export interface TaskOptions {
  /** Seed of the generated data (default 'v1'); a different seed is a different benchmark. */
  seed?: string | number;
  /** Knowledge-base sizes (kb-* only). */
  kbSizes?: KbSizes;
}

export const TASKS = {
  'arith-digits': (o) => arithGenerator('arith-digits', o.seed),
  'arith-chain': (o) => arithGenerator('arith-chain', o.seed),
  'arith-easy': (o) => arithGenerator('arith-easy', o.seed),
  'arith-medium': (o) => arithGenerator('arith-medium', o.seed),
  'arith-hard': (o) => arithGenerator('arith-hard', o.seed),
  'kb-single': (o) => kbGenerator('kb-single', o.seed, o.kbSizes),
  'kb-multi': (o) => kbGenerator('kb-multi', o.seed, o.kbSizes),
} satisfies Record<TaskName, (options: TaskOptions) => TaskGenerator>;

export function getTaskGenerator(name: string, options: TaskOptions = {}): TaskGenerator {
  if (!Object.hasOwn(TASKS, name)) throw new Error(`unknown task "${name}"; valid tasks: ${TASK_NAMES.join(', ')}`);
  return TASKS[name as TaskName](options);
}

export type { TaskGenerator, TaskSplit } from './types';
export { TASK_SPLITS } from './types';
export { ARITH_TIERS, arithGenerator, evaluateTree, formatExpression, type ArithTier } from './arith';
export { DEFAULT_KB_SIZES, KB_BENCHMARKS, generateKnowledgeBase, kbGenerator, knowledgeBaseCorpus, type KbHop, type KbSizes, type KnowledgeBase } from './kb';
