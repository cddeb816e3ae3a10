/**
 * The lab API served from a worker thread (LabWorkerClient + labWorker.ts) over a real SQLite
 * file: every read method answers exactly what an in-thread LabService answers on the same
 * database; errors arrive with their code, message and field issues; pushes arrive; engines are
 * launched by this thread's launcher and their messages, exits and controls cross both ways; PDFs
 * are printed by this thread; the web server works over it; close stops engines, releases the
 * database (its WAL file is gone) and ends the worker.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LabService } from '../../../src/core/host/labService';
import { LabWorkerClient } from '../../../src/core/host/labWorkerClient';
import { EngineHandleBase, type EngineLaunchRequest } from '../../../src/core/host/launcher';
import type { HostMessage } from '../../../src/core/host/messages';
import { LabStore } from '../../../src/core/store';
import { startLabServer } from '../../../src/server/server';
import { API_METHODS, LabApiError, type ApiMethod, type LabPush } from '../../../src/shared/api';
import { makeStep, newRun, SMALL } from '../store/fixtures/makeStep';

/** An engine that does what the test says: records what it is sent, emits what it is told. */
class FakeEngine extends EngineHandleBase {
  readonly pid = 4242;
  readonly sent: HostMessage[] = [];
  onSend: (m: HostMessage) => void = () => {};

  constructor(readonly request: EngineLaunchRequest) {
    super();
  }

  send(m: HostMessage): void {
    this.sent.push(m);
    this.onSend(m);
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    this.end(null, signal);
  }

  emit(raw: unknown): void {
    this.receive(raw);
  }

  end(code: number | null, signal: NodeJS.Signals | null = null): void {
    this.exit(code, signal);
  }
}

class FakeLauncher {
  readonly engines: FakeEngine[] = [];
  failWith: string | null = null;

  launch(request: EngineLaunchRequest): FakeEngine {
    if (this.failWith) throw new Error(this.failWith);
    const e = new FakeEngine(request);
    this.engines.push(e);
    return e;
  }
}

