/**
 * The sample batcher's collection window (src/core/external/batcher.ts): requests arriving within
 * `windowMs` of each other share one sampler call; a steady stream still flushes after at most
 * MAX_WAIT_WINDOWS windows; `maxRows` splits and flushes at once; each row keeps its own token
 * limit as a prefix of the batch's sample (stop reason `length`).
 */
import { describe, expect, it, vi } from 'vitest';
import { MAX_WAIT_WINDOWS, SampleBatcher } from '../../src/core/external/batcher';
import type { Policies, SampleSettings } from '../../src/core/policies/types';

/** A policy set whose sampler records its calls and returns row i as ids [i*100, i*100+1, ...]. */
function fakePolicies() {
  const calls: { prompts: number[][]; settings: SampleSettings }[] = [];
  const policies = {
    sample: (_id: string, prompts: number[][], settings: SampleSettings) => {
      calls.push({ prompts, settings });
      return prompts.map((p) => ({
        ids: Array.from({ length: settings.maxNewTokens }, (_, t) => p[0] * 100 + t),
        logp: Array.from({ length: settings.maxNewTokens }, (_, t) => -t),
        stopReason: 'length',
      }));
    },
  } as unknown as Policies;
  return { policies, calls };
}
const job = (i: number, maxNewTokens = 4) => ({ policyId: 'shared', prompt: [i], maxNewTokens, temperature: 1, topP: 1 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('sample batcher', () => {
  it('requests spaced closer than the window share one call even when the burst outlasts one window; each row keeps its own token limit', async () => {
    const { policies, calls } = fakePolicies();
    const b = new SampleBatcher(policies, { windowMs: 25, maxRows: 64 }); // the 4 arrivals span ~45 ms
    const out: Promise<unknown>[] = [];
    for (let i = 1; i <= 4; i++) {
      out.push(b.submit(job(i, i === 2 ? 2 : 4)));
      await sleep(15);
    }
    const rows = (await Promise.all(out)) as { ids: number[]; stopReason: string }[];
    expect(calls).toHaveLength(1);
    expect(calls[0].prompts).toEqual([[1], [2], [3], [4]]);
    expect(calls[0].settings.maxNewTokens).toBe(4);
    expect(rows[1]).toEqual({ ids: [200, 201], logp: [-0, -1], stopReason: 'length' });
    expect(rows[3].ids).toEqual([400, 401, 402, 403]);
  });

  it('a steady stream flushes after at most MAX_WAIT_WINDOWS windows; maxRows flushes at once', async () => {
    // On a fake clock (timers and performance.now): a real one fires timers up to a millisecond
    // early against performance.now() (whole-millisecond delays, the loop's cached time).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const { policies, calls } = fakePolicies();
      const b = new SampleBatcher(policies, { windowMs: 5, maxRows: 64 });
      const t0 = performance.now();
      const first = b.submit(job(1));
      let firstAt = 0;
      void first.then(() => (firstAt = performance.now() - t0));
      for (let i = 2; i < 40 && firstAt === 0; i++) {
        void b.submit(job(i));
        await vi.advanceTimersByTimeAsync(3); // a request every 3 ms: never a quiet window of 5
      }
      await first;
      expect(calls.length).toBeGreaterThanOrEqual(1);
      expect(calls[0].prompts.length).toBeLessThan(39); // not everything waited for the stream to end
      expect(firstAt).toBeGreaterThanOrEqual(MAX_WAIT_WINDOWS * 5);
      expect(firstAt).toBeLessThanOrEqual(MAX_WAIT_WINDOWS * 5 + 3);
    } finally {
      vi.useRealTimers();
    }

    const c = fakePolicies();
    const small = new SampleBatcher(c.policies, { windowMs: 10_000, maxRows: 3 });
    await Promise.all([1, 2, 3].map((i) => small.submit(job(i))));
    expect(c.calls.map((x) => x.prompts.length)).toEqual([3]);
  });

  it('records each sampler call unless recordCalls is false (serve-model: a long serve keeps no per-call list)', async () => {
    const kept = new SampleBatcher(fakePolicies().policies, { windowMs: 0, maxRows: 64 });
    const dropped = new SampleBatcher(fakePolicies().policies, { windowMs: 0, maxRows: 64, recordCalls: false });
    for (let i = 0; i < 3; i++) await Promise.all([kept.submit(job(i)), dropped.submit(job(i))]);
    expect(kept.calls.map((c) => c.rows)).toEqual([1, 1, 1]);
    expect(dropped.calls).toEqual([]);
  });
});
