/**
 * The trace viewer's filter options per workflow (src/shared/workflowFacets.ts) equal what each
 * workflow of the registry declares, and a revision member is labelled as the reviser it is.
 */
import { describe, expect, it } from 'vitest';
import { WORKFLOWS } from '../../src/core/workflows/registry';
import { memberRoleLabel, WORKFLOW_FACETS, workflowFacets } from '../../src/shared/workflowFacets';

describe('workflow facets', () => {
  it('list exactly the kinds and roles of every registered workflow', () => {
    expect(Object.keys(WORKFLOW_FACETS).sort()).toEqual(Object.keys(WORKFLOWS).sort());
    for (const [name, wf] of Object.entries(WORKFLOWS)) {
      const f = workflowFacets(name);
      expect([...f.kinds].sort(), name).toEqual([...wf.kinds].sort());
      expect([...f.roles].sort(), name).toEqual([...wf.roles].sort());
    }
  });

  it('a math run offers no search kinds, a search run no revise', () => {
    expect(workflowFacets('math').kinds).not.toContain('search');
    expect(workflowFacets('search').kinds).not.toContain('revise');
  });

  it('an unknown workflow offers every kind and role', () => {
    expect(workflowFacets('other').kinds).toEqual(expect.arrayContaining(['revise', 'search', 'answer']));
    expect(workflowFacets(undefined).roles).toEqual(expect.arrayContaining(['solver', 'searcher', 'answerer']));
  });

  it('a revise member is the reviser, written by the solver policy; other members keep their role', () => {
    expect(memberRoleLabel('revise', 'solver')).toBe('reviser (solver)');
    expect(memberRoleLabel('solve', 'solver')).toBe('solver');
    expect(memberRoleLabel('verify', 'verifier')).toBe('verifier');
  });
});
