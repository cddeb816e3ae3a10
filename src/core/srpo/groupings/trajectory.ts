/**
 * Trajectory grouping (GRPO on a multi-agent system, as Dr. MAS's code runs its GRPO baseline:
 * `compute_grpo_outcome_advantage` without `group_by_agent_id`). The G trajectories of one
 * prompt form a group; each trajectory is one unit, counted once however many steps it has:
 *
 *   R_tau = mean over the trajectory's member outputs of their R_e   (the team outcome minus the
 *                                                                     mean invalid-action penalty)
 *   A_tau = normalise(R_tau over the trajectories of its prompt)
 *
 * and every event and member of the trajectory takes A_tau. Only complete events count (the
 * incomplete ones were dropped before grouping, SRPO.md point 10).
 */
import { pooledAdvantages } from '../advantages';
import { KEY_SEP, type AdvantageGrouping } from './types';

export const trajectoryGrouping: AdvantageGrouping = {
  description: 'Per trajectory over the G of one prompt: one outcome per trajectory, taken by all its steps (GRPO)',
  assign(events, members, o) {
    const trajectories = new Map<string, { prompt: string; sum: number; n: number; events: number[] }>();
    events.forEach((e, i) => {
      const key = `${e.prompt}${KEY_SEP}${e.trajectory}`;
      const t = trajectories.get(key) ?? { prompt: e.prompt, sum: 0, n: 0, events: [] };
      t.sum += e.reward * e.k; // each of the event's k member outputs carries R_e
      t.n += e.k;
      t.events.push(i);
      trajectories.set(key, t);
    });
    const list = [...trajectories.values()];
    const { advantages, stats } = pooledAdvantages(
      list.map((t) => ({ key: t.prompt, reward: t.sum / t.n })),
      o,
    );
    list.forEach((t, j) => t.events.forEach((i) => (events[i].advantage = advantages[j])));
    for (const m of members) m.advantage = events[m.event].advantage;
    return stats;
  },
};
