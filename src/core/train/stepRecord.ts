/**
 * Builds the store's StepRecord of one training step (store/records.ts) from the rollouts, the
 * step data, the prepared objective batch and the update's per-event outcomes, and the step's
 * metrics (every diagnostic of SRPO.md that the step determines). Pure: no I/O.
 *
 * Tests: test/core/train/trainer.test.ts (a step round-trips through the store).
 */
import type { PreparedBatch } from '../srpo';
import type { RolloutBatch } from '../rollout/orchestrator';
import type { EpisodeRecord, EventRecord, MemberRecord } from '../store/records';
import type { StepData } from './stepData';
import type { UpdateResult } from './update';
import type { EpisodeResult } from '../workflows/types';

/** What a member played, in the sampler's terms: who sampled it, its token ids and their log-probs (absent for a scripted runner). */
export interface PlayedSample {
  policyId: string;
  policyVersion: number;
  promptTokens: ArrayLike<number>;
  outputTokens: ArrayLike<number>;
  logp: ArrayLike<number>;
}

/** The fields of a member record that the play determines (training and evaluation alike); the update's fields are the caller's. */
export function playedMember(m: EpisodeResult['events'][number]['members'][number], s: PlayedSample | undefined): Omit<MemberRecord, 'logRatio' | 'logpCur'> {
  return {
    memberIndex: m.memberIndex,
    role: m.role,
    policyId: s?.policyId ?? '',
    policyVersion: s?.policyVersion ?? 0,
    prompt: m.prompt,
    output: m.output,
    valid: m.parse.valid,
    parseError: m.parse.valid ? null : m.parse.error,
    promptTokens: Int32Array.from(s?.promptTokens ?? []),
    outputTokens: Int32Array.from(s?.outputTokens ?? []),
    logpOld: Float32Array.from(s?.logp ?? []),
    mask: Uint8Array.from(s?.outputTokens ?? [], () => 1),
  };
}

/** An event record's fields that come from the played event alone, the same for training and evaluation episodes. */
export function playedEvent(ev: EpisodeResult['events'][number]): Pick<EventRecord, 'key' | 'seq' | 'kind' | 'stateId' | 'group' | 'expectedK' | 'reward'> {
  return { key: ev.eventId, seq: ev.index, kind: ev.kind, stateId: ev.stateId, group: ev.groupKey, expectedK: ev.expectedK, reward: ev.reward ?? 0 };
}

/** Episode records of the training split, with events, members and (optionally) tokens. */
export function episodeRecords(rollouts: RolloutBatch, data: StepData, prepared: PreparedBatch, update: UpdateResult | null, G: number): EpisodeRecord[] {
  const eventIndex = new Map(prepared.events.map((e, i) => [e.id, i]));
  const dropped = new Map(prepared.dropped.map((d) => [d.id, d.reason]));
  const preparedOfSource = new Map(prepared.members.map((m, j) => [m.source, j]));
  const memberAt = new Map(data.members.map((m, i) => [`${m.episode}/${m.event}/${m.memberIndex}`, i]));
  return rollouts.episodes.map((ep, e) => {
    const r = ep.result;
    const events: EventRecord[] = r.events.map((ev, k) => {
      const pe = eventIndex.get(ev.eventId);
      const outcome = pe !== undefined ? update?.events.get(pe) : undefined;
      const members: MemberRecord[] = ev.members.map((m) => {
        const i = memberAt.get(`${e}/${k}/${m.memberIndex}`);
        const s = i !== undefined ? data.members[i] : undefined;
        const j = i !== undefined ? preparedOfSource.get(i) : undefined;
        return {
          ...playedMember(m, s && { ...s, logp: s.logpOld }),
          logRatio: j !== undefined ? (update?.memberLogRatios.get(j) ?? null) : null,
          logpCur: j !== undefined ? (update?.memberLogpCur.get(j) ?? null) : null,
        };
      });
      return {
        ...playedEvent(ev),
        complete: pe !== undefined,
        dropReason: dropped.get(ev.eventId) ?? null,
        advantage: pe !== undefined ? prepared.events[pe].advantage : null,
        logRatio: outcome?.logRatio ?? null,
        ratio: outcome?.ratio ?? null,
        clipped: outcome?.clipped ?? null,
        members,
      };
    });
    return {
      key: ep.episode.id,
      split: 'train',
      taskId: ep.episode.task.id,
      benchmark: ep.episode.task.benchmark ?? '',
      rollout: ep.rollout ?? e % G,
      finalAnswer: r.finalAnswer,
      reward: r.teamReward,
      correct: r.correct,
      generatedTokens: ep.generatedTokens,
      calls: r.calls,
      toolCalls: r.toolCalls,
      latencyMs: ep.latencyMs,
      events,
    };
  });
}

/** Rollout-level diagnostics: rewards, accuracy, per-role validity and reward, lengths, cost, entropy. */
export function rolloutMetrics(rollouts: RolloutBatch, data: StepData): Record<string, number> {
  const eps = rollouts.episodes;
  const rewards = eps.map((e) => e.result.teamReward);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const out: Record<string, number> = {
    'reward/mean': mean(rewards),
    'reward/std': Math.sqrt(mean(rewards.map((r) => (r - mean(rewards)) ** 2))),
    'train/accuracy': mean(eps.map((e) => (e.result.correct ? 1 : 0))),
    'cost/tokens': mean(eps.map((e) => e.generatedTokens)),
    'cost/calls': mean(eps.map((e) => e.result.calls)),
    'cost/tool_calls': mean(eps.map((e) => e.result.toolCalls)),
    'episode/events': mean(eps.map((e) => e.result.events.length)),
    'logp/behaviour_mismatch_max': data.behaviourMismatch,
  };
  const lengths = data.members.map((m) => m.outputTokens.length);
  out['response/length_mean'] = mean(lengths);
  out['response/length_max'] = lengths.length ? Math.max(...lengths) : 0;
  out['response/truncated_frac'] = mean(data.members.map((m) => (m.stopReason === 'length' ? 1 : 0)));
  const tokens = data.members.reduce((a, m) => a + m.entropy.length, 0);
  out['entropy'] = data.members.reduce((a, m) => a + m.entropy.reduce((x, y) => x + y, 0), 0) / Math.max(1, tokens);
  const roles = new Map<string, { valid: number; n: number; reward: number }>();
  for (const ep of eps) {
    for (const ev of ep.result.events) {
      for (const m of ev.members) {
        const r = roles.get(m.role) ?? { valid: 0, n: 0, reward: 0 };
        r.n++;
        r.valid += m.parse.valid ? 1 : 0;
        r.reward += ev.reward ?? 0;
        roles.set(m.role, r);
      }
    }
  }
  for (const [role, r] of roles) {
    out[`role/${role}/valid_rate`] = r.valid / r.n;
    out[`role/${role}/reward_mean`] = r.reward / r.n;
  }
  return out;
}
