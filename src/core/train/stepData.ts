/**
 * Turns a rollout batch into what the update needs: one flat list of member samples, the old
 * log-probs recomputed by the teacher-forced scorer of each member's policy (SRPO.md point 2:
 * the sampler's behaviour log-probs are kept only as a consistency check), the entropy of each
 * member's tokens, the reference policy's log-probs when a KL penalty is on, and the plain
 * objective batch (events with group, prompt, trajectory, reward and K; members with role and
 * log-probs).
 *
 * Scoring runs in chunks per policy (bounded memory), no gradients, one read-back per chunk.
 * Tests: test/core/train/trainer.test.ts.
 */
import type { Policies } from '../policies/types';
import type { RolloutBatch, SampledMember } from '../rollout/orchestrator';
import { memberKey } from '../rollout/orchestrator';
import type { ObjectiveBatch } from '../srpo';
import type { MemberSample } from './update';

export interface StepMember extends MemberSample {
  /** Where it came from: episode index in the batch, event index in the episode, member index. */
  episode: number;
  event: number;
  memberIndex: number;
  role: string;
  policyVersion: number;
  /** Recomputed old log-probs (the ones the objective uses), nats. */
  logpOld: number[];
  /** The sampler's behaviour log-probs, nats. */
  logpBehaviour: number[];
  /** Entropy of the policy at each generated token, nats. */
  entropy: number[];
  stopReason: string;
}

export interface StepData {
  members: StepMember[];
  batch: ObjectiveBatch;
  /** max |sampler log-prob - recomputed log-prob| over all tokens (should be ~1e-5). */
  behaviourMismatch: number;
}

/** Scoring goes through the run's Policies (src/core/policies: chunked, no tape); the reference is the KL's frozen start when the run has one. */
export function buildStepData(rollouts: RolloutBatch, policies: Policies): StepData {
  const members: StepMember[] = [];
  const batch: ObjectiveBatch = { events: [], members: [] };
  rollouts.episodes.forEach((ep, e) => {
    ep.result.events.forEach((ev, k) => {
      // prompt and trajectory: what the trajectory (GRPO) and agent (Dr. MAS) groupings pool by.
      batch.events.push({
        id: ev.eventId,
        group: ev.groupKey,
        reward: ev.reward ?? 0,
        expectedK: ev.expectedK,
        prompt: ep.result.taskId,
        trajectory: ep.result.episodeId,
      });
      for (const m of ev.members) {
        const s: SampledMember | undefined = ep.sampled.get(memberKey(ev.eventId, m.memberIndex));
        if (!s) continue; // an event that lost a member is dropped by the objective, never shrunk
        members.push({
          policyId: s.policyId,
          promptTokens: s.promptTokens,
          outputTokens: s.outputTokens,
          episode: e,
          event: k,
          memberIndex: m.memberIndex,
          role: m.role,
          policyVersion: s.policyVersion,
          logpOld: [],
          logpBehaviour: s.logp,
          entropy: [],
          stopReason: s.stopReason,
        });
      }
    });
  });
  let mismatch = 0;
  for (const id of policies.ids()) {
    const idx = members.map((m, i) => (m.policyId === id ? i : -1)).filter((i) => i >= 0);
    if (!idx.length) continue;
    const rows = idx.map((i) => ({ prompt: members[i].promptTokens, completion: members[i].outputTokens }));
    const scored = policies.scoreData(id, rows, 'current');
    const ref = policies.hasReference ? policies.scoreData(id, rows, 'reference').logp : null;
    idx.forEach((i, r) => {
      const m = members[i];
      m.logpOld = scored.logp[r];
      m.entropy = scored.entropy[r];
      if (ref) m.refLogp = ref[r];
      m.logpBehaviour.forEach((b, t) => (mismatch = Math.max(mismatch, Math.abs(b - m.logpOld[t]))));
    });
  }
  // Events are keyed by id; members point at them. The objective recomputes nothing from logpCur
  // arrays when the trainer passes its own tensor, so logpCur carries the old values.
  for (const m of members) {
    const ev = rollouts.episodes[m.episode].result.events[m.event];
    batch.members.push({ event: ev.eventId, role: m.role, logpCur: m.logpOld, logpOld: m.logpOld, mask: m.logpOld.map(() => 1) });
  }
  return { members, batch, behaviourMismatch: mismatch };
}
