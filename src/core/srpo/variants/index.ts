/**
 * The registry of objective variants (SRPO.md, "Baselines and variants"). Adding a variant is
 * one file plus one line here; `getVariant` is the only lookup, and an unknown name is an error
 * that lists the valid ones. The loss is all a variant owns: its advantages come from the
 * grouping registry (groupings/), `defaultGrouping` unless `objective.grouping` says otherwise.
 */
import { ALGORITHMS, type Algorithm } from '../config';
import { memberLevelObjective } from './memberLevel';
import { srpo } from './srpo';
import { tokenLevelObjective } from './tokenLevel';
import type { ObjectiveVariant } from './types';

export const VARIANTS = {
  srpo,
  grpo_token: {
    description: 'Per-token ratio and clip, token-mean over the batch (verl default, DAPO-style)',
    defaultGrouping: 'trajectory',
    compute: tokenLevelObjective,
  },
  grpo_seq: {
    description: 'Per-member sequence ratio exp(l), one clip per member, mean over members',
    defaultGrouping: 'trajectory',
    compute: (x, c) => memberLevelObjective(x, c, false),
  },
  gspo: {
    description: 'Per-member length-normalised ratio exp(l/n) (GSPO), mean over members',
    defaultGrouping: 'trajectory',
    compute: (x, c) => memberLevelObjective(x, c, true),
  },
  drmas: {
    description: 'Per-token ratio with advantages normalised per prompt and agent over every invocation (Dr. MAS)',
    defaultGrouping: 'agent',
    compute: tokenLevelObjective,
  },
} satisfies Record<Algorithm, ObjectiveVariant>;

export function getVariant(name: string): ObjectiveVariant {
  if (!Object.hasOwn(VARIANTS, name)) {
    throw new Error(`unknown objective variant "${name}"; valid names: ${ALGORITHMS.join(', ')}`);
  }
  return VARIANTS[name as Algorithm];
}

export type { ObjectiveVariant, VariantOutput } from './types';
