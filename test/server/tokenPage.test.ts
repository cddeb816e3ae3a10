/**
 * A browser that opens the lab without its token (a bookmark, a link from an earlier server) gets
 * a page saying what to open, not raw 401 JSON; the API keeps its JSON 401, assets stay refused,
 * and the Host/Origin checks still come first (403, whatever the token). src/server/server.ts
 * (tokenPage). test/e2e/trace.test.ts shows the page in Chromium.
 */
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LabService } from '../../src/core/host/labService';
import { NodeForkLauncher } from '../../src/core/host/launcher';
import { startLabServer, type LabServer } from '../../src/server/server';

function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; type: string; body: string; csp: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          type: String(res.headers['content-type'] ?? ''),
          body,
          csp: String(res.headers['content-security-policy'] ?? ''),
        }),
      );
    });
    req.on('error', reject);
    req.end(method === 'POST' ? '{}' : undefined);
  });
}

describe('the token page', () => {
  let service: LabService;
  let server: LabServer;
  beforeAll(async () => {
    service = new LabService({ dbPath: join(mkdtempSync(join(tmpdir(), 'srpo-token-')), 'lab.db'), launcher: new NodeForkLauncher({ stdio: 'pipe' }) });
    server = await startLabServer({ service });
  });
  afterAll(async () => {
    await server?.close();
    await service?.close();
  });

  it('no token: 401 with an HTML page that says the address needs its token and where to find it', async () => {
    const r = await get(server.port, '/');
    expect(r.status).toBe(401);
    expect(r.type).toMatch(/^text\/html/);
    expect(r.body).toContain('data-kind="missing"');
    expect(r.body).toContain('SRPO Lab needs its token');
    expect(r.body).toContain('npm run lab -- serve');
    expect(r.body).not.toMatch(/<script/i);
    expect(r.csp).toContain("script-src 'self'");
  });

  it("a wrong token: the page says it is not this server's (a restart makes a new one)", async () => {
    const r = await get(server.port, '/?token=0123');
    expect(r.status).toBe(401);
    expect(r.body).toContain('data-kind="wrong"');
    expect(r.body).toMatch(/not this server/);
    expect(r.body).not.toContain(server.token);
  });

  it('the API keeps its JSON 401 and assets stay refused', async () => {
    const api = await get(server.port, '/api/listRuns', {}, 'POST');
    expect(api.status).toBe(401);
    expect(JSON.parse(api.body)).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    const asset = await get(server.port, '/assets/index.js');
    expect(asset.status).toBe(401);
    expect(asset.type).toMatch(/json/);
  });

  it('a foreign Origin or Host is refused before the token page (403)', async () => {
    expect((await get(server.port, '/', { origin: 'http://evil.example' })).status).toBe(403);
    expect((await get(server.port, '/', { host: `evil.example:${server.port}` })).status).toBe(403);
  });
});
