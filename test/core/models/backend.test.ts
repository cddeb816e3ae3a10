/**
 * Compute-backend selection: the auto order node-gpu > node > wasm > cpu, each skip with its
 * reason, explicit requests (option or SRPO_LAB_BACKEND) honoured or refused with the reason,
 * and the setBackend boolean checked. On the build machines wasm and cpu exist, and `node` only
 * where scripts/native-backend-from-wheel.mjs built it; the first test follows what is there,
 * the others replace the native candidates by loaders that fail the way they fail without it.
 */
import * as tf from '@tensorflow/tfjs';
import { afterAll, describe, expect, it } from 'vitest';
import { backendFromEnv, defaultCandidates, initBackend } from '../../../src/core/models/backend';

const notInstalled = async () => 'not installed (test)';

describe('compute backend selection', () => {
  afterAll(async () => {
    await initBackend({ requested: 'wasm' }); // leave the file's backend as the setup chose it
  });

  it('falls back in order and says why each candidate was skipped', async () => {
    // No GPU here; tfjs-node only where scripts/native-backend-from-wheel.mjs built it.
    const nativeLoads = (await defaultCandidates()['node'].load()) === null;
    const report = await initBackend({ env: {} });
    expect(report.name).toBe(nativeLoads ? 'node' : 'wasm');
    expect(report.skipped.map((s) => s.name)).toEqual(nativeLoads ? ['node-gpu'] : ['node-gpu', 'node']);
    expect(report.skipped[0].reason).toMatch(/no GPU|not installed|failed to load/);
    if (!nativeLoads) expect(report.skipped[1].reason).toMatch(/not installed|failed to load/);
    expect(tf.getBackend()).toBe(nativeLoads ? 'tensorflow' : 'wasm');
  });

  it('detects "no GPU" before loading tfjs-node-gpu', async () => {
    const c = defaultCandidates(() => false);
    expect(await c['node-gpu'].load()).toMatch(/^no GPU/);
  });

  it('reports a package that is not installed as such', async () => {
    const c = defaultCandidates(() => true);
    // On this machine the optional native packages were removed by npm after their failed install.
    expect(await c['node-gpu'].load()).toMatch(/not installed|failed to load/);
  });

  it('falls through to cpu when wasm cannot start either', async () => {
    const report = await initBackend({
      env: {},
      candidates: { node: { tfjsBackend: 'tensorflow', load: notInstalled }, wasm: { tfjsBackend: 'wasm', load: async () => 'failed to load (test)' } },
    });
    expect(report.name).toBe('cpu');
    expect(report.skipped.map((s) => `${s.name}: ${s.reason}`)).toContain('wasm: failed to load (test)');
    expect(tf.getBackend()).toBe('cpu');
  });

  it('checks the boolean of setBackend', async () => {
    const report = await initBackend({
      env: {},
      candidates: {
        'node-gpu': { tfjsBackend: 'no-such-backend', load: async () => null },
        node: { tfjsBackend: 'tensorflow', load: notInstalled },
      },
    });
    expect(report.name).toBe('wasm');
    expect(report.skipped[0].reason).toMatch(/setBackend\('no-such-backend'\)/);
  });

  it('honours SRPO_LAB_BACKEND and an explicit option, the option first unless it is auto', async () => {
    expect((await initBackend({ env: { SRPO_LAB_BACKEND: 'cpu' } })).name).toBe('cpu');
    expect((await initBackend({ env: { SRPO_LAB_BACKEND: 'cpu' }, requested: 'wasm' })).name).toBe('wasm');
    // `auto`, the run config's default, is no preference: the variable decides.
    expect((await initBackend({ env: { SRPO_LAB_BACKEND: 'cpu' }, requested: 'auto' })).name).toBe('cpu');
    expect(backendFromEnv({ SRPO_LAB_BACKEND: 'auto' })).toBe('auto');
    expect(() => backendFromEnv({ SRPO_LAB_BACKEND: 'tpu' })).toThrow(/SRPO_LAB_BACKEND="tpu".*node-gpu, node, wasm, cpu/);
  });

  it('refuses an explicit request it cannot honour instead of silently falling back', async () => {
    await expect(initBackend({ requested: 'node-gpu', candidates: { 'node-gpu': { tfjsBackend: 'tensorflow', load: notInstalled } } })).rejects.toThrow(
      /backend "node-gpu" was requested but cannot start: node-gpu: not installed/,
    );
  });
});
