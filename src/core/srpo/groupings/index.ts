/**
 * The registry of advantage groupings (`objective.grouping`): which rewards are compared with
 * which. Adding one is one file plus one line here; `getGrouping` is the only lookup, and an
 * unknown name is an error that lists the valid ones. Each algorithm has a default
 * (variants/index.ts, `defaultGrouping`); `objective.grouping` overrides it for ablations.
 *
 * Tests: test/core/srpo/groupings.test.ts (hand-worked multi-turn batch), fastVsReference.test.ts.
 */
import { GROUPINGS, type Grouping } from '../config';
import { agentGrouping } from './agent';
import { eventGrouping } from './event';
import { trajectoryGrouping } from './trajectory';
import type { AdvantageGrouping } from './types';

export const GROUPING_REGISTRY = {
  event: eventGrouping,
  trajectory: trajectoryGrouping,
  agent: agentGrouping,
} satisfies Record<Grouping, AdvantageGrouping>;

export function getGrouping(name: string): AdvantageGrouping {
  if (!Object.hasOwn(GROUPING_REGISTRY, name)) {
    throw new Error(`unknown advantage grouping "${name}"; valid names: ${GROUPINGS.join(', ')}`);
  }
  return GROUPING_REGISTRY[name as Grouping];
}

export type { AdvantageGrouping } from './types';
