/**
 * Group-relative advantages (SRPO.md point 2; paper eq. 6), float64, plain TypeScript: the
 * normalisation every grouping (groupings/) applies to each of its comparison groups.
 *
 *   A = (R - mean_g) / (std_g + eps)       std: sample (N-1) std, optionally floored
 *   A = R - mean_g                         when scaleByStd is false (Dr. GRPO style)
 *   A = 0                                  for a group with a single unit (no relative signal;
 *                                          verl and Dr. MAS would hand such a unit R / (1 + eps))
 *
 * Not here: which rewards form a group (groupings/), the losses (variants/).
 * Tests: test/core/srpo/advantages.test.ts, test/core/srpo/groupings.test.ts.
 */
import type { GroupStats } from './types';

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

/**
 * Normalises every group of `units` (keyed by `key`, reward `reward`) and returns each unit's
 * advantage in input order, with the counts of singleton and equal-reward groups.
 */
export function pooledAdvantages(units: readonly { key: string; reward: number }[], o: AdvantageOptions): { advantages: number[]; stats: GroupStats } {
  const groups = new Map<string, number[]>();
  units.forEach((u, i) => {
    const list = groups.get(u.key);
    if (list) list.push(i);
    else groups.set(u.key, [i]);
  });
  const advantages = new Array<number>(units.length).fill(0);
  const stats: GroupStats = { count: groups.size, singleton: 0, zeroStd: 0 };
  for (const list of groups.values()) {
    const rewards = list.map((i) => units[i].reward);
    if (rewards.length === 1) stats.singleton++;
    else if (rewards.every((r) => r === rewards[0])) stats.zeroStd++;
    groupAdvantages(rewards, o).forEach((a, j) => (advantages[list[j]] = a));
  }
  return { advantages, stats };
}
