/**
 * `produceWarmStart`: demonstrations from the preset's tasks, supervised training whose loss
 * falls, a checkpoint in the run-checkpoint layout that a run's `policies.init` loads (into a
 * shared or a per-role set), and the same seed writing the same weights.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { presetConfig } from '../../../src/core/config';
import { readParameters } from '../../../src/core/models';
import { initialPolicies } from '../../../src/core/train/checkpoints';
import { produceWarmStart } from '../../../src/core/train/warmstart';

const overrides = { policies: { modelOverrides: { dModel: 32, nLayers: 1, nHeads: 2, contextLength: 256 } } };

describe('warm-start checkpoints', () => {
  it('trains on demonstrations, writes a loadable checkpoint, and is deterministic', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'srpo-ws-'));
    const a = await produceWarmStart({ preset: 'math-quick', out: join(dir, 'a'), epochs: 3, episodes: 12, overrides });
    expect(a.demonstrations).toBeGreaterThan(40);
    const losses = a.reports.map((r) => r.loss);
    expect(losses[losses.length - 1]).toBeLessThan(losses[0]);
    const b = await produceWarmStart({ preset: 'math-quick', out: join(dir, 'b'), epochs: 3, episodes: 12, overrides });
    expect(b.demonstrations).toBe(a.demonstrations);
    expect(readFileSync(join(dir, 'b', 'shared', 'model.safetensors'))).toEqual(readFileSync(join(dir, 'a', 'shared', 'model.safetensors')));

    for (const sharing of ['shared', 'per-role'] as const) {
      const config = presetConfig('math-quick', { policies: { sharing, init: join(dir, 'a') } });
      const { policies } = initialPolicies(config);
      const loaded = readParameters(policies.policies()[0].model);
      const fresh = presetConfig('math-quick', { policies: { ...overrides.policies, sharing, init: null } });
      const random = initialPolicies(fresh).policies;
      expect(loaded.get('head')).not.toEqual(readParameters(random.policies()[0].model).get('head'));
      expect(policies.policies().every((p) => p.version === 0)).toBe(true);
      policies.dispose();
      random.dispose();
    }
  });
});
