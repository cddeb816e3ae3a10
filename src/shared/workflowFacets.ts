/**
 * What the trace viewer offers to filter by for a run: the event kinds and policy roles its own
 * workflow can produce (a math run never shows `search`, a search run never `revise`), and how a
 * member is labelled when its instruction differs from its policy role (a revision is written by
 * the solver policy with the reviser instruction: "reviser (solver)").
 *
 * The lists repeat src/core/workflows (each workflow's `kinds` and `roles`): shared code is bundled
 * into the renderer and must not import core. test/shared/workflowFacets.test.ts keeps them equal
 * to the registry. Pure data.
 */
export interface WorkflowFacets {
  kinds: readonly string[];
  roles: readonly string[];
}

export const WORKFLOW_FACETS = {
  math: { kinds: ['router', 'solve', 'verify', 'revise', 'aggregate'], roles: ['router', 'solver', 'verifier', 'aggregator'] },
  search: { kinds: ['router', 'search', 'verify', 'answer'], roles: ['router', 'searcher', 'verifier', 'answerer'] },
  single: { kinds: ['answer'], roles: ['solver', 'answerer'] },
  // An agent program's calls: every policy role, each event of its role's built-in kind (src/core/external/episodeLog.ts).
  external: {
    kinds: ['router', 'solve', 'verify', 'aggregate', 'search', 'answer'],
    roles: ['router', 'solver', 'verifier', 'aggregator', 'searcher', 'answerer'],
  },
} satisfies Record<string, WorkflowFacets>;

/** Every kind and role (a run of an unknown workflow: offer them all). */
const ALL: WorkflowFacets = {
  kinds: [...new Set(Object.values(WORKFLOW_FACETS).flatMap((f) => f.kinds))],
  roles: [...new Set(Object.values(WORKFLOW_FACETS).flatMap((f) => f.roles))],
};

export function workflowFacets(workflow: string | null | undefined): WorkflowFacets {
  return workflow && Object.hasOwn(WORKFLOW_FACETS, workflow) ? WORKFLOW_FACETS[workflow as keyof typeof WORKFLOW_FACETS] : ALL;
}

/** Event kinds whose members act under another instruction than their role's: kind -> role -> label. */
const INSTRUCTION_OF_KIND: Record<string, Record<string, string>> = {
  revise: { solver: 'reviser' },
};

/** How a member of an event of `kind` is labelled: its role, or "reviser (solver)" where the kind says so. */
export function memberRoleLabel(kind: string, role: string): string {
  const as = INSTRUCTION_OF_KIND[kind]?.[role];
  return as ? `${as} (${role})` : role;
}
