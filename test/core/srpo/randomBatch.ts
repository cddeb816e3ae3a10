/**
 * Seeded random objective batches for tests: K from 1 to `maxK`, member lengths 1..`maxLen`,
 * partial masks, set log-ratios spread over every clip regime (inside, clipped low/high, beyond
 * the ±20 clamp), several groups (some singletons, some with equal rewards) and, optionally,
 * incomplete events (one member missing or one extra). Events carry a prompt (their task) and a
 * trajectory (one of three per task, so trajectories hold several events of several kinds).
 */
import type { ObjectiveBatch } from '../../../src/core/srpo';

export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

export interface RandomBatchOptions {
  events?: number;
  maxK?: number;
  maxLen?: number;
  incomplete?: boolean;
  /** Per-token log-ratio scales to draw from; large ones reach the clamp. */
  scales?: number[];
  roles?: string[];
}

export function randomBatch(seed: number, o: RandomBatchOptions = {}): ObjectiveBatch {
  const r = rng(seed);
  const nEvents = o.events ?? 12;
  const maxK = o.maxK ?? 5;
  const maxLen = o.maxLen ?? 64;
  const scales = o.scales ?? [0.002, 0.01, 0.05, 0.3, 1.5];
  const roles = o.roles ?? ['solver', 'verifier'];
  const batch: ObjectiveBatch = { events: [], members: [] };
  for (let e = 0; e < nEvents; e++) {
    const k = 1 + Math.floor(r() * maxK);
    const id = `ev${e}`;
    const group = `task${Math.floor(r() * 4)}/${r() < 0.7 ? 'solve' : 'verify'}`;
    const reward = r() < 0.15 ? 0.5 : Math.round(r() * 4) / 4;
    // No extra draws: prompt and trajectory derive from what was drawn, so the batches stay as before.
    const prompt = group.split('/')[0];
    batch.events.push({ id, group, reward, expectedK: k, prompt, trajectory: `${prompt}/t${e % 3}` });
    let members = k;
    if (o.incomplete && r() < 0.2) members += r() < 0.5 ? -1 : 1;
    const scale = scales[Math.floor(r() * scales.length)];
    const drift = (r() < 0.5 ? -0.3 : 0.3) * scale; // pushes the set log-ratio up or down
    for (let j = 0; j < members; j++) {
      const len = 1 + Math.floor(r() * maxLen);
      const logpOld = Array.from({ length: len }, () => -6 * r());
      const logpCur = logpOld.map((v) => v + scale * (2 * r() - 1) + drift);
      const mask = logpOld.map((_, t) => (t === 0 || r() < 0.85 ? 1 : 0));
      batch.members.push({ event: id, role: roles[Math.floor(r() * roles.length)], logpCur, logpOld, mask });
    }
  }
  return batch;
}
