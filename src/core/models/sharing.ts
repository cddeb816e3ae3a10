/**
 * Policy sharing, as a typed registry: which weights play which agent role. `shared`: one model
 * plays every role (the role is told by the marker in its prompt); `per-role`: one model per
 * role, each trained only on its own role's data. The weights themselves are the policies'
 * business (policies/hf.ts: one adapter or one copy per policy id).
 *
 * Tests: test/core/train/hfPolicies.test.ts, test/core/train/hfPerRoleFull.test.ts.
 */
import type { Role } from './vocab';

export const POLICY_SET_KINDS = ['shared', 'per-role'] as const;
export type PolicySetKind = (typeof POLICY_SET_KINDS)[number];

interface PolicySetLayout {
  description: string;
  /** Policy ids and the roles each plays. */
  policies: (roles: readonly Role[]) => { id: string; roles: Role[] }[];
  /**
   * Whether prompts carry the role marker token. A shared model needs it (the only way it knows
   * its role); a per-role model gains nothing from it but carries it too, so that a warm start
   * made on one shared model's marked prompts (resources/warmstart) sees the format it was trained
   * on in every regime, and the regimes compare the training, not the prompt layout.
   */
  roleMarkerInPrompt: boolean;
}

export const POLICY_SET_LAYOUTS = {
  shared: {
    description: 'one set of weights plays every role; the prompt starts with the role marker',
    policies: (roles) => [{ id: 'shared', roles: [...roles] }],
    roleMarkerInPrompt: true,
  },
  'per-role': {
    description: 'one set of weights per role, each trained on its own role only; prompts keep the role marker',
    policies: (roles) => roles.map((r) => ({ id: r, roles: [r] })),
    roleMarkerInPrompt: true,
  },
} satisfies Record<PolicySetKind, PolicySetLayout>;
