/**
 * Evaluation in batches: splitting the queries into sampler batches (eval.batchEpisodes) keeps
 * every query with its n samples, and an evaluation that fits one batch does not depend on the
 * batch limit.
 */
import { describe, expect, it } from 'vitest';
import { presetConfig } from '../../../src/core/config';
import { openPolicies } from '../../../src/core/policies/registry';
import { buildEnvironment } from '../../../src/core/train/environment';
import { evaluate } from '../../../src/core/train/evaluate';

const tiny = (batchEpisodes: number) =>
  presetConfig('math-quick', {
    policies: { init: null, modelOverrides: { dModel: 32, nLayers: 1, nHeads: 2, contextLength: 192 } },
    rollout: { maxNewTokens: 6 },
    eval: { n: 2, queries: 5, batchEpisodes },
  });

describe('evaluate', () => {
  it('splits queries into sampler batches without losing or duplicating any, deterministically', () => {
    const results = [10, 10_000, 3, 3].map((batch) => {
      const config = tiny(batch);
      // policies.init null: a fresh seeded lab folder of the overridden shape (policies/registry.ts).
      const policies = openPolicies(config, { baseDir: process.cwd() });
      try {
        return evaluate(buildEnvironment(config), config, policies, 0);
      } finally {
        policies.dispose();
      }
    });
    for (const r of results) {
      expect(r.records).toHaveLength(1);
      expect(r.records[0].queries).toBe(5);
      expect(r.records[0].n).toBe(2);
    }
    // Everything but the latencies (wall time) is a function of the seeds.
    const outcome = (r: (typeof results)[number]) =>
      r.records.map(({ avgAtN, passAtN, tokensPerQuery, callsPerQuery }) => ({ avgAtN, passAtN, tokensPerQuery, callsPerQuery }));
    // 10 episodes fit one batch either way: the same evaluation.
    expect(outcome(results[1])).toEqual(outcome(results[0]));
    // Batches of 3 episodes hold one query (its 2 samples) each; still deterministic.
    expect(outcome(results[3])).toEqual(outcome(results[2]));
    expect(results[2].records[0].tokensPerQuery).toBeGreaterThan(0);
  });
});
