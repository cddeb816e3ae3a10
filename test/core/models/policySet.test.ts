import { describe, expect, it } from 'vitest';
import { PolicySet } from '../../../src/core/models/policySet';
import { ROLES } from '../../../src/core/models/tokenizer';
import { microConfig } from './helpers';

describe('PolicySet', () => {
  it('shared: one policy plays every role and its prompts carry the role marker', () => {
    const set = new PolicySet('shared', microConfig(), ['solver', 'verifier']);
    expect(set.ids()).toEqual(['shared']);
    expect(set.policyFor('solver')).toBe(set.policyFor('verifier'));
    expect(set.roleMarkerInPrompt).toBe(true);
    set.dispose();
  });

  it("per-role: one policy per role with its own weights; prompts keep the marker (the shared warm start's format)", () => {
    const set = new PolicySet('per-role', microConfig());
    expect(set.ids()).toEqual([...ROLES]);
    expect(set.policyFor('router').model).not.toBe(set.policyFor('solver').model);
    expect(set.policyFor('router').roles).toEqual(['router']);
    expect(set.roleMarkerInPrompt).toBe(true);
    set.dispose();
  });

  it('bumpVersion increments only that policy', () => {
    const set = new PolicySet('per-role', microConfig(), ['solver', 'verifier']);
    expect(set.bumpVersion('solver')).toBe(1);
    expect(set.bumpVersion('solver')).toBe(2);
    expect(set.get('verifier').version).toBe(0);
    set.dispose();
  });

  it('unknown ids, roles and kinds are errors listing the valid ones', () => {
    const set = new PolicySet('per-role', microConfig(), ['solver']);
    expect(() => set.get('judge')).toThrow(/no policy "judge"; ids: solver/);
    expect(() => set.policyFor('router')).toThrow(/no policy plays role "router"/);
    expect(() => new PolicySet('pairs' as never, microConfig())).toThrow(/shared, per-role/);
    set.dispose();
  });
});
