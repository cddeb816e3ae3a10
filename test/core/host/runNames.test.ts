/**
 * Default run names (issue 30, point 11): every seed-1 run of a preset was `math-quick-s1`, so a
 * database with two series of seeds listed runs no one could tell apart. A taken default name
 * now gets a series number before the seed, the same for every seed of the series; a name the
 * config sets is kept as it is.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { presetConfig } from '../../../src/core/config';
import { createRun } from '../../../src/core/host/runs';
import { LabStore } from '../../../src/core/store';

describe('default run names', () => {
  it('number a second and third series of seeds; keep a name the config sets', () => {
    const store = LabStore.open(join(mkdtempSync(join(tmpdir(), 'srpo-run-names-')), 'lab.db'));
    try {
      const names = (seeds: number[]) =>
        seeds.map((seed) => store.getRun(createRun(store, { config: presetConfig('math-quick', { seed }), preset: 'math-quick' }))!.name);
      expect(names([1, 2, 3])).toEqual(['math-quick-s1', 'math-quick-s2', 'math-quick-s3']);
      expect(names([1, 2, 3])).toEqual(['math-quick-2-s1', 'math-quick-2-s2', 'math-quick-2-s3']);
      expect(names([1])).toEqual(['math-quick-3-s1']);
      const named = createRun(store, { config: presetConfig('math-quick', { seed: 1, name: 'math-quick-s1' }), preset: 'math-quick' });
      expect(store.getRun(named)!.name).toBe('math-quick-s1');
      expect(store.getRun(createRun(store, { config: presetConfig('math-quick', { seed: 9 }), preset: null }))!.name).toBe('custom-s9');
    } finally {
      store.close();
    }
  });
});
