/**
 * The engine limit and its queue (issue: six `createRun(start)` calls started six engines at
 * once): with one slot, the first run gets an engine and the other five are `queued` in
 * listRuns, getRun, the pushes and `srpo-lab runs`; they start one at a time, in the order asked,
 * each when the previous engine has exited. A queued run holds its lease, so a second host can
 * neither start nor delete it; stopping a queued run takes it out of the queue. Engines here are
 * fakes that do what the test says (the queue is the host's; real engines are in test/engine/).
 * Also the default limit: one per GPU, one without, SRPO_LAB_MAX_ENGINES and the option over it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/commands';
import { defaultEngineLimit, engineLimit, nvidiaGpuCount } from '../../../src/core/host/engineLimit';
import { LabService } from '../../../src/core/host/labService';
import type { EngineLaunchRequest } from '../../../src/core/host/launcher';
import { FakeEngine } from './fakeEngine';
import type { LabApiError, LabPush } from '../../../src/shared/api';

class FakeLauncher {
  readonly engines: FakeEngine[] = [];
  /** Engines alive now, and the most ever alive at once. */
  live = 0;
  peak = 0;
  service!: LabService;
  launch(request: EngineLaunchRequest): FakeEngine {
    const e = new FakeEngine(request, this.service);
    this.engines.push(e);
    this.peak = Math.max(this.peak, ++this.live);
    e.onExit(() => this.live--);
    return e;
  }
}

const services: LabService[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
});

function lab(dbPath = join(mkdtempSync(join(tmpdir(), 'srpo-queue-')), 'lab.db'), maxEngines?: number) {
  const launcher = new FakeLauncher();
  const service = new LabService({ dbPath, launcher, ...(maxEngines !== undefined ? { maxEngines } : {}) });
  launcher.service = service;
  services.push(service);
  const pushes: LabPush[] = [];
  service.subscribe((p) => pushes.push(p));
  return { dbPath, launcher, service, pushes };
}

async function rejection(p: Promise<unknown>): Promise<LabApiError> {
  try {
    await p;
  } catch (err) {
    return err as LabApiError;
  }
  throw new Error('expected a rejection');
}

const tick = () => new Promise((r) => setTimeout(r, 0));

async function cliRuns(dbPath: string): Promise<string[]> {
  const out: string[] = [];
  const code = await runCli(['runs', '--db', dbPath], { out: (l) => out.push(l), tty: null, launcher: null as never, onInterrupt: () => () => {} }, (l) =>
    out.push(`ERR ${l}`),
  );
  expect(code, out.join('\n')).toBe(0);
  return out;
}

