/**
 * Policy sets: which weights play which agent role. `shared`: one model plays every role (the
 * role is told by the marker token in its prompt); `per-role`: one model per role, each trained
 * only on its own role's data. Each policy has an id and a version the trainer bumps after every
 * update of its weights (`bumpVersion`), so rollouts can record which version produced them.
 *
 * Not here: the optimiser state (the trainer owns it), saving (checkpoint.ts saves one model;
 * a set is saved as one checkpoint directory per policy id).
 * Tests: test/core/models/policySet.test.ts.
 */
import type { ModelConfig } from './config';
import { ROLES, type Role } from './tokenizer';
import { Transformer } from './transformer';

export const POLICY_SET_KINDS = ['shared', 'per-role'] as const;
export type PolicySetKind = (typeof POLICY_SET_KINDS)[number];

export interface Policy {
  /** 'shared', or the role name for per-role sets. */
  readonly id: string;
  readonly model: Transformer;
  /** Roles this policy plays. */
  readonly roles: readonly Role[];
  /** Incremented by the trainer after every update of the weights; 0 at creation. */
  version: number;
}

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

export class PolicySet {
  readonly kind: PolicySetKind;
  readonly roleMarkerInPrompt: boolean;
  private readonly byId = new Map<string, Policy>();
  private readonly byRole = new Map<Role, Policy>();

  /**
   * Builds the set with fresh models. Per-role policies get seeds config.seed + index, so they
   * do not start identical (warm start makes them diverge anyway).
   */
  constructor(kind: PolicySetKind, config: ModelConfig, roles: readonly Role[] = ROLES) {
    if (!Object.hasOwn(POLICY_SET_LAYOUTS, kind)) {
      throw new Error(`unknown policy set kind "${kind}"; valid: ${POLICY_SET_KINDS.join(', ')}`);
    }
    if (roles.length === 0) throw new Error('policy set: no roles');
    this.kind = kind;
    const layout = POLICY_SET_LAYOUTS[kind];
    this.roleMarkerInPrompt = layout.roleMarkerInPrompt;
    layout.policies(roles).forEach(({ id, roles: rs }, i) => {
      const model = new Transformer({ ...config, seed: (config.seed + i) >>> 0 });
      const policy: Policy = { id, model, roles: rs, version: 0 };
      this.byId.set(id, policy);
      for (const r of rs) this.byRole.set(r, policy);
    });
  }

  /** Policy ids, in creation order. */
  ids(): string[] {
    return [...this.byId.keys()];
  }

  policies(): Policy[] {
    return [...this.byId.values()];
  }

  get(policyId: string): Policy {
    const p = this.byId.get(policyId);
    if (!p) throw new Error(`policy set (${this.kind}): no policy "${policyId}"; ids: ${this.ids().join(', ')}`);
    return p;
  }

  /** The policy that plays a role. */
  policyFor(role: Role): Policy {
    const p = this.byRole.get(role);
    if (!p) throw new Error(`policy set (${this.kind}): no policy plays role "${role}"; roles: ${[...this.byRole.keys()].join(', ')}`);
    return p;
  }

  /** Called by the trainer after updating a policy's weights; returns the new version. */
  bumpVersion(policyId: string): number {
    return ++this.get(policyId).version;
  }

  dispose(): void {
    for (const p of this.byId.values()) p.model.dispose();
  }
}
