/**
 * Micro-batch packing (src/core/train/miniBatches.ts): whole events only, at most
 * update.microBatchRows rows, and a pass within the tape budget as `tapeFits` estimates it (the
 * policies' passes summed, each at its own padded length). Expected packings worked out by hand.
 */
import { describe, expect, it } from 'vitest';
import type { GradientTape } from '../../../src/core/policies/types';
import type { PreparedBatch, PreparedMember } from '../../../src/core/srpo';
import { microBatches, tapeFits, type MemberSample } from '../../../src/core/train/miniBatches';

/** A prepared batch whose event e has sizes[e] members; member lengths from `lengths` (default 4). */
function batch(sizes: number[], lengths: number[] = []): PreparedBatch {
  const members: PreparedMember[] = [];
  const events = sizes.map((k, e) => {
    const rows: number[] = [];
    for (let i = 0; i < k; i++) {
      const length = lengths[members.length] ?? 4;
      rows.push(members.length);
      members.push({ event: e, source: members.length, mask: new Array<number>(length).fill(1), logpOld: new Array<number>(length).fill(0) } as PreparedMember);
    }
    return { members: rows } as PreparedBatch['events'][number];
  });
  return {
    grouping: 'task',
    events,
    members,
    dropped: [],
    groups: [],
    maxLength: Math.max(1, ...members.map((m) => m.mask.length)),
  } as unknown as PreparedBatch;
}

/** Passes cost rows x seqLen bytes per policy; budgets by policy. */
function fakePolicies(budgets: Record<string, number>) {
  const calls: { id: string; rows: number; seqLen: number }[] = [];
  return {
    calls,
    ids: () => Object.keys(budgets),
    gradientTape: (id: string): GradientTape => ({
      budgetBytes: budgets[id],
      passBytes: (rows, seqLen) => {
        calls.push({ id, rows, seqLen });
        return rows * seqLen;
      },
    }),
  };
}

describe('microBatches', () => {
  const full = batch([2, 1, 3, 2, 1]);
  const all = [0, 1, 2, 3, 4];

  it('keeps one micro-batch without a row limit or a tape limit', () => {
    expect(microBatches(full, all, 0)).toEqual([all]);
  });

  it('packs whole events up to the row limit, an event over it alone', () => {
    // rows 2,1 | 3 | 2,1 with a limit of 3
    expect(microBatches(full, all, 3)).toEqual([[0, 1], [2], [3, 4]]);
    // an event of 3 rows over a limit of 2 travels alone
    expect(microBatches(full, all, 2)).toEqual([[0], [1], [2], [3], [4]]);
  });

  it('packs whole events while `fits` accepts them, in the given order', () => {
    const rowsOf = (events: readonly number[]) => events.reduce((a, e) => a + full.events[e].members.length, 0);
    expect(microBatches(full, all, 0, (ev) => rowsOf(ev) <= 4)).toEqual([[0, 1], [2], [3, 4]]);
    expect(microBatches(full, [4, 3, 2, 1, 0], 0, (ev) => rowsOf(ev) <= 4)).toEqual([[4, 3], [2, 1], [0]]);
    // nothing fits: every event alone, none dropped
    expect(microBatches(full, all, 0, () => false)).toEqual([[0], [1], [2], [3], [4]]);
    // both limits: the tighter one cuts
    expect(microBatches(full, all, 3, (ev) => rowsOf(ev) <= 100)).toEqual([[0, 1], [2], [3, 4]]);
    expect(microBatches(full, all, 100, (ev) => ev.length <= 1)).toEqual([[0], [1], [2], [3], [4]]);
  });
});

describe('tapeFits', () => {
  // Event 0: a (prompt 10, 3 tokens) + b (prompt 5, 6 tokens); event 1: a (prompt 20, 2 tokens).
  const full = batch([2, 1], [3, 6, 2]);
  const samples: MemberSample[] = [
    { policyId: 'a', promptTokens: new Array<number>(10).fill(1), outputTokens: [1, 2, 3] },
    { policyId: 'b', promptTokens: new Array<number>(5).fill(1), outputTokens: [1, 2, 3, 4, 5, 6] },
    { policyId: 'a', promptTokens: new Array<number>(20).fill(1), outputTokens: [1, 2] },
  ];

  it('is undefined when no policy has a budget', () => {
    expect(tapeFits(full, samples, fakePolicies({ a: 0, b: 0 }))).toBeUndefined();
  });

  it("sums each policy's pass at its longest prompt + the micro-batch's longest completion - 1", () => {
    const p = fakePolicies({ a: 1000, b: 1000 });
    const fits = tapeFits(full, samples, p)!;
    // event 0 alone: a 1 row x (10 + 6 - 1) = 15, b 1 x (5 + 6 - 1) = 10: 25 bytes.
    // both: a 2 x (20 + 6 - 1) = 50, b 10: 60 bytes.
    expect(fits([0])).toBe(true);
    expect(p.calls).toEqual([
      { id: 'a', rows: 1, seqLen: 15 },
      { id: 'b', rows: 1, seqLen: 10 },
    ]);
    p.calls.length = 0;
    expect(fits([0, 1])).toBe(true);
    expect(p.calls).toEqual([
      { id: 'a', rows: 2, seqLen: 25 },
      { id: 'b', rows: 1, seqLen: 10 },
    ]);
    // event 1 alone: a 1 x (20 + 2 - 1) = 21
    expect(tapeFits(full, samples, fakePolicies({ a: 21, b: 21 }))!([1])).toBe(true);
    expect(tapeFits(full, samples, fakePolicies({ a: 20, b: 20 }))!([1])).toBe(false);
  });

  it('compares with the smallest budget set, an unset one (0) ignored', () => {
    expect(tapeFits(full, samples, fakePolicies({ a: 60, b: 0 }))!([0, 1])).toBe(true);
    expect(tapeFits(full, samples, fakePolicies({ a: 59, b: 1000 }))!([0, 1])).toBe(false);
    expect(tapeFits(full, samples, fakePolicies({ a: 1000, b: 59 }))!([0, 1])).toBe(false);
  });
});
