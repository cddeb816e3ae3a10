/**
 * How the policy update (update.ts) cuts a step's prepared batch: event-atomic mini-batches (an
 * event and all its members always travel together; SRPO.md's event-atomic rule), each a
 * self-contained PreparedBatch whose member rows are grouped by policy, and event-atomic
 * micro-batches of at most update.microBatchRows member rows whose pass fits the tape budget.
 * Plain index arithmetic, no tensors. Not here: the forward/backward and the optimizer step (update.ts).
 * Tests: test/core/train/miniBatches.test.ts (the packing), update.test.ts (subBatch, and through runUpdate).
 */
import type { Policies } from '../policies/types';
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
 * Event-atomic micro-batches of a mini-batch's events (in order): each holds whole events, at
 * most `maxRows` member rows (0: no limit) and, with `fits`, only events whose pass it accepts
 * (the update's tape budget). An event over either limit travels alone. Packed greedily in the
 * given order; no limit at all gives one micro-batch.
 */
export function microBatches(full: PreparedBatch, events: readonly number[], maxRows: number, fits?: (events: readonly number[]) => boolean): number[][] {
  if (maxRows <= 0 && !fits) return [[...events]];
  const out: number[][] = [];
  let cur: number[] = [];
  let rows = 0;
  for (const e of events) {
    const n = full.events[e].members.length;
    if (cur.length > 0 && ((maxRows > 0 && rows + n > maxRows) || (fits && !fits([...cur, e])))) {
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

/**
 * The tape budget as a `microBatches` limit: whether one gradient pass over these events keeps
 * within the policies' tape budget, its tape the sum of each policy's scorer pass (every policy's
 * rows are scored under the one tape), each estimated at that policy's padded length as the
 * scorer lays it out (the longest prompt + the micro-batch's longest completion - 1). Undefined
 * when no policy has a budget. Packing by it replaces the scorer's row blocks, whose backward
 * re-runs the forward (models/hf/logprobs.ts), with micro-batches that need no second forward;
 * an event over the budget alone still runs in row blocks (decision 074).
 */
export function tapeFits(
  full: PreparedBatch,
  samples: readonly MemberSample[],
  policies: Pick<Policies, 'ids' | 'gradientTape'>,
): ((events: readonly number[]) => boolean) | undefined {
  const tapes = new Map(policies.ids().map((id) => [id, policies.gradientTape(id)]));
  const budgets = [...tapes.values()].map((t) => t.budgetBytes).filter((b) => b > 0);
  if (budgets.length === 0) return undefined;
  const budget = Math.min(...budgets);
  return (events) => {
    let completion = 1;
    const perPolicy = new Map<string, { rows: number; prompt: number }>();
    for (const e of events) {
      for (const j of full.events[e].members) {
        const m = full.members[j];
        const s = samples[m.source];
        completion = Math.max(completion, m.mask.length, s.outputTokens.length);
        const p = perPolicy.get(s.policyId) ?? { rows: 0, prompt: 0 };
        perPolicy.set(s.policyId, { rows: p.rows + 1, prompt: Math.max(p.prompt, s.promptTokens.length) });
      }
    }
    let bytes = 0;
    for (const [id, p] of perPolicy) bytes += tapes.get(id)!.passBytes(p.rows, p.prompt + completion - 1);
    return bytes <= budget;
  };
}
