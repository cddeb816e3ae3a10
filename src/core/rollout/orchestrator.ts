/**
 * The rollout orchestrator: runs many workflow episodes in lockstep (G rollouts of each of N
 * tasks) and records every transition as an event with its active set. At every round it
 * gathers the pending active set of every live episode (workflows/drive.ts `runLockstep`),
 * groups all member requests by the policy that plays their role, samples each group in one
 * batched call (the policies' sampler: models/hf/sampler.ts, KV cache), and hands each episode its K outputs together.
 * Episodes that end early drop out of later rounds.
 *
 * Models are reached only through `Policies` (src/core/policies): prompt ids, sampling and
 * decoding are the policies' (the model's chat template over the role's messages; the lab's own
 * folders render `<bos>`, the role marker and the prompt text).
 * What the model saw and generated is recorded as ids, so the trainer scores exactly those
 * tokens (never re-tokenised text).
 *
 * Not here: advantages and updates (src/core/train), storing (src/core/store).
 * Tests: test/core/rollout/orchestrator.test.ts. Benchmark: bench/rollout.bench.ts.
 */
import type { DecodeMode } from '../models/hf/sampler';
import { ROLES, type Role } from '../models/vocab';
import { mixSeed } from '../models/random';
import type { Policies, SampledMember } from '../policies/types';
import { runLockstep } from '../workflows/drive';
import type { Episode, EpisodeResult } from '../workflows/types';

export interface RolloutOptions {
  /** Sampling temperature (1 = the policy's own distribution). */
  temperature: number;
  /** Nucleus sampling threshold, (0, 1]. */
  topP: number;
  /** Most tokens one member may generate. */
  maxNewTokens: number;
  /** Seed of this rollout batch; each round and policy derives its own stream from it. */
  seed: number;
  decode?: DecodeMode;
}

/** What the sampler produced for one member (policies/types.ts, below rollout: the external endpoint records it too). */
export type { SampledMember } from '../policies/types';

export interface RolloutEpisode {
  episode: Episode;
  result: EpisodeResult;
  /** Sampled detail per `${eventId}#${memberIndex}`. */
  sampled: Map<string, SampledMember>;
  generatedTokens: number;
  /** Wall time from the first round to the round in which the episode ended. */
  latencyMs: number;
  /** Index within its group (the record's rollout), where the batch dropped episodes (external.ts); else the position modulo G. */
  rollout?: number;
}

export interface RolloutBatch {
  episodes: RolloutEpisode[];
  rounds: number;
  /** Wall time of the whole batch and of the sampler calls inside it (ms). */
  wallMs: number;
  samplerMs: number;
  /** Metrics of the batch's own (external: failed episodes, request latency), added to the step's. */
  metrics?: Record<string, number>;
}

/** The run's policies. */
export interface RolloutContext {
  policies: Policies;
}

/** Workflow roles are the vocabulary's roles (models/vocab.ts) (a test in test/core/workflows holds them equal). */
function asRole(role: string): Role {
  if (!(ROLES as readonly string[]).includes(role)) throw new Error(`rollout: workflow role "${role}" is not a model role (${ROLES.join(', ')})`);
  return role as Role;
}

export function memberKey(eventId: string, memberIndex: number): string {
  return `${eventId}#${memberIndex}`;
}

export function runRollouts(episodes: readonly Episode[], ctx: RolloutContext, options: RolloutOptions): RolloutBatch {
  const policies = ctx.policies;
  const t0 = performance.now();
  const sampled = new Map<string, Map<string, SampledMember>>(episodes.map((e) => [e.id, new Map()]));
  const tokens = new Map<string, number>(episodes.map((e) => [e.id, 0]));
  const endedAt = new Map<string, number>();
  let samplerMs = 0;
  let round = 0;
  const rounds = runLockstep(episodes, (requests) => {
    // Episodes with no request this round ended in the previous round's submit.
    const live = new Set(requests.map((r) => r.set.episodeId));
    for (const e of episodes) if (!live.has(e.id) && !endedAt.has(e.id)) endedAt.set(e.id, performance.now() - t0);
    const outputs: string[] = new Array(requests.length);
    // Group member requests by the policy that plays their role.
    const byPolicy = new Map<string, number[]>();
    requests.forEach(({ member }, i) => {
      const id = policies.policyFor(asRole(member.role)).id;
      const list = byPolicy.get(id);
      if (list) list.push(i);
      else byPolicy.set(id, [i]);
    });
    let p = 0;
    for (const [policyId, indices] of byPolicy) {
      const policy = policies.get(policyId);
      const prompts = indices.map((i) => {
        const { member } = requests[i];
        return policies.promptIds(policyId, { role: asRole(member.role), instruction: member.instruction, prompt: member.prompt }, options.maxNewTokens);
      });
      const ts = performance.now();
      const rows = policies.sample(policyId, prompts, {
        maxNewTokens: options.maxNewTokens,
        temperature: options.temperature,
        topP: options.topP,
        seed: mixSeed(mixSeed(options.seed, round), p++),
        decode: options.decode,
      });
      samplerMs += performance.now() - ts;
      indices.forEach((i, r) => {
        const row = rows[r];
        const { set, member } = requests[i];
        outputs[i] = policies.decode(row.ids);
        sampled.get(set.episodeId)!.set(memberKey(set.eventId, member.memberIndex), {
          policyId,
          policyVersion: policy.version,
          promptTokens: prompts[r],
          outputTokens: row.ids,
          logp: row.logp,
          stopReason: row.stopReason,
        });
        tokens.set(set.episodeId, tokens.get(set.episodeId)! + row.ids.length);
      });
    }
    round++;
    return outputs;
  });
  const wallMs = performance.now() - t0;
  for (const e of episodes) if (!endedAt.has(e.id)) endedAt.set(e.id, wallMs);
  return {
    episodes: episodes.map((episode) => ({
      episode,
      result: episode.result(),
      sampled: sampled.get(episode.id)!,
      generatedTokens: tokens.get(episode.id)!,
      latencyMs: endedAt.get(episode.id)!,
    })),
    rounds,
    wallMs,
    samplerMs,
  };
}
