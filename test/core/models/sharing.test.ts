/**
 * Policy sharing layouts (models/sharing.ts): which policy ids exist and which roles each plays.
 * How HfPolicies builds weights for them: test/core/train/hfPolicies.test.ts, hfPerRoleFull.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { POLICY_SET_KINDS, POLICY_SET_LAYOUTS } from '../../../src/core/models/sharing';
import { ROLES } from '../../../src/core/models/vocab';

describe('policy sharing layouts', () => {
  it('shared: one policy plays every role and its prompts carry the role marker', () => {
    expect(POLICY_SET_LAYOUTS.shared.policies(['solver', 'verifier'])).toEqual([{ id: 'shared', roles: ['solver', 'verifier'] }]);
    expect(POLICY_SET_LAYOUTS.shared.roleMarkerInPrompt).toBe(true);
  });

  it("per-role: one policy per role, named after it; prompts keep the marker (the shared warm start's format)", () => {
    const policies = POLICY_SET_LAYOUTS['per-role'].policies(ROLES);
    expect(policies.map((p) => p.id)).toEqual(['router', 'solver', 'verifier', 'aggregator', 'searcher', 'answerer']);
    for (const p of policies) expect(p.roles).toEqual([p.id]);
    expect(POLICY_SET_LAYOUTS['per-role'].roleMarkerInPrompt).toBe(true);
  });

  it("a layout's policies do not share the caller's role list", () => {
    const roles = ['solver' as const];
    const [p] = POLICY_SET_LAYOUTS.shared.policies(roles);
    p.roles.push('router');
    expect(roles).toEqual(['solver']);
  });

  it('every kind has a layout with a description', () => {
    expect([...POLICY_SET_KINDS]).toEqual(['shared', 'per-role']);
    for (const k of POLICY_SET_KINDS) expect(POLICY_SET_LAYOUTS[k].description.length).toBeGreaterThan(10);
  });
});
