/**
 * Web mode refuses other local pages (issue: cross-site WebSocket hijacking). A page served from
 * http://127.0.0.1:<other port> is same-site with the lab (its requests carry the SameSite=Strict
 * cookie) but not same-origin: its socket upgrades and API calls must get 403 whatever they carry,
 * while the lab's own page (either of its two origins) and Origin-less CLI clients with the Bearer
 * token keep working. Also: the served page's meta CSP names exactly this server's ws origins.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LabService } from '../../src/core/host/labService';
import { NodeForkLauncher } from '../../src/core/host/launcher';
import type { LabPush } from '../../src/shared/api';
import { startLabServer, type LabServer } from '../../src/server/server';
import { openSocket } from './wsClient';

function post(port: number, path: string, headers: Record<string, string>, body = '{}'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'GET', path, headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('web mode: only the lab page itself gets in', () => {
  let service: LabService;
  let server: LabServer;
  let cookie: string;
  let otherPort: number;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'srpo-origin-'));
    const rendererDir = join(dir, 'renderer');
    mkdirSync(rendererDir);
    // The desktop renderer's meta CSP (src/renderer/index.html) allows no sockets.
    writeFileSync(
      join(rendererDir, 'index.html'),
      `<!doctype html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'self'; connect-src 'self'; object-src 'none'"></head><body></body></html>`,
    );
    service = new LabService({ dbPath: join(dir, 'lab.db'), launcher: new NodeForkLauncher({ stdio: 'pipe' }) });
    server = await startLabServer({ service, rendererDir });
    cookie = `srpo_lab_${server.port}=${server.token}`;
    otherPort = server.port === 65535 ? 1024 : server.port + 1;
  });

  afterAll(async () => {
    await server?.close();
    await service?.close();
  });

  it('refuses a socket from another local port even with the cookie (403), and pushes nothing to it', async () => {
    // The handshake carries the cookie the browser would attach (same-site across ports).
    const ws = await openSocket(server.port, '/ws', `127.0.0.1:${server.port}`, `http://127.0.0.1:${otherPort}`, { cookie });
    expect(ws.status).toMatch(/ 403 /);
    expect(ws.messages).toEqual([]);
    ws.close();
  });

  it('refuses a socket from another local port even with the token in the URL (403)', async () => {
    const ws = await openSocket(server.port, `/ws?token=${server.token}`, `127.0.0.1:${server.port}`, `http://127.0.0.1:${otherPort}`);
    expect(ws.status).toMatch(/ 403 /);
    ws.close();
  });

  it('refuses a socket upgrade without an Origin header (403)', async () => {
    const ws = await openSocket(server.port, `/ws?token=${server.token}`, `127.0.0.1:${server.port}`, null);
    expect(ws.status).toMatch(/ 403 /);
    ws.close();
  });

  it('refuses look-alike origins: other scheme, other host, a prefix trick, "null"', async () => {
    for (const origin of [
      `https://127.0.0.1:${server.port}`,
      `http://127.0.0.2:${server.port}`,
      `http://127.0.0.1:${server.port}.evil.example`,
      `http://127.0.0.1:${server.port}0`,
      'null',
    ]) {
      const ws = await openSocket(server.port, `/ws?token=${server.token}`, `127.0.0.1:${server.port}`, origin);
      expect(ws.status, origin).toMatch(/ 403 /);
      ws.close();
    }
  });

  it("accepts the page's own origins (127.0.0.1 and localhost) with the cookie and pushes to them", async () => {
    for (const origin of [`http://127.0.0.1:${server.port}`, `http://localhost:${server.port}`]) {
      const ws = await openSocket(server.port, '/ws', `127.0.0.1:${server.port}`, origin, { cookie });
      expect(ws.status, origin).toMatch(/ 101 /);
      await ws.waitFor((m) => (m as LabPush).type === 'hello', 'hello', 5000);
      ws.close();
    }
  });

  it('refuses API calls from another local port with the cookie or the token (403)', async () => {
    const foreign = `http://127.0.0.1:${otherPort}`;
    const withCookie = await post(server.port, '/api/configSchema', { cookie, origin: foreign });
    expect(withCookie.status).toBe(403);
    expect(JSON.parse(withCookie.body).error.message).toMatch(/Origin/);
    expect((await post(server.port, '/api/configSchema', { authorization: `Bearer ${server.token}`, origin: foreign })).status).toBe(403);
    expect((await post(server.port, `/api/listRuns?token=${server.token}`, { origin: foreign })).status).toBe(403);
    expect((await get(server.port, `/?token=${server.token}`, { origin: foreign })).status).toBe(403);
  });

  it("answers the page's own origin and Origin-less CLI clients", async () => {
    expect((await post(server.port, '/api/configSchema', { cookie, origin: `http://127.0.0.1:${server.port}` })).status).toBe(200);
    expect((await post(server.port, '/api/configSchema', { cookie, origin: `http://localhost:${server.port}` })).status).toBe(200);
    expect((await post(server.port, '/api/configSchema', { authorization: `Bearer ${server.token}` })).status).toBe(200);
  });

  it('still refuses a foreign Host with an own Origin (DNS rebinding)', async () => {
    const r = await post(server.port, '/api/configSchema', { cookie, origin: `http://127.0.0.1:${server.port}`, host: `evil.example:${server.port}` });
    expect(r.status).toBe(403);
  });

  it("serves the page with a meta CSP naming exactly this server's ws origins", async () => {
    const page = await get(server.port, `/?token=${server.token}`);
    expect(page.status).toBe(200);
    const meta = /content="([^"]*)"/.exec(page.body)![1];
    expect(meta).toContain(`connect-src 'self' ws://127.0.0.1:${server.port} ws://localhost:${server.port};`);
    expect(meta).not.toMatch(/ws:\/\/[^ ;]*:\*/);
  });
});
