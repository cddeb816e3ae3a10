/**
 * The rollout orchestrator: runs many workflow episodes in lockstep (G rollouts of each of N
 * tasks) and records every transition as an event with its active set. At every round it
 * gathers the pending active set of every live episode (workflows/drive.ts `runLockstep`),
 * groups all member requests by the policy that plays their role, samples each group in one
 * batched call (models/sampler.ts, KV cache), and hands each episode its K outputs together.
 * Episodes that end early drop out of later rounds.
 *
 * Prompt tokens: `<bos>`, the role marker when the policy set is shared (the same encoding as
 * the warm start), then the prompt text. A prompt longer than the context allows (contextLength
 * - maxNewTokens) keeps its head (`<bos>` + marker) and its most recent tail; what the model saw
 * is what is recorded, so the trainer scores exactly those tokens.
 *
 * Not here: advantages and updates (src/core/train), storing (src/core/store).
 * Tests: test/core/rollout/orchestrator.test.ts. Benchmark: bench/rollout.bench.ts.
 */
import { sample, type DecodeMode } from '../models/sampler';
import type { PolicySet } from '../models/policySet';
import { ROLES, type CharTokenizer, type Role } from '../models/tokenizer';
import { mixSeed } from '../models/random';
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

/** What the sampler produced for one member, beside the workflow's record of it. */
export interface SampledMember {
  policyId: string;
  policyVersion: number;
  /** Token ids the policy read (after any truncation). */
  promptTokens: number[];
  /** Generated token ids (end token included when sampled). */
  outputTokens: number[];
  /** Behaviour log-prob of each generated token (nats). */
  logp: number[];
  stopReason: string;
}

export interface RolloutEpisode {
  episode: Episode;
  result: EpisodeResult;
  /** Sampled detail per `${eventId}#${memberIndex}`. */
  sampled: Map<string, SampledMember>;
  generatedTokens: number;
  /** Wall time from the first round to the round in which the episode ended. */
  latencyMs: number;
}

export interface RolloutBatch {
  episodes: RolloutEpisode[];
  rounds: number;
  /** Wall time of the whole batch and of the sampler calls inside it (ms). */
  wallMs: number;
  samplerMs: number;
}

export interface RolloutContext {
  policies: PolicySet;
  tokenizer: CharTokenizer;
}

/** Workflow roles are the tokenizer's roles (a test in test/core/workflows holds them equal). */
function asRole(role: string): Role {
  if (!(ROLES as readonly string[]).includes(role)) throw new Error(`rollout: workflow role "${role}" is not a model role (${ROLES.join(', ')})`);
  return role as Role;
}

export function memberKey(eventId: string, memberIndex: number): string {
  return `${eventId}#${memberIndex}`;
}

/** Token ids of a member prompt, cut to fit `budget` tokens. */
export function encodePrompt(tok: CharTokenizer, text: string, role: Role, marker: boolean, budget: number): number[] {
  const head = [tok.bosId, ...(marker ? [tok.roleId(role)] : [])];
  const body = tok.encode(text, { special: false });
  const room = Math.max(0, budget - head.length);
  return [...head, ...body.slice(Math.max(0, body.length - room))];
}

export function runRollouts(episodes: readonly Episode[], ctx: RolloutContext, options: RolloutOptions): RolloutBatch {
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
      const id = ctx.policies.policyFor(asRole(member.role)).id;
      const list = byPolicy.get(id);
      if (list) list.push(i);
      else byPolicy.set(id, [i]);
    });
    let p = 0;
    for (const [policyId, indices] of byPolicy) {
      const policy = ctx.policies.get(policyId);
      const budget = policy.model.config.contextLength - options.maxNewTokens;
      const prompts = indices.map((i) =>
        encodePrompt(ctx.tokenizer, requests[i].member.prompt, asRole(requests[i].member.role), ctx.policies.roleMarkerInPrompt, budget),
      );
      const ts = performance.now();
      const rows = sample(policy.model, prompts, {
        maxNewTokens: options.maxNewTokens,
        temperature: options.temperature,
        topP: options.topP,
        tokenizer: ctx.tokenizer,
        seed: mixSeed(mixSeed(options.seed, round), p++),
        padId: ctx.tokenizer.padId,
        decode: options.decode,
      });
      samplerMs += performance.now() - ts;
      indices.forEach((i, r) => {
        const row = rows[r];
        const { set, member } = requests[i];
        const outputTokens = row.tokens.slice(0, row.length);
        outputs[i] = ctx.tokenizer.decode(outputTokens, { skipSpecial: true });
        sampled.get(set.episodeId)!.set(memberKey(set.eventId, member.memberIndex), {
          policyId,
          policyVersion: policy.version,
          promptTokens: prompts[r],
          outputTokens,
          logp: row.logp.slice(0, row.length),
          stopReason: row.stopReason,
        });
        tokens.set(set.episodeId, tokens.get(set.episodeId)! + row.length);
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