describe('engine limit and queue', () => {
  it('six createRun(start) with one slot: one engine, five queued, then each in turn in the order asked', async () => {
    const { dbPath, launcher, service, pushes } = lab(undefined, 1);
    const ids: number[] = [];
    for (let seed = 1; seed <= 6; seed++) ids.push((await service.call('createRun', { preset: 'math-quick', config: { seed, steps: 1 }, start: true })).runId);

    expect(launcher.engines.map((e) => e.request.runId)).toEqual([ids[0]]);
    expect(service.activeRuns()).toEqual([ids[0]]);
    expect(service.queuedRuns()).toEqual(ids.slice(1));
    const listed = new Map((await service.call('listRuns', {})).map((r) => [r.id, r.status]));
    expect(ids.map((id) => listed.get(id))).toEqual(['running', 'queued', 'queued', 'queued', 'queued', 'queued']);
    expect((await service.call('getRun', { runId: ids[3] })).status).toBe('queued');
    expect(pushes.filter((p) => p.type === 'status' && p.status === 'queued').map((p) => p.type === 'status' && p.runId)).toEqual(ids.slice(1));
    // The CLI, another process's view, sees the queue through the leases.
    const table = await cliRuns(dbPath);
    expect(table.filter((l) => /\bqueued\b/.test(l))).toHaveLength(5);
    expect(table.filter((l) => /\brunning\b/.test(l))).toHaveLength(1);

    for (let i = 0; i < 6; i++) {
      expect(launcher.engines).toHaveLength(i + 1);
      expect(launcher.live).toBe(1);
      launcher.engines[i].complete();
      await tick();
    }
    expect(launcher.engines.map((e) => e.request.runId)).toEqual(ids);
    expect(launcher.engines.every((e) => e.request.mode === 'start')).toBe(true);
    expect(launcher.peak).toBe(1);
    expect(service.queuedRuns()).toEqual([]);
    expect((await service.call('listRuns', {})).map((r) => r.status)).toEqual(Array(6).fill('completed'));
    const started = ids.map((id) => service.store.getRun(id)!.startedAt!);
    expect(started).toEqual([...started].sort((a, b) => a - b));
  });

  it('a queued run holds its lease: a second host can neither start nor delete it; stop takes it out of the queue', async () => {
    const first = lab(undefined, 1);
    const a = (await first.service.call('createRun', { preset: 'math-quick', config: { seed: 1 }, start: true })).runId;
    const b = (await first.service.call('createRun', { preset: 'math-quick', config: { seed: 2 }, start: true })).runId;
    expect(first.service.queuedRuns()).toEqual([b]);

    const second = lab(first.dbPath, 4);
    const startElsewhere = await rejection(second.service.call('startRun', { runId: b }));
    expect(startElsewhere.code).toBe('conflict');
    expect(startElsewhere.message).toMatch(
      new RegExp(`^run ${b} is queued by lab host pid ${process.pid} on host .+ \\(since .+, last heartbeat \\d+ s ago\\)`),
    );
    const deleteElsewhere = await rejection(second.service.call('deleteRun', { runId: b }));
    expect(deleteElsewhere.code).toBe('conflict');
    expect(deleteElsewhere.message).toMatch(/queued by lab host pid .*; stop it before deleting it/);
    // The running one is refused as well (its lease is held by the host that launched it).
    expect((await rejection(second.service.call('resumeRun', { runId: a, force: true }))).message).toMatch(
      new RegExp(`^run ${a} is being started by lab host pid`),
    );
    expect((await second.service.call('getRun', { runId: b })).status).toBe('queued');
    expect(second.launcher.engines).toHaveLength(0);

    await first.service.call('stopRun', { runId: b });
    expect(first.service.queuedRuns()).toEqual([]);
    expect((await first.service.call('getRun', { runId: b })).status).toBe('created');
    expect(first.pushes.at(-1)).toEqual({ type: 'status', runId: b, status: 'created', error: null });
    first.launcher.engines[0].complete();
    await tick();
    expect(first.launcher.engines).toHaveLength(1); // b left the queue: nothing else starts
    // Free now: the other host may start it.
    await second.service.call('startRun', { runId: b });
    expect(second.launcher.engines.map((e) => e.request.runId)).toEqual([b]);
    second.launcher.engines[0].complete();
  });

  it('deleting a queued run of this host takes it out of the queue first', async () => {
    const { service, launcher } = lab(undefined, 1);
    await service.call('createRun', { preset: 'math-quick', config: { seed: 1 }, start: true });
    const b = (await service.call('createRun', { preset: 'math-quick', config: { seed: 2 }, start: true })).runId;
    expect(await service.call('deleteRun', { runId: b })).toEqual({ deleted: true });
    expect(service.queuedRuns()).toEqual([]);
    launcher.engines[0].complete();
    await tick();
    expect(launcher.engines).toHaveLength(1);
  });

  it('the limit: one engine per GPU, one without; SRPO_LAB_MAX_ENGINES and the option override it', () => {
    expect(defaultEngineLimit(0)).toBe(1);
    expect(defaultEngineLimit(1)).toBe(1);
    expect(defaultEngineLimit(4)).toBe(4);
    expect(engineLimit(undefined, {}, 0)).toBe(1);
    expect(engineLimit(undefined, {}, 2)).toBe(2);
    expect(engineLimit(undefined, { SRPO_LAB_MAX_ENGINES: '3' }, 0)).toBe(3);
    expect(engineLimit(2, { SRPO_LAB_MAX_ENGINES: '3' }, 0)).toBe(2);
    expect(() => engineLimit(undefined, { SRPO_LAB_MAX_ENGINES: '0' }, 0)).toThrow(/SRPO_LAB_MAX_ENGINES="0" is not an integer >= 1/);
    expect(() => engineLimit(1.5)).toThrow(/maxEngines = 1.5/);
    const { service } = lab();
    expect(service.maxEngines).toBe(process.env.SRPO_LAB_MAX_ENGINES ? Number(process.env.SRPO_LAB_MAX_ENGINES) : Math.max(1, nvidiaGpuCount()));
  });
});
