/**
 * Gathers the sampling requests of every running episode into one batched sampler call per
 * policy (and sampling setting), the way the built-in orchestrator's lockstep rounds do: the
 * batch is sampled once no request has arrived for `windowMs` (at most MAX_WAIT_WINDOWS windows
 * after its oldest request), or at once when it reaches `maxRows`. The sampler call is synchronous (the event loop waits for it); requests that arrive
 * meanwhile form the next batch.
 *
 * Rows of one batch may ask for different numbers of new tokens: the batch samples the largest
 * and each row keeps its own prefix (a prefix of a sample is a sample, with stop reason `length`
 * where it was cut), so its recorded ids and log-probs stay exactly what the policy generated.
 * Likewise for top_logprobs: the batch lists the most any row asks for, and each row keeps the
 * first N of each list (the lists are descending, so those are its own top N).
 * Seeds: one per flush, mixed from the batch seed and the flush's index; which rows share a
 * flush depends on arrival times, so an external batch is not bit-reproducible (documented).
 *
 * Not here: rendering prompts (render.ts), HTTP (server.ts). Tests: test/external/endpoint.test.ts.
 */
import { mixSeed } from '../models/random';
import type { Policies, SampledCompletion } from '../policies/types';

/** A request waits at most this many collection windows (a steady stream still flushes). */
export const MAX_WAIT_WINDOWS = 10;

export interface BatcherOptions {
  /** How long a request waits for others before its batch is sampled (ms, >= 0). */
  windowMs: number;
  /** Rows per sampler call at most (>= 1). */
  maxRows: number;
  /** Keep a record of every sampler call in `calls` (default true; a long serve-model sets false: nobody reads it there). */
  recordCalls?: boolean;
}

export interface SampleJob {
  policyId: string;
  prompt: number[];
  maxNewTokens: number;
  temperature: number;
  topP: number;
  /** Alternatives listed per generated token (the request's top_logprobs); 0 or absent: none. */
  topLogprobs?: number;
}

/** One sampler call, for statistics. */
export interface SamplerCall {
  policyId: string;
  rows: number;
  ms: number;
}

interface Waiting extends SampleJob {
  resolve: (r: SampledCompletion) => void;
  reject: (e: Error) => void;
}

/** A row's own part of a batch's sample: its first maxNewTokens ids, and its own number of alternatives. */
function ownShare(s: SampledCompletion, job: SampleJob): SampledCompletion {
  const cut = s.ids.length > job.maxNewTokens;
  const n = job.maxNewTokens;
  const row: SampledCompletion = cut
    ? { ids: s.ids.slice(0, n), logp: s.logp.slice(0, n), stopReason: 'length' }
    : { ids: s.ids, logp: s.logp, stopReason: s.stopReason };
  const k = job.topLogprobs ?? 0;
  if (k > 0 && s.top) row.top = (cut ? s.top.slice(0, n) : s.top).map((alts) => alts.slice(0, k));
  return row;
}

export class SampleBatcher {
  private readonly queues = new Map<string, Waiting[]>();
  private timer: NodeJS.Timeout | null = null;
  /** When the oldest request still waiting arrived (performance.now()). */
  private firstWaiting: number | null = null;
  private flushes = 0;
  /** Seed of the current batch of rollouts (set per rollout batch). */
  seed = 0;
  /** Every sampler call made, unless `recordCalls` is false (the rollout driver, the bench and the tests read it). */
  readonly calls: SamplerCall[] = [];

  constructor(
    private readonly policies: Policies,
    private readonly options: BatcherOptions,
  ) {}

  submit(job: SampleJob): Promise<SampledCompletion> {
    return new Promise((resolve, reject) => {
      const key = `${job.policyId}|${job.temperature}|${job.topP}`;
      const q = this.queues.get(key) ?? [];
      q.push({ ...job, resolve, reject });
      this.queues.set(key, q);
      if (q.length >= this.options.maxRows) this.schedule(0);
      else this.schedule(this.options.windowMs);
    });
  }

  /**
   * The collection window is an idle gap: each arrival pushes the flush back to `windowMs` after
   * it (a burst of requests, which HTTP parsing spreads over milliseconds, stays together), but
   * never past MAX_WAIT_WINDOWS windows after the oldest waiting request.
   */
  private schedule(ms: number): void {
    const now = performance.now();
    if (ms > 0) {
      this.firstWaiting ??= now;
      ms = Math.min(ms, Math.max(0, this.firstWaiting + MAX_WAIT_WINDOWS * this.options.windowMs - now));
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.firstWaiting = null;
      this.flush();
    }, ms);
  }

  /** Samples every waiting request, in batches of at most maxRows per policy and setting. */
  private flush(): void {
    const batches: Waiting[][] = [];
    for (const [key, q] of this.queues) {
      for (let i = 0; i < q.length; i += this.options.maxRows) batches.push(q.slice(i, i + this.options.maxRows));
      this.queues.delete(key);
    }
    for (const rows of batches) {
      const { policyId, temperature, topP } = rows[0];
      const maxNewTokens = Math.max(...rows.map((r) => r.maxNewTokens));
      const topLogprobs = Math.max(...rows.map((r) => r.topLogprobs ?? 0));
      const t0 = performance.now();
      let out: SampledCompletion[];
      try {
        out = this.policies.sample(
          policyId,
          rows.map((r) => r.prompt),
          { maxNewTokens, temperature, topP, seed: mixSeed(this.seed, this.flushes++), topLogprobs },
        );
      } catch (err) {
        for (const r of rows) r.reject(err as Error);
        continue;
      }
      if (this.options.recordCalls !== false) this.calls.push({ policyId, rows: rows.length, ms: performance.now() - t0 });
      rows.forEach((r, i) => r.resolve(ownShare(out[i], r)));
    }
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const q of this.queues.values()) for (const r of q) r.reject(new Error('the endpoint closed'));
    this.queues.clear();
  }
}
