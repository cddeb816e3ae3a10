/**
 * Diagnostics a batch determines before any ratio is computed (SRPO.md, "Diagnostics"): event
 * completeness, set sizes, rewards, advantages, group statistics and response lengths. Plain
 * TypeScript over a PreparedBatch; the ratio and clip diagnostics come from surrogate.ts. Keys and
 * their meanings: src/shared/metricCatalogue.ts (producer 'batch').
 */
import { sampleStd } from './advantages';
import type { PreparedBatch } from './types';

export function batchMetrics(batch: PreparedBatch): Record<string, number> {
  const { events, members, groups } = batch;
  const out: Record<string, number> = {
    'events/complete': events.length,
    'events/dropped': batch.dropped.length,
    'groups/count': groups.count,
    'groups/singleton': groups.singleton,
    // Among groups that could have a relative signal (>= 2 events), the share with none.
    'groups/zero_std_frac': groups.zeroStd / Math.max(1, groups.count - groups.singleton),
  };
  if (events.length === 0) return out;
  const sizes = events.map((e) => e.k);
  out['set/size_mean'] = mean(sizes);
  out['set/size_max'] = Math.max(...sizes);
  for (const k of sizes) out[`set/size_hist/${k}`] = (out[`set/size_hist/${k}`] ?? 0) + 1;
  const rewards = events.map((e) => e.reward);
  // The penalised event reward R_e; `reward/mean` is the rollout's per-episode team reward (src/shared/metricCatalogue.ts).
  out['reward/event_mean'] = mean(rewards);
  out['reward/event_std'] = sampleStd(rewards);
  // Advantage statistics over what carries one: events under the event grouping, else members.
  const adv = batch.grouping === 'event' ? events.map((e) => e.advantage) : members.map((m) => m.advantage);
  out['adv/mean'] = mean(adv);
  out['adv/std'] = sampleStd(adv);
  out['adv/abs_max'] = Math.max(...adv.map(Math.abs));
  const lengths = members.map((m) => m.length);
  out['response/trained_length_mean'] = mean(lengths);
  out['response/trained_length_max'] = Math.max(...lengths);
  return out;
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}
