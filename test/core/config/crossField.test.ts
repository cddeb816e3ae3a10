/**
 * Config validation that knows the cross-field rules (issue 17, item 2): a config that cannot
 * run is refused before a run exists, in plain words, one problem per field, naming the field
 * to change; through the core (crossFieldProblems, formatSchemaError), the API (validateConfig /
 * createRun) and the CLI (`train`).
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  assertCrossFieldRules,
  crossFieldProblems,
  giveWayToModelFolder,
  mergeConfig,
  presetConfig,
  presetInput,
  resolveRunConfig,
} from '../../../src/core/config';
import { LabService } from '../../../src/core/host/labService';
import { NodeForkLauncher } from '../../../src/core/host/launcher';

const dir = mkdtempSync(join(tmpdir(), 'srpo-crossfield-'));
const WARM = resolve(__dirname, '../../../resources/warmstart/math-tiny');
/** math-quick's own overrides (presets.ts QUICK_MODEL), equal to its warm start's shape. */
const QUICK = { dModel: 64, nLayers: 2, nHeads: 2, contextLength: 256 };

describe('cross-field rules', () => {
  it('heads must divide the width: nHeads=3 with dModel=64 is refused at the override', () => {
    const c = presetConfig('math-quick', { policies: { init: null, modelOverrides: { dModel: 64, nHeads: 3 } } });
    expect(crossFieldProblems(c)).toEqual([{ path: 'policies.modelOverrides.nHeads', message: 'nHeads (3) must divide dModel (64)' }]);
    expect(() => assertCrossFieldRules(c)).toThrow(/run config: field "policies\.modelOverrides\.nHeads": nHeads \(3\) must divide dModel \(64\)/);
    // The same numbers that divide pass, and the tiny engine-test shape too.
    expect(crossFieldProblems(presetConfig('math-quick', { policies: { init: null, modelOverrides: { dModel: 64, nHeads: 4 } } }))).toEqual([]);
    // A preset width with an override that no longer divides it: the message names the model.
    const small = resolveRunConfig({ policies: { model: 'small', modelOverrides: { nHeads: 3 } } });
    expect(crossFieldProblems(small)[0]).toMatchObject({ path: 'policies.modelOverrides.nHeads', message: 'nHeads (3) must divide dModel (256)' });
  });

  it('policies.init must exist (initPath.ts reused)', () => {
    const c = presetConfig('math-quick', { policies: { init: join(dir, 'nope') } });
    expect(crossFieldProblems(c)).toEqual([{ path: 'policies.init', message: expect.stringMatching(/".*nope" does not exist/) }]);
  });

  it("a lab folder's shape wins: overrides that disagree with its config.json are refused, equal ones pass (math-quick's own)", () => {
    expect(crossFieldProblems(presetConfig('math-quick'))).toEqual([]); // QUICK_MODEL equals the warm start's shape
    const c = presetConfig('math-quick', { policies: { modelOverrides: { dModel: 128, nLayers: 2 } } });
    const problems = crossFieldProblems(c);
    expect(problems).toHaveLength(1);
    expect(problems[0].path).toBe('policies.modelOverrides.dModel');
    expect(problems[0].message).toMatch(
      /^dModel = 128 disagrees with the lab folder in policies\.init \(its config\.json has hidden_size = 64, where this shape needs 128\): .*Remove the override, or set policies\.init to null/,
    );
    // Any copy of a lab folder is read the same way; contextLength is compared as max_position_embeddings (twice it).
    const copy = join(dir, 'lab-copy');
    cpSync(WARM, copy, { recursive: true });
    const cfg = JSON.parse(readFileSync(join(copy, 'config.json'), 'utf8'));
    writeFileSync(join(copy, 'config.json'), JSON.stringify({ ...cfg, num_attention_heads: 4, num_key_value_heads: 4, head_dim: 16 }));
    expect(crossFieldProblems(presetConfig('math-quick', { policies: { init: copy } })).map((p) => p.message)).toEqual([
      expect.stringMatching(/^nHeads = 2 disagrees .* num_attention_heads = 4, where this shape needs 2\)/),
    ]);
    expect(crossFieldProblems(presetConfig('math-quick', { policies: { modelOverrides: { ...QUICK, contextLength: 128 } } })).map((p) => p.path)).toEqual([
      'policies.modelOverrides.contextLength',
    ]);
  });

  it("another model's folder is not compared: its shape wins and the preset's overrides give way", () => {
    const qwen = resolve(__dirname, '../../fixtures/hf/qwen3-tiny');
    const c = presetConfig('math-quick', { policies: { init: qwen, modelOverrides: { dModel: 128 } }, rollout: { maxNewTokens: 16 } });
    expect(crossFieldProblems(c).filter((p) => p.path.startsWith('policies.modelOverrides'))).toEqual([]);
    expect(giveWayToModelFolder(c).policies.modelOverrides).toEqual({});
  });
});