async function until<T>(what: string, get: () => T | undefined | null | false, timeoutMs = 10_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function rejection(p: Promise<unknown>): Promise<LabApiError> {
  try {
    await p;
  } catch (err) {
    return err as LabApiError;
  }
  throw new Error('expected a rejection');
}

describe('LabWorkerClient: the lab API from a worker thread', () => {
  const dir = mkdtempSync(join(tmpdir(), 'srpo-lab-worker-'));
  const dbPath = join(dir, 'lab.db');
  const launcher = new FakeLauncher();
  const printed: string[] = [];
  let store: LabStore;
  let local: LabService;
  let lab: LabWorkerClient;
  let runId: number;
  const pushes: LabPush[] = [];

  beforeAll(async () => {
    // Written from this thread through its own connection, like an engine writing its run.
    store = LabStore.open(dbPath);
    runId = store.createRun(newRun('worker-run'));
    for (let step = 0; step < 6; step++) store.writeStep(runId, makeStep(step, SMALL));
    store.updateRun(runId, { status: 'completed' });
    local = new LabService({ dbPath, launcher });
    lab = new LabWorkerClient({
      dbPath,
      launcher,
      printPdf: async (html) => {
        printed.push(html);
        return new Uint8Array([0x25, 0x50, 0x44, 0x46]); // %PDF
      },
    });
    lab.subscribe((p) => pushes.push(p));
    await lab.ready;
  });

  afterAll(async () => {
    await lab?.close(1000);
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers every read method exactly as an in-thread LabService on the same database', async () => {
    const ev = store.listEvents(runId, {}, { limit: 1 }).events[0];
    const reads: { [M in ApiMethod]?: unknown } = {
      listRuns: {},
      getRun: { runId },
      presets: {},
      configSchema: {},
      validateConfig: { preset: 'math-quick', config: { seed: 3 } },
      metricKeys: { runId },
      metricSeries: { runId, keys: store.metricKeys(runId).slice(0, 3), maxPoints: 4 },
      evaluations: { runId },
      listEvents: { runId, filter: { kind: 'solve' }, limit: 5 },
      getEvent: { eventId: ev.id },
      getEpisode: { episodeId: ev.episodeId },
    };
    for (const [method, input] of Object.entries(reads)) {
      expect(await lab.call(method, input), method).toEqual(await local.call(method, input));
    }
    for (const format of ['csv-metrics', 'csv-events'] as const) {
      expect(await lab.call('exportReport', { runIds: [runId], format })).toEqual(await local.call('exportReport', { runIds: [runId], format }));
    }
    const html = await lab.call('exportReport', { runIds: [runId], format: 'html' });
    expect(html.content).toContain('worker-run');
    // The event detail keeps its members' tokens across the thread boundary.
    const detail = await lab.call('getEvent', { eventId: ev.id });
    expect(detail.members.some((m) => m.tokens && m.tokens.outputTokens.length > 0)).toBe(true);
  });

  it('runs the mutating methods in the worker: create (with a runs push), then delete', async () => {
    const before = pushes.length;
    const { runId: created } = await lab.call('createRun', { preset: 'math-quick', config: { seed: 11, name: 'made-in-worker' } });
    expect(store.getRun(created)?.name).toBe('made-in-worker');
    await until('a runs push', () => pushes.slice(before).some((p) => p.type === 'runs'));
    expect(await lab.call('deleteRun', { runId: created })).toEqual({ deleted: true });
    expect(store.getRun(created)).toBeNull();
  });

  it('runs the suite methods in the worker: create, list, read, start (nothing left to start)', async () => {
    const { suiteId } = await lab.call('createSuite', { spec: { name: 'w', seeds: [1], rows: [{ preset: 'math-srpo' }] } });
    expect(await lab.call('listSuites', {})).toEqual(await local.call('listSuites', {}));
    const d = await lab.call('getSuite', { suiteId });
    expect(d).toEqual(await local.call('getSuite', { suiteId }));
    for (const e of d.entries) store.updateRun(e.runId!, { status: 'completed' });
    expect(await lab.call('startSuite', { suiteId })).toEqual({ queued: 0 });
  });

  it('carries errors back with their code, message and field issues', async () => {
    const missing = await rejection(lab.call('getRun', { runId: 999_999 }));
    expect(missing).toBeInstanceOf(LabApiError);
    expect(missing.code).toBe('not_found');
    expect(missing.message).toBe('no run with id 999999');

    const badInput = await rejection(lab.call('listEvents', { runId, limit: 0 }));
    expect(badInput.code).toBe('invalid_input');
    expect(badInput.issues?.[0].path).toBe('limit');

    expect((await rejection(lab.call('dropTables', {}))).code).toBe('unknown_method');

    // Raised inside the worker (the merged config fails the run config schema).
    const badConfig = await rejection(lab.call('createRun', { preset: 'math-quick', config: { rollout: { groupSize: -1 } } }));
    expect(badConfig.code).toBe('invalid_input');
    expect(badConfig.issues?.some((i) => i.path === 'rollout.groupSize')).toBe(true);

    const conflict = await rejection(lab.call('pauseRun', { runId }));
    expect(conflict.code).toBe('conflict');
    expect(conflict.message).toMatch(/no engine running/);
  });

  it('launches engines on this thread and relays their messages, controls and exit', async () => {
    const { runId: run } = await lab.call('createRun', { preset: 'math-quick', config: { seed: 5 } });
    const from = pushes.length;
    await lab.call('startRun', { runId: run });
    const engine = await until('a launch on this thread', () => launcher.engines.find((e) => e.request.runId === run));
    expect(engine.request).toEqual({ dbPath, runId: run, mode: 'start' });
    await until('the running push', () => pushes.slice(from).find((p) => p.type === 'status' && p.runId === run && p.status === 'running'));

    // The engine writes a step, then says so: progress and points pushes come back through the worker.
    store.updateRun(run, { status: 'running' });
    store.writeStep(run, makeStep(0, SMALL, 3));
    engine.emit({
      type: 'step',
      step: 0,
      final: false,
      totalSteps: 10,
      metrics: { 'reward/mean': 0.5, 'loss/total': Number.NaN },
      wallMs: 12,
      checkpoint: null,
    });
    const progress = await until('a progress push', () => pushes.slice(from).find((p) => p.type === 'progress' && p.runId === run));
    expect(progress).toMatchObject({ step: 0, totalSteps: 10, metrics: { 'reward/mean': 0.5, 'loss/total': null } });
    const points = await until('a points push', () => pushes.slice(from).find((p) => p.type === 'points' && p.runId === run));
    expect(Object.keys(points.type === 'points' ? points.points : {}).length).toBeGreaterThan(0);
    engine.emit({ type: 'log', level: 'warn', line: 'hello from the engine' });
    await until('a log push', () => pushes.slice(from).find((p) => p.type === 'log' && p.line === 'hello from the engine'));
    engine.emit({ type: 'nonsense' });
    await until('an invalid message reported as a log error', () =>
      pushes.slice(from).find((p) => p.type === 'log' && p.level === 'error' && /invalid engine message/.test(p.line)),
    );

    await lab.call('pauseRun', { runId: run });
    engine.emit({ type: 'status', status: 'paused' });
    await until('the paused push', () => pushes.slice(from).find((p) => p.type === 'status' && p.runId === run && p.status === 'paused'));
    await lab.call('resumeRun', { runId: run });
    expect((await rejection(lab.call('startRun', { runId: run }))).code).toBe('conflict');
    await lab.call('stopRun', { runId: run });
    await until('pause, resume and stop sent to the engine', () => engine.sent.length >= 3);
    expect(engine.sent.map((m) => m.type)).toEqual(['pause', 'resume', 'stop']);
    expect((await lab.call('getRun', { runId: run })).active).toBe(true);

    store.updateRun(run, { status: 'stopped' });
    engine.emit({ type: 'status', status: 'stopped' });
    engine.end(0);
    await until('the final status push', () =>
      pushes.slice(from).find((p) => p.type === 'status' && p.runId === run && p.status === 'stopped' && p.error === null),
    );
    expect((await lab.call('getRun', { runId: run })).active).toBe(false);
  });

  it('reports a launch that fails on this thread: logged, and the run marked interrupted', async () => {
    const { runId: run } = await lab.call('createRun', { preset: 'math-quick', config: { seed: 6 } });
    const from = pushes.length;
    launcher.failWith = 'engine bundle not found: /nowhere/engine.js';
    try {
      await lab.call('startRun', { runId: run });
      const log = await until('the launch error', () => pushes.slice(from).find((p) => p.type === 'log' && p.runId === run && p.level === 'error'));
      expect(log.type === 'log' && log.line).toBe('engine did not start: engine bundle not found: /nowhere/engine.js');
      await until('the interrupted push', () => pushes.slice(from).find((p) => p.type === 'status' && p.runId === run && p.status === 'interrupted'));
      expect(store.getRun(run)?.status).toBe('interrupted');
    } finally {
      launcher.failWith = null;
    }
  });

  it('prints PDFs with this thread printer', async () => {
    const pdf = await lab.call('exportReport', { runIds: [runId], format: 'pdf' });
    expect(pdf.encoding).toBe('base64');
    expect(Buffer.from(pdf.content, 'base64').toString('latin1')).toBe('%PDF');
    expect(printed.at(-1)).toContain('worker-run');
  });

  it('serves the web API and its pushes over the worker', async () => {
    const server = await startLabServer({ service: lab });
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: server.port,
            method: 'POST',
            path: '/api/getRun',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}` },
          },
          (res) => {
            let text = '';
            res.on('data', (d) => (text += d));
            res.on('end', () => resolve(text));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify({ runId }));
      });
      expect(JSON.parse(body)).toMatchObject({ ok: true, value: { id: runId, name: 'worker-run' } });
    } finally {
      await server.close();
    }
  });

  it('every API method has been called through the worker in this file', () => {
    // A method added to the contract must be added to these tests too.
    const covered: ApiMethod[] = [
      'listRuns',
      'getRun',
      'deleteRun',
      'presets',
      'configSchema',
      'validateConfig',
      'createRun',
      'startRun',
      'resumeRun',
      'pauseRun',
      'stopRun',
      'metricKeys',
      'metricSeries',
      'evaluations',
      'listEvents',
      'getEvent',
      'getEpisode',
      'exportReport',
      'listSuites',
      'getSuite',
      'createSuite',
      'startSuite',
    ];
    expect([...API_METHODS].sort()).toEqual([...covered].sort());
  });

  it('closes cleanly: stops its engines, releases the database, refuses later calls', async () => {
    const { runId: run } = await lab.call('createRun', { preset: 'math-quick', config: { seed: 8 } });
    await lab.call('startRun', { runId: run });
    const engine = await until('a launch', () => launcher.engines.find((e) => e.request.runId === run));
    engine.onSend = (m) => {
      if (m.type !== 'stop') return;
      // Like a real engine: its final status through its own connection, then the message.
      const own = LabStore.open(dbPath);
      own.updateRun(run, { status: 'stopped' });
      own.close();
      engine.emit({ type: 'status', status: 'stopped' });
      setTimeout(() => engine.end(0), 20);
    };
    // Only the worker's connection is left open after this.
    await local.close();
    store.close();
    expect(existsSync(`${dbPath}-wal`)).toBe(true);
    await lab.close(5000);
    expect(engine.sent.map((m) => m.type)).toEqual(['stop']);
    expect(lab.running).toBe(false);
    // better-sqlite3 checkpoints and removes the WAL when the last connection closes.
    expect(existsSync(`${dbPath}-wal`)).toBe(false);
    const after = await rejection(lab.call('listRuns', {}));
    expect(after.code).toBe('unsupported');
    expect(after.message).toBe('the lab is closed');
    const reopened = LabStore.open(dbPath);
    expect(reopened.getRun(run)?.status).toBe('stopped');
    reopened.close();
  });
});

describe('LabWorkerClient: a lab that cannot open', () => {
  it('rejects ready and every call with the reason', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'srpo-lab-worker-bad-'));
    const dbPath = join(dir, 'is-a-directory');
    mkdirSync(dbPath);
    const lab = new LabWorkerClient({ dbPath, launcher: new FakeLauncher() });
    try {
      const err = await rejection(lab.ready);
      expect(err.code).toBe('internal');
      expect(err.message).toMatch(/could not open the lab database/);
      expect((await rejection(lab.call('listRuns', {}))).message).toBe(err.message);
    } finally {
      await lab.close(1000);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
