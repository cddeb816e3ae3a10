/**
 * The registry of workflows (one file each behind the `Workflow` interface). A new workflow is
 * one file plus one line here; `getWorkflow` is the only lookup and an unknown name lists the
 * valid ones.
 */
import { externalWorkflow } from './external';
import { mathWorkflow } from './math';
import { searchWorkflow } from './search';
import { singleWorkflow } from './single';
import type { Workflow } from './types';

export const WORKFLOW_NAMES = ['math', 'search', 'single', 'external'] as const;
export type WorkflowName = (typeof WORKFLOW_NAMES)[number];

export const WORKFLOWS = {
  math: mathWorkflow,
  search: searchWorkflow,
  single: singleWorkflow,
  external: externalWorkflow,
} satisfies Record<WorkflowName, Workflow>;

export function getWorkflow(name: string): Workflow {
  if (!Object.hasOwn(WORKFLOWS, name)) throw new Error(`unknown workflow "${name}"; valid workflows: ${WORKFLOW_NAMES.join(', ')}`);
  return WORKFLOWS[name as WorkflowName];
}
