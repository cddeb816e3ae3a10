/**
 * How the policy update (update.ts) cuts a step's prepared batch: event-atomic mini-batches (an
 * event and all its members always travel together; SRPO.md's event-atomic rule), each a
 * self-contained PreparedBatch whose member rows are grouped by policy, and event-atomic
 * micro-batches of at most update.microBatchRows member rows. Plain index arithmetic, no
 * tensors. Not here: the forward/backward and the optimizer step (update.ts).
 * Tests: test/core/train/update.test.ts (subBatch, and through runUpdate).
 */
import type { PreparedBatch, PreparedEvent, PreparedMember } from '../srpo';

/** What the update needs of one member beyond the prepared batch (indexed by `source`). */
export interface MemberSample {
  policyId: string;
  promptTokens: number[];
  outputTokens: number[];
  /** Log-probs of the frozen reference policy; required with a KL penalty (kl.coef > 0), an error when absent. */
  refLogp?: number[];
}

export interface SubBatch {
  prepared: PreparedBatch;
  /** Contiguous row ranges per policy, in row order. */
  groups: { policyId: string; rows: number[] }[];
  /** Sub event index -> full prepared event index; sub member row -> full prepared member index. */
  eventOf: number[];
  memberOf: number[];
}

/** Splits `order` into `parts` nearly equal, non-empty chunks. */
export function chunk<T>(order: readonly T[], parts: number): T[][] {
  const n = Math.min(parts, order.length);
  const out: T[][] = [];
  for (let i = 0; i < n; i++) out.push(order.slice(Math.floor((i * order.length) / n), Math.floor(((i + 1) * order.length) / n)));
  return out;
}

/** The mini-batch of the given events, its members grouped by policy (rows in policy order). */
export function subBatch(full: PreparedBatch, eventIdx: readonly number[], samples: readonly MemberSample[], policyIds: readonly string[]): SubBatch {
  const memberOf: number[] = [];
  const groups: SubBatch['groups'] = [];
  for (const policyId of policyIds) {
    const rows: number[] = [];
    for (const e of eventIdx) {
      for (const j of full.events[e].members) {
        if (samples[full.members[j].source].policyId === policyId) {
          rows.push(memberOf.length);
          memberOf.push(j);
        }
      }
    }
    if (rows.length) groups.push({ policyId, rows });
  }
  const subIndexOfEvent = new Map(eventIdx.map((e, i) => [e, i]));
  const events: PreparedEvent[] = eventIdx.map((e) => ({ ...full.events[e], members: [] }));
  const members: PreparedMember[] = memberOf.map((j, row) => {
    const m = full.members[j];
    const ev = subIndexOfEvent.get(m.event)!;
    events[ev].members.push(row);
    return { ...m, event: ev };
  });
  const maxLength = Math.max(1, ...members.map((m) => m.mask.length));
  return {
    prepared: { grouping: full.grouping, events, members, dropped: [], groups: full.groups, maxLength },
    groups,
    eventOf: [...eventIdx],
    memberOf,
  };
}

/**
 * Event-atomic micro-batches of a mini-batch's events (in order): each holds whole events and at
 * most `maxRows` member rows (an event larger than that travels alone). 0: one micro-batch.
 */
export function microBatches(full: PreparedBatch, events: readonly number[], maxRows: number): number[][] {
  if (maxRows <= 0) return [[...events]];
  const out: number[][] = [];
  let cur: number[] = [];
  let rows = 0;
  for (const e of events) {
    const n = full.events[e].members.length;
    if (cur.length > 0 && rows + n > maxRows) {
      out.push(cur);
      cur = [];
      rows = 0;
    }
    cur.push(e);
    rows += n;
  }
  if (cur.length > 0) out.push(cur);
  return out;
}
