/**
 * Web mode as a client meets it: the token guards every request and socket (none, wrong, wrong
 * Host: refused), the CSP and no-referrer headers, input validation errors with field paths,
 * config validation with a diff against the preset, and a real tiny run (forked engine) whose
 * pushes arrive over the WebSocket, then its reports in every text format.
 */
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LabService } from '../../src/core/host/labService';
import { NodeForkLauncher } from '../../src/core/host/launcher';
import type { LabPush } from '../../src/shared/api';
import { startLabServer, type LabServer } from '../../src/server/server';
import { openSocket } from './wsClient';

export const TINY_RUN = {
  policies: { init: null, modelOverrides: { dModel: 32, nLayers: 1, nHeads: 2, contextLength: 192 } },
  rollout: { tasksPerStep: 2, groupSize: 2, maxNewTokens: 8 },
  eval: { every: 2, n: 2, queries: 2 },
  steps: 4,
};

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function http(port: number, method: string, path: string, opts: { body?: unknown; headers?: Record<string, string> } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const data = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    const req = request(
      { host: '127.0.0.1', port, method, path, headers: { ...(data ? { 'content-type': 'application/json' } : {}), ...opts.headers } },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

describe('srpo-lab serve: HTTP + WebSocket API', () => {
  let service: LabService;
  let server: LabServer;
  let api: (method: string, body: unknown) => Promise<{ status: number; json: { ok: boolean; value?: any; error?: any } }>;

  beforeAll(async () => {
    const dbPath = join(mkdtempSync(join(tmpdir(), 'srpo-server-')), 'lab.db');
    service = new LabService({ dbPath, launcher: new NodeForkLauncher({ stdio: 'pipe' }) });
    server = await startLabServer({ service });
    api = async (method, body) => {
      const r = await http(server.port, 'POST', `/api/${method}`, { body, headers: { authorization: `Bearer ${server.token}` } });
      return { status: r.status, json: JSON.parse(r.body) };
    };
  });

  afterAll(async () => {
    await server?.close();
    await service?.close();
  });

  it('prints a 127.0.0.1 URL carrying a long random token', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64}$/);
  });

  it('refuses requests without the token or with a wrong one (401)', async () => {
    expect((await http(server.port, 'GET', '/')).status).toBe(401);
    expect((await http(server.port, 'GET', '/?token=nope')).status).toBe(401);
    expect((await http(server.port, 'GET', '/assets/index.js')).status).toBe(401);
    expect((await http(server.port, 'POST', '/api/listRuns', { body: {} })).status).toBe(401);
    expect((await http(server.port, 'POST', '/api/listRuns', { body: {}, headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await http(server.port, 'POST', '/api/listRuns', { body: {}, headers: { cookie: `srpo_lab_${server.port}=wrong` } })).status).toBe(401);
  });

  it('refuses a foreign Host header even with the token (403: DNS rebinding)', async () => {
    const r = await http(server.port, 'POST', '/api/listRuns', {
      body: {},
      headers: { authorization: `Bearer ${server.token}`, host: `evil.example:${server.port}` },
    });
    expect(r.status).toBe(403);
  });

  it('refuses sockets without the token or with a wrong one', async () => {
    const none = await openSocket(server.port, '/ws');
    expect(none.status).toMatch(/ 401 /);
    const wrong = await openSocket(server.port, '/ws?token=abc');
    expect(wrong.status).toMatch(/ 401 /);
    const good = await openSocket(server.port, `/ws?token=${server.token}`);
    expect(good.status).toMatch(/ 101 /);
    await good.waitFor((m) => (m as LabPush).type === 'hello', 'hello');
    good.ping(Buffer.from('hi')); // ping -> pong
    await expect.poll(() => good.pongs, { timeout: 5_000, interval: 5 }).toBe(1);
    good.close();
  });

  it('accepts the token by query, bearer header or cookie, and sends strict security headers', async () => {
    const byQuery = await http(server.port, 'GET', `/?token=${server.token}`);
    expect([200, 503]).toContain(byQuery.status); // 503 where the renderer is not built
    const csp = String(byQuery.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(byQuery.headers['referrer-policy']).toBe('no-referrer');
    if (byQuery.status === 200) expect(String(byQuery.headers['set-cookie'])).toMatch(/HttpOnly; SameSite=Strict/);
    const byCookie = await http(server.port, 'POST', '/api/listRuns', { body: {}, headers: { cookie: `srpo_lab_${server.port}=${server.token}` } });
    expect(byCookie.status).toBe(200);
  });

  it('validates every input where it arrives: field paths, unknown methods, non-JSON bodies', async () => {
    const bad = await api('getRun', { runId: 'one' });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('invalid_input');
    expect(bad.json.error.issues[0].path).toBe('runId');
    const extra = await api('listRuns', { sneaky: 1 });
    expect(extra.status).toBe(400);
    expect(extra.json.error.message).toMatch(/sneaky/);
    const unknown = await api('dropDatabase', {});
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe('unknown_method');
    const missing = await api('getRun', { runId: 999 });
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('not_found');
    const notJson = await http(server.port, 'POST', '/api/listRuns', {
      body: 'x',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'text/plain' },
    });
    expect(notJson.status).toBe(400);
  });

  it('validates a run config field by field and diffs it against its preset', async () => {
    const wrong = await api('validateConfig', { preset: 'math-quick', config: { rollout: { groupSize: 0 }, optimizer: { lr: 5 } } });
    expect(wrong.json.value.ok).toBe(false);
    expect(wrong.json.value.errors.map((e: { path: string }) => e.path).sort()).toEqual(['optimizer.lr', 'rollout.groupSize']);
    const fine = await api('validateConfig', { preset: 'math-quick', config: { rollout: { groupSize: 6 } } });
    expect(fine.json.value.ok).toBe(true);
    expect(fine.json.value.diff).toEqual([{ path: 'rollout.groupSize', before: 4, after: 6 }]);
    const refused = await api('createRun', { preset: 'math-quick', config: { steps: -1 } });
    expect(refused.status).toBe(400);
    expect(refused.json.error.issues[0].path).toBe('steps');
    const fields = await api('configSchema', {});
    const groupSize = fields.json.value.find((f: { path: string }) => f.path === 'rollout.groupSize');
    expect(groupSize).toMatchObject({ kind: 'integer', min: 1, max: 64 });
  });

  it('pushes a tiny run over the socket as it trains, then exports its reports', async () => {
    const ws = await openSocket(server.port, `/ws?token=${server.token}`);
    const created = await api('createRun', { preset: 'math-quick', config: TINY_RUN, start: true });
    expect(created.status).toBe(200);
    const runId = created.json.value.runId as number;
    await ws.waitFor((m) => (m as LabPush).type === 'runs', 'runs push');
    const progress = (await ws.waitFor((m) => (m as LabPush).type === 'progress' && (m as { runId: number }).runId === runId, 'a progress push')) as Extract<
      LabPush,
      { type: 'progress' }
    >;
    expect(progress.totalSteps).toBe(4);
    // Step 0's evaluation is pushed first, on its own, before the step commits (no training metrics yet).
    const evalPoints = (await ws.waitFor((m) => (m as LabPush).type === 'points', 'a points push')) as Extract<LabPush, { type: 'points' }>;
    expect(evalPoints.step).toBe(0);
    expect(evalPoints.points['eval/macro/avg']).toBeDefined();
    expect(evalPoints.points['reward/mean']).toBeUndefined();
    const points = (await ws.waitFor((m) => (m as LabPush).type === 'points' && m !== evalPoints, "the step's points push")) as Extract<
      LabPush,
      { type: 'points' }
    >;
    expect(points.points['reward/mean']).toBeDefined();
    expect(points.points['grad/norm']).toBeDefined();
    await ws.waitFor((m) => (m as LabPush).type === 'status' && (m as { status: string }).status === 'completed', 'completed status', 90_000);
    ws.close();

    const runs = await api('listRuns', {});
    expect(runs.json.value[0]).toMatchObject({
      id: runId,
      status: 'completed',
      preset: 'math-quick',
      workflow: 'math',
      objective: 'srpo',
      steps: 4,
      lastStep: 4,
    });
    const series = await api('metricSeries', { runId, keys: ['reward/mean', 'eval/macro/avg'], maxPoints: 100 });
    expect(series.json.value['reward/mean'].length).toBeGreaterThanOrEqual(4);
    const page = await api('listEvents', { runId, filter: { kind: 'solve', k: 2, split: 'train' }, limit: 5 }); // eval episodes store no tokens by default
    expect(page.json.value.events.length).toBeGreaterThan(0);
    const event = await api('getEvent', { eventId: page.json.value.events[0].id });
    expect(event.json.value.members).toHaveLength(2);
    expect(event.json.value.members[0].tokens.outputText.length).toBe(event.json.value.members[0].tokens.mask.length);

    const html = (await api('exportReport', { runIds: [runId], format: 'html' })).json.value;
    expect(html.filename).toBe(`srpo-run-${runId}.html`);
    expect(html.content).toContain('<svg');
    expect(html.content).not.toMatch(/<script|src="http/);
    const md = (await api('exportReport', { runIds: [runId], format: 'markdown' })).json.value.content as string;
    expect(md).toMatch(/\| config \| seeds \|/);
    const metricsCsv = (await api('exportReport', { runIds: [runId], format: 'csv-metrics' })).json.value.content as string;
    expect(metricsCsv.split('\n')[0]).toBe('run,step,key,value,wall_time');
    expect(metricsCsv).toContain(',reward/mean,');
    const eventsCsv = (await api('exportReport', { runIds: [runId], format: 'csv-events' })).json.value.content as string;
    expect(eventsCsv.split('\n')[0]).toMatch(/^run,step,event_id/);
    expect(eventsCsv.trim().split('\n').length).toBeGreaterThan(10);
    const pdf = await api('exportReport', { runIds: [runId], format: 'pdf' });
    expect(pdf.status).toBe(501); // this service was given no printer
  }, 120_000);
});
