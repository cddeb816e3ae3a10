/**
 * Turns a rollout batch into what the update needs: one flat list of member samples, the old
 * log-probs recomputed by the teacher-forced scorer of each member's policy (SRPO.md point 2:
 * the sampler's behaviour log-probs are kept only as a consistency check), the entropy of each
 * member's tokens, the reference policy's log-probs when a KL penalty is on, and the plain
 * objective batch (events with group, reward and K; members with role and log-probs).
 *
 * Scoring runs in chunks per policy (bounded memory), no gradients, one read-back per chunk.
 * Tests: test/core/train/trainer.test.ts.
 */
import { scoreCompletionsData } from '../models/logprobs';
import type { PolicySet } from '../models/policySet';
import type { Transformer } from '../models/transformer';
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

/** Scores rows in chunks of `chunkSize` with one model. */
function scoreRows(model: Transformer, rows: readonly { prompt: number[]; completion: number[] }[], padId: number, chunkSize = 64) {
  const logp: number[][] = [];
  const entropy: number[][] = [];
  for (let i = 0; i < rows.length; i += chunkSize) {
    const part = rows.slice(i, i + chunkSize);
    const s = scoreCompletionsData(model, part, { padId });
    part.forEach((r, j) => {
      logp.push(s.logp[j].slice(0, r.completion.length));
      entropy.push(s.entropy[j].slice(0, r.completion.length));
    });
  }
  return { logp, entropy };
}

export function buildStepData(rollouts: RolloutBatch, policies: PolicySet, padId: number, reference?: PolicySet): StepData {
  const members: StepMember[] = [];
  const batch: ObjectiveBatch = { events: [], members: [] };
  rollouts.episodes.forEach((ep, e) => {
    ep.result.events.forEach((ev, k) => {
      batch.events.push({ id: ev.eventId, group: ev.groupKey, reward: ev.reward ?? 0, expectedK: ev.expectedK });
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
    const scored = scoreRows(policies.get(id).model, rows, padId);
    const ref = reference ? scoreRows(reference.get(id).model, rows, padId).logp : null;
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
