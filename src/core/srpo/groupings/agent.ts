/**
 * Agent grouping (Dr. MAS, Feng et al. 2026; its code: `compute_grpo_outcome_advantage` with
 * `group_by_agent_id`, groups keyed by prompt and agent id). Every member output (one agent
 * invocation) is one unit with its event's R_e; the units of one prompt and one agent role form
 * a group, so an agent that acts several times in a trajectory is counted each time:
 *
 *   A_{e,j} = normalise(R_e over every invocation of role(j) on the prompt)
 *
 * A member takes its own A_{e,j}; an event's `advantage` (used only by a per-event loss such as
 * SRPO's, an ablation) is the mean of its members' advantages. The agent is the member's role:
 * parallel members of one role (solver#1, solver#2) are one agent with one policy.
 */
import { pooledAdvantages } from '../advantages';
import { KEY_SEP, type AdvantageGrouping } from './types';

export const agentGrouping: AdvantageGrouping = {
  description: 'Per prompt and agent role over every invocation of that agent (Dr. MAS)',
  assign(events, members, o) {
    const units = members.map((m) => ({ key: `${events[m.event].prompt}${KEY_SEP}${m.role}`, reward: events[m.event].reward }));
    const { advantages, stats } = pooledAdvantages(units, o);
    members.forEach((m, i) => (m.advantage = advantages[i]));
    for (const e of events) e.advantage = e.members.reduce((a, j) => a + members[j].advantage, 0) / e.members.length;
    return stats;
  },
};
