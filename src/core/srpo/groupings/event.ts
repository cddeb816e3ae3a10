/**
 * Event grouping (SRPO, paper section 4 and SRPO.md point 6): comparable events, those of one
 * task prompt and one event kind (`group`), form a group; each event is one unit with its R_e,
 *
 *   A_e = normalise(R_e over the events of its group)
 *
 * and every member of the event takes A_e. An agent that acts twice in a trajectory appears in
 * two groups only when the two events are of different kinds.
 */
import { pooledAdvantages } from '../advantages';
import type { AdvantageGrouping } from './types';

export const eventGrouping: AdvantageGrouping = {
  description: 'Per comparable event (task + event kind): one advantage per event, shared by its members (SRPO)',
  assign(events, members, o) {
    const { advantages, stats } = pooledAdvantages(
      events.map((e) => ({ key: e.group, reward: e.reward })),
      o,
    );
    events.forEach((e, i) => (e.advantage = advantages[i]));
    for (const m of members) m.advantage = events[m.event].advantage;
    return stats;
  },
};
