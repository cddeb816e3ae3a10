// The real-model presets (math-qwen3-0.6b, ...) through the API: listed and shown like any preset
// (the New run page lists every preset), but a run is created from one only with a model folder.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LabService } from '../../../src/core/host/labService';
import { NodeForkLauncher } from '../../../src/core/host/launcher';
import { presetNeedsModelFolder, PRESET_NAMES } from '../../../src/core/config';

const TINY = resolve(__dirname, '../../fixtures/hf/qwen3-tiny');

describe('real-model presets through the API', () => {
  let dir: string;
  let service: LabService;
  /** The tiny fixture with a context the presets' prompts fit in (the fixture's own 128 positions do not). */
  let FIXTURE: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'srpo-hfpresets-'));
    FIXTURE = join(dir, 'qwen3-tiny-long');
    cpSync(TINY, FIXTURE, { recursive: true });
    const config = JSON.parse(readFileSync(join(FIXTURE, 'config.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(FIXTURE, 'config.json'), JSON.stringify({ ...config, max_position_embeddings: 4096 }));
    service = new LabService({ dbPath: join(dir, 'lab.db'), launcher: new NodeForkLauncher({ stdio: 'pipe' }) });
  });
  afterAll(async () => {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const hfPresets = PRESET_NAMES.filter((n) => presetNeedsModelFolder(n));

  it('there are real-model presets, and the preset list includes them without a folder', async () => {
    expect(hfPresets).toContain('math-qwen3-0.6b');
    const listed = (await service.call('presets', {})) as { name: string }[];
    for (const name of hfPresets) expect(listed.map((p) => p.name)).toContain(name);
  });

  it('validation without policies.init names the field and refuses; no run is created', async () => {
    const v = (await service.call('validateConfig', { preset: 'math-qwen3-0.6b', config: {} })) as { ok: boolean; errors: { path: string; message: string }[] };
    expect(v.ok).toBe(false);
    expect(v.errors.map((e) => e.path)).toContain('policies.init');
    await expect(service.call('createRun', { preset: 'math-qwen3-0.6b', config: {} })).rejects.toThrow(/policies\.init/);
    expect(await service.call('listRuns', {})).toEqual([]);
  });

  it('validation with a model folder passes', async () => {
    const v = (await service.call('validateConfig', { preset: 'math-qwen3-0.6b', config: { policies: { init: FIXTURE } } })) as {
      ok: boolean;
      errors: unknown[];
    };
    expect(v.errors).toEqual([]);
    expect(v.ok).toBe(true);
  });

  it('a model folder whose context the prompts do not fit is refused at the field, with both numbers', async () => {
    const v = (await service.call('validateConfig', { preset: 'math-qwen3-0.6b', config: { policies: { init: TINY } } })) as {
      ok: boolean;
      errors: { path: string; message: string }[];
    };
    expect(v.ok).toBe(false);
    expect(v.errors.map((e) => e.path)).toEqual(['rollout.maxNewTokens']);
    expect(v.errors[0].message).toMatch(/is \d+ tokens; with rollout.maxNewTokens \d+ it needs \d+ positions, more than the model's context of 128/);
  });

  it("a Hugging Face folder's shape wins: the preset's lab-model overrides are not recorded", async () => {
    // math-quick carries the small model's shape as modelOverrides (dModel 64, ...): recorded when
    // policies.init is null (the run builds its lab model from them), given way to any folder
    // (its own warm start included) otherwise.
    const plain = (await service.call('validateConfig', { preset: 'math-quick', config: { policies: { init: null } } })) as unknown as {
      config: { policies: { modelOverrides: Record<string, unknown> } };
    };
    expect(Object.keys(plain.config.policies.modelOverrides).length).toBeGreaterThan(0);
    const v = (await service.call('validateConfig', { preset: 'math-quick', config: { policies: { init: FIXTURE } } })) as unknown as {
      ok: boolean;
      config: { policies: { init: string; modelOverrides: Record<string, unknown> } };
    };
    expect(v.ok).toBe(true);
    expect(v.config.policies.init).toBe(FIXTURE);
    expect(v.config.policies.modelOverrides).toEqual({});
  });
});
