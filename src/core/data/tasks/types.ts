/**
 * The interface every built-in task generator implements: deterministic, fixed train and test
 * splits that never share a question, sized for tiny character-level models.
 */
import type { DatasetRow, Passage } from '../types';

export const TASK_SPLITS = ['train', 'test'] as const;
export type TaskSplit = (typeof TASK_SPLITS)[number];

export interface TaskGenerator {
  name: string;
  description: string;
  /** Which grader and which workflows fit: math (boxed answers) or qa (answer tags, retrieval). */
  domain: 'math' | 'qa';
  /** Difficulty tier, 1 (easiest) upwards, for curricula and reports. */
  tier: number;
  /**
   * Rows of a split. The same name and seed always give the same rows; a smaller `count`
   * gives a prefix of a larger one; train never contains a test question. `count` defaults to
   * the split's full size and is capped by it.
   */
  rows(split: TaskSplit, count?: number): DatasetRow[];
  /** Size of each split. */
  sizes: Record<TaskSplit, number>;
  /** The retrieval corpus the questions are answerable from (qa tasks). */
  corpus?(): Passage[];
}
