/**
 * Group-relative advantages (SRPO.md point 2; paper eq. 6), float64, plain TypeScript.
 *
 *   A = (R - mean_g) / (std_g + eps)       std: sample (N-1) std, optionally floored
 *   A = R - mean_g                         when scaleByStd is false (Dr. GRPO style)
 *   A = 0                                  for a group with a single event (no relative signal;
 *                                          verl would hand such a group its raw reward instead)
 *
 * Scope "event": one advantage per event, shared by all its members (SRPO, GRPO, GSPO).
 * Scope "role" (Dr. MAS, Feng et al. 2026): statistics per (group, member role); each event
 * takes part once per distinct role among its members, and a member gets its role's advantage.
 * The event's own `advantage` field always holds the event-scope value.
 */
import type { GroupStats, PreparedEvent, PreparedMember } from './types';

export type AdvantageScope = 'event' | 'role';

export interface AdvantageOptions {
  /** eps added to the std. */
  advEps: number;
  /** Divide by the (floored) std; otherwise only centre. */
  scaleByStd: boolean;
  /** Lower bound on the std before dividing; 0 disables. */
  stdFloor: number;
}

/** Sample standard deviation (N-1); 0 for fewer than two values. */
export function sampleStd(values: readonly number[]): number {
  if (values.length < 2) return 0;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const ss = values.reduce((a, v) => a + (v - mean) * (v - mean), 0);
  return Math.sqrt(ss / (values.length - 1));
}

/** Advantages of one group of rewards, in order. */
export function groupAdvantages(rewards: readonly number[], o: AdvantageOptions): number[] {
  if (rewards.length < 2) return rewards.map(() => 0);
  const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  if (!o.scaleByStd) return rewards.map((r) => r - mean);
  const std = Math.max(sampleStd(rewards), o.stdFloor);
  return rewards.map((r) => (r - mean) / (std + o.advEps));
}

/** Writes event and member advantages in place; returns counts for the group-scope groups. */
export function assignAdvantages(
  events: PreparedEvent[],
  members: PreparedMember[],
  scope: AdvantageScope,
  o: AdvantageOptions,
): GroupStats {
  const groups = groupBy(events.map((e, index) => ({ key: e.group, index })));
  const stats: GroupStats = { count: groups.size, singleton: 0, zeroStd: 0 };
  for (const list of groups.values()) {
    const rewards = list.map((g) => events[g.index].reward);
    if (rewards.length === 1) stats.singleton++;
    else if (rewards.every((r) => r === rewards[0])) stats.zeroStd++;
    groupAdvantages(rewards, o).forEach((a, j) => (events[list[j].index].advantage = a));
  }
  if (scope === 'event') {
    for (const m of members) m.advantage = events[m.event].advantage;
    return stats;
  }
  // Role scope: one entry per (event, role) pair, grouped by (group, role).
  const pairs: { key: string; index: number; role: string }[] = [];
  events.forEach((e, i) => {
    const roles = new Set(e.members.map((j) => members[j].role));
    for (const role of roles) pairs.push({ key: `${e.group}\u0000${role}`, index: i, role });
  });
  const roleAdv = new Map<string, number>(); // `${eventIndex}\u0000${role}` -> advantage
  for (const list of groupBy(pairs).values()) {
    const adv = groupAdvantages(list.map((p) => events[p.index].reward), o);
    list.forEach((p, j) => roleAdv.set(`${p.index}\u0000${p.role}`, adv[j]));
  }
  for (const m of members) m.advantage = roleAdv.get(`${m.event}\u0000${m.role}`)!;
  return stats;
}

function groupBy<T extends { key: string }>(items: T[]): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const it of items) {
    const list = map.get(it.key);
    if (list) list.push(it);
    else map.set(it.key, [it]);
  }
  return map;
}
