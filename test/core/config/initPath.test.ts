/**
 * `policies.init` is checked where a run config is resolved for a new run (issue: a bad path
 * created a run that then failed in the engine; through the API any folder could be named and
 * the engine's error disclosed a file name inside it). checkInitPath accepts what the engine
 * loads (a Hugging Face model folder: config.json with model_type and its weights) and refuses
 * the rest with messages that never name what a folder holds; a checkpoint of the lab's former
 * character Transformer (config.json without model_type, or one sub-folder per policy) is refused
 * saying how to make its successor (decision 069); `srpo-lab train` and the API's
 * validateConfig / createRun refuse a bad path before any run exists.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/commands';
import type { CliIO } from '../../../src/cli/io';
import { assertRunConfigPaths, checkInitPath, labRoot, presetConfig } from '../../../src/core/config';
import { LabService } from '../../../src/core/host/labService';
import { NodeForkLauncher } from '../../../src/core/host/launcher';
import { LabStore } from '../../../src/core/store';
import { LabApiError } from '../../../src/shared/api';

const dir = mkdtempSync(join(tmpdir(), 'srpo-initpath-'));
const HF_CONFIG = '{"model_type":"llama"}';

function folder(name: string, files: Record<string, string>): string {
  const d = join(dir, name);
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(join(d, f, '..'), { recursive: true });
    writeFileSync(join(d, f), text);
  }
  mkdirSync(d, { recursive: true });
  return d;
}

/** A folder holding things whose names must never appear in an error. */
const secrets = folder('home', { id_rsa_SECRET: 'k', '.ssh_SECRET/known_hosts_SECRET': 'h', 'notes_SECRET/todo.txt': 't' });

describe('checkInitPath', () => {
  it("accepts the presets' warm starts (relative to the lab folder) and model folders", () => {
    expect(checkInitPath('resources/warmstart/math-tiny')).toBeNull(); // a lab folder of the HF family
    expect(checkInitPath('resources/warmstart/search-tiny')).toBeNull();
    expect(checkInitPath(folder('hf', { 'config.json': HF_CONFIG, 'model.safetensors': '' }))).toBeNull();
    expect(checkInitPath(folder('hf-sharded', { 'config.json': HF_CONFIG, 'model.safetensors.index.json': '{}' }))).toBeNull();
    expect(labRoot()).toBe(join(__dirname, '../../..'));
  });

  it("refuses the lab's former checkpoints, saying how to make a new warm start", () => {
    // The former model's config.json had no model_type; a run checkpoint had one sub-folder per policy.
    const old = folder('old-lab', { 'config.json': '{"dModel":64,"nLayers":2}', 'model.safetensors': '' });
    const oldRun = folder('old-run-ckpt', {
      'router/config.json': '{}',
      'router/model.safetensors': '',
      'solver/config.json': '{}',
      'solver/model.safetensors': '',
    });
    for (const p of [old, oldRun]) {
      expect(checkInitPath(p)).toMatch(/former character Transformer/);
      expect(checkInitPath(p)).toMatch(/warmstart --preset NAME --out DIR/);
    }
  });

  it('refuses a missing path, a file, and a folder that is no checkpoint', () => {
    expect(checkInitPath(join(dir, 'nope'))).toMatch(/does not exist/);
    expect(checkInitPath(join(secrets, 'id_rsa_SECRET'))).toMatch(/is not a folder/);
    expect(checkInitPath(secrets)).toMatch(
      /is not a model folder \(expected a Hugging Face model folder: config\.json \(with model_type\) and model\.safetensors or model\.safetensors\.index\.json/,
    );
    expect(checkInitPath(folder('no-weights', { 'config.json': '{}', 'tokenizer.json': '{}' }))).toMatch(/is not a model folder/);
    // A folder of folders that are not all model folders is no model folder either.
    expect(checkInitPath(folder('mixed', { 'shared/config.json': '{}', 'shared/model.safetensors': '', 'stray_SECRET/x.txt': '' }))).toMatch(
      /is not a model folder/,
    );
    expect(checkInitPath('does/not/exist')).toMatch(/resolved against the lab folder/);
  });

  it('never names what a refused folder holds', () => {
    for (const p of [secrets, join(dir, 'mixed'), join(secrets, 'notes_SECRET')]) {
      const message = checkInitPath(p);
      expect(message).not.toBeNull();
      // The path given is echoed back; nothing found inside it is.
      expect(message!.replace(p, '')).not.toMatch(/SECRET|todo|known_hosts|id_rsa|stray/);
    }
  });

  it('assertRunConfigPaths names the field', () => {
    const config = presetConfig('math-quick', { policies: { init: join(dir, 'nope') } });
    expect(() => assertRunConfigPaths(config)).toThrow(/run config: field "policies\.init": ".*nope" does not exist/);
    expect(() => assertRunConfigPaths(presetConfig('math-quick'))).not.toThrow();
  });
});

describe('a bad policies.init is refused before a run is created', () => {
  let service: LabService;
  const dbPath = join(dir, 'api.db');

  beforeAll(() => {
    service = new LabService({ dbPath, launcher: new NodeForkLauncher({ stdio: 'pipe' }) });
  });

  afterAll(async () => {
    await service?.close();
  });

  it('API: validateConfig reports the field; createRun answers invalid_input and stores nothing', async () => {
    const v = await service.call('validateConfig', { preset: 'math-quick', config: { policies: { init: secrets } } });
    expect(v.ok).toBe(false);
    expect(v.errors).toEqual([{ path: 'policies.init', message: expect.stringMatching(/is not a model folder/) }]);
    expect(JSON.stringify(v.errors)).not.toMatch(/id_rsa|known_hosts|todo/);
    const err = await service
      .call('createRun', { preset: 'math-quick', config: { policies: { init: join(dir, 'nope') } }, start: true })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LabApiError);
    expect(err).toMatchObject({ code: 'invalid_input', issues: [{ path: 'policies.init' }] });
    expect(service.store.listRuns()).toEqual([]);
    const fine = await service.call('validateConfig', { preset: 'math-quick', config: {} });
    expect(fine.ok).toBe(true);
  });

  it('CLI: train --set policies.init=<bad> fails naming the field, and no run exists', async () => {
    const db = join(dir, 'cli.db');
    const err: string[] = [];
    const io: CliIO = { out: () => {}, tty: null, launcher: new NodeForkLauncher({ stdio: 'pipe' }), onInterrupt: () => () => {} };
    const code = await runCli(['train', '--preset', 'math-quick', '--set', `policies.init=${secrets}`, '--db', db], io, (l) => err.push(l));
    expect(code).not.toBe(0);
    expect(err.join('\n')).toMatch(/field "policies\.init": .* is not a model folder/);
    expect(err.join('\n')).not.toMatch(/id_rsa|known_hosts|todo/);
    let runs = 0;
    try {
      const store = LabStore.open(db);
      runs = store.listRuns().length;
      store.close();
    } catch {
      // No database was created at all: no run either.
    }
    expect(runs).toBe(0);
  });
});
