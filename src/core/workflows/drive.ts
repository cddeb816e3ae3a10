/**
 * Reference drivers for episodes: `runEpisode` (one episode, one synchronous policy) and
 * `runLockstep` (many episodes, one batched policy call per step across all live episodes:
 * the shape the rollout orchestrator takes). Used by tests, warm-start demonstrations and as
 * the specification of how an orchestrator drives the Episode interface.
 */
import type { ActiveSetRequest, Episode, EpisodeResult, MemberRequest } from './types';

/** A policy for scripted runs: the output text for one member request. */
export type MemberPolicy = (member: MemberRequest, set: ActiveSetRequest, episode: Episode) => string;

/** Drive one episode to the end (bounded by `maxEvents`, a guard against workflow bugs). */
export function runEpisode(episode: Episode, policy: MemberPolicy, maxEvents = 256): EpisodeResult {
  for (let n = 0; n < maxEvents; n++) {
    const set = episode.pending();
    if (!set) return episode.result();
    episode.submit(set.members.map((m) => policy(m, set, episode)));
  }
  throw new Error(`episode ${episode.id}: more than ${maxEvents} events`);
}

/** One batched generation call: outputs for every member of every pending set, in order. */
export type BatchPolicy = (members: { set: ActiveSetRequest; member: MemberRequest }[]) => string[];

/**
 * Drive many episodes in lockstep: each step gathers the pending set of every live episode,
 * makes one batched policy call, and hands each episode its slice as one active set.
 * Returns the number of steps (batched calls) taken.
 */
export function runLockstep(episodes: readonly Episode[], policy: BatchPolicy, maxSteps = 256): number {
  for (let step = 0; step < maxSteps; step++) {
    const sets = episodes.map((e) => ({ e, set: e.pending() })).filter((x): x is { e: Episode; set: ActiveSetRequest } => x.set !== null);
    if (sets.length === 0) return step;
    const flat = sets.flatMap(({ set }) => set.members.map((member) => ({ set, member })));
    const outputs = policy(flat);
    if (outputs.length !== flat.length) throw new Error(`runLockstep: policy returned ${outputs.length} outputs for ${flat.length} requests`);
    let at = 0;
    for (const { e, set } of sets) {
      e.submit(outputs.slice(at, at + set.expectedK));
      at += set.expectedK;
    }
  }
  throw new Error(`runLockstep: more than ${maxSteps} steps`);
}