describe('human error text', () => {
  const message = (input: Record<string, unknown>) => {
    try {
      resolveRunConfig(mergeConfig(presetInput('math-quick'), input));
      return '';
    } catch (e) {
      return (e as Error).message;
    }
  };

  it('says what a field must be, in words, with the value given', () => {
    expect(message({ seed: 'abc' })).toBe('run config: field "seed" = "abc": must be a number, not text');
    expect(message({ steps: 0 })).toBe('run config: field "steps" = 0: must be at least 1');
    expect(message({ steps: 2.5 })).toBe('run config: field "steps" = 2.5: must be a whole number (got 2.5)');
    expect(message({ rollout: { temperature: 0 } })).toMatch(/field "rollout\.temperature" = 0: must be greater than 0/);
    expect(message({ objective: { algorithm: 'ppo' } })).toMatch(/field "objective\.algorithm" = "ppo": must be one of "srpo"/);
    expect(message({ bogus: 1 })).toBe('run config: unknown field "bogus"');
    expect(message({ seed: 'abc' })).not.toMatch(/Invalid input|expected number/);
  });

  it('reports each field once: four bad fields are four problems', () => {
    const text = message({ seed: 'abc', steps: -1, rollout: { groupSize: 'x' }, policies: { modelOverrides: { nHeads: 2.5 } } });
    expect(text.split('; ')).toHaveLength(4);
  });
});

describe('through the API: validateConfig / createRun', () => {
  const dbPath = join(dir, 'api.db');
  const service = new LabService({ dbPath, launcher: new NodeForkLauncher({ stdio: 'pipe' }) });
  afterAll(async () => {
    await service.close();
  });

  it('a config that cannot run is not "valid" and creates no run', async () => {
    const v = await service.call('validateConfig', { preset: 'math-quick', config: { policies: { init: null, modelOverrides: { dModel: 64, nHeads: 3 } } } });
    expect(v.ok).toBe(false);
    expect(v.errors).toEqual([{ path: 'policies.modelOverrides.nHeads', message: 'nHeads (3) must divide dModel (64)' }]);
    const seed = await service.call('validateConfig', { preset: 'math-quick', config: { seed: 'abc' } });
    expect(seed.errors).toEqual([{ path: 'seed', message: 'must be a number, not text' }]);
    const overrides = await service.call('validateConfig', { preset: 'math-quick', config: { policies: { modelOverrides: { nLayers: 3 } } } });
    expect(overrides.errors.map((e) => e.path)).toEqual(['policies.modelOverrides.nLayers']);
    await expect(
      service.call('createRun', { preset: 'math-quick', config: { policies: { init: null, modelOverrides: { nHeads: 3, dModel: 64 } } }, start: false }),
    ).rejects.toThrow(/nHeads \(3\) must divide dModel \(64\)/);
    expect(service.store.listRuns()).toEqual([]);
  });
});
