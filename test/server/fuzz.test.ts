/**
 * Web mode survives whatever a local process sends (issue 26: a request line `GET http://[ HTTP/1.1`
 * threw `TypeError: Invalid URL` and `GET /%E0%A4%A?token=…` threw `URIError` in the static
 * handler, each ending `serve` without the token). Raw TCP sockets to 127.0.0.1 send malformed
 * request lines, percent-escapes, headers and upgrade requests; every one must get an HTTP answer
 * (or a closed socket for bytes that are not HTTP at all), never a dead server, and afterwards a
 * normal request with the token is still answered. The count and time are bounded: a fixed list
 * plus a seeded batch of generated requests, each socket cut off after SOCKET_MS.
 *
 * The lab behind the server is a stub (the transport is what is under test): it answers every
 * method with `{ echo: method }`.
 */
import { mulberry32 } from '../../src/core/util/random';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LabHost } from '../../src/core/host/labHost';
import { startLabServer, type LabServer } from '../../src/server/server';

/** How long one raw exchange may take before the socket is cut off. */
const SOCKET_MS = 2_000;

const stubLab: LabHost = {
  call: (method: string) => Promise.resolve({ echo: method }),
  subscribe: () => () => undefined,
  close: () => Promise.resolve(),
};

/** Sends `bytes` on a fresh socket; resolves with everything received until the server closes or SOCKET_MS passes. */
function exchange(port: number, bytes: string | Buffer): Promise<{ text: string; closedByServer: boolean }> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closedByServer });
    };
    const timer = setTimeout(() => finish(false), SOCKET_MS);
    socket.on('data', (d) => {
      chunks.push(d);
      // One complete answer is enough (keep-alive would otherwise hold the socket open).
      const text = Buffer.concat(chunks).toString('latin1');
      const head = text.indexOf('\r\n\r\n');
      const length = /content-length:\s*(\d+)/i.exec(text);
      if (head >= 0 && (!length || text.length - head - 4 >= Number(length[1]))) finish(true);
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.write(bytes);
  });
}

const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);

/** A small seeded generator, so a failing case can be replayed. */
const seeded = mulberry32;

describe('web mode: no request ends the server', () => {
  let server: LabServer;
  let host: string;

  /** A normal API call with the token: the server is alive and answering. */
  const alive = () =>
    new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: server.port,
          method: 'POST',
          path: '/api/listRuns',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}` },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end('{}');
    });

  beforeAll(async () => {
    const rendererDir = join(mkdtempSync(join(tmpdir(), 'srpo-fuzz-')), 'renderer');
    mkdirSync(join(rendererDir, 'assets'), { recursive: true });
    writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><html><head></head><body></body></html>');
    writeFileSync(join(rendererDir, 'assets', 'index.js'), 'void 0;');
    server = await startLabServer({ service: stubLab, rendererDir });
    host = `127.0.0.1:${server.port}`;
  });

  afterAll(async () => {
    await server?.close();
  });

  it('answers an absolute-form target that is not a URL (`GET http://[`) with 400, on HTTP and on upgrade', async () => {
    const plain = await exchange(server.port, `GET http://[ HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    expect(statusOf(plain.text), plain.text).toBe(400);
    const upgrade = await exchange(
      server.port,
      `GET http://[ HTTP/1.1\r\nHost: ${host}\r\nOrigin: http://${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
        `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
    );
    expect(statusOf(upgrade.text), upgrade.text).toBe(400);
    expect(await alive()).toBe(200);
  });

  it('answers a malformed percent-escape with 400 when the token is right, 401 when it is not', async () => {
    const withToken = await exchange(server.port, `GET /%E0%A4%A?token=${server.token} HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    expect(statusOf(withToken.text), withToken.text).toBe(400);
    expect(withToken.text).toMatch(/percent-escape/);
    const asset = await exchange(server.port, `GET /assets/%ZZ HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${server.token}\r\n\r\n`);
    expect(statusOf(asset.text), asset.text).toBe(400);
    // The token is checked before the path is decoded: no token, no word about the escape.
    const without = await exchange(server.port, `GET /%E0%A4%A HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    expect(statusOf(without.text), without.text).toBe(401);
    expect(without.text).not.toMatch(/percent-escape/);
    expect(await alive()).toBe(200);
  });

  it('survives a fixed list of malformed request lines, escapes, headers and upgrades', async () => {
    const t = server.token;
    const ws = `Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n`;
    const cases: string[] = [
      `GET http://[ HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${t}\r\n\r\n`,
      `GET http://127.0.0.1:${server.port}/?token=${t} HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      `GET * HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      `OPTIONS * HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      `GET ?token=${t} HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      `GET //%%%?token=${t} HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      `GET /%00?token=${t} HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      `GET /assets/%2e%2e/%2e%2e/etc/passwd?token=${t} HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      `GET /?token=%E0%A4%A HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      `GET /?token=${t}&token=%FF HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      `GET /api/%E0%A4%A HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${t}\r\n\r\n`,
      `POST /api/%E0%A4%A HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
      `POST /api/listRuns HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nContent-Length: 99999999999999999999\r\n\r\n{}`,
      `POST /api/listRuns HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nContent-Length: -1\r\n\r\n{}`,
      `POST /api/listRuns HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nContent-Length: 3\r\n\r\n{"a`,
      `POST /api/listRuns HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`,
      `GET /?token=${t} HTTP/1.1\r\nHost: [\r\n\r\n`,
      `GET /?token=${t} HTTP/1.1\r\nHost: ${host}\r\nHost: evil\r\n\r\n`,
      `GET /?token=${t} HTTP/1.1\r\nHost: ${host}\r\nOrigin: http://[\r\n\r\n`,
      `GET /?token=${t} HTTP/1.1\r\nHost: ${host}\r\nCookie: ;;=;=%E0%A4%A;srpo_lab_${server.port}\r\n\r\n`,
      `GET /?token=${t} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer\r\n\r\n`,
      `GET / HTTP/1.1\r\nHost: ${host}\r\nBad Header Line\r\n\r\n`,
      `GET / HTTP/1.1\r\nHost: ${host}\r\nX: ${'a'.repeat(20_000)}\r\n\r\n`,
      `GET / HTTP/9.9\r\nHost: ${host}\r\n\r\n`,
      `GARBAGE\r\n\r\n`,
      `\x00\x01\x02\xff\r\n\r\n`,
      `GET /ws?token=${t} HTTP/1.1\r\nHost: ${host}\r\nOrigin: http://${host}\r\n${ws}\r\n`,
      `GET /ws?token=%E0%A4%A HTTP/1.1\r\nHost: ${host}\r\nOrigin: http://${host}\r\n${ws}\r\n`,
      `GET /%E0%A4%A?token=${t} HTTP/1.1\r\nHost: ${host}\r\nOrigin: http://${host}\r\n${ws}\r\n`,
      `GET http://[/ws?token=${t} HTTP/1.1\r\nHost: ${host}\r\nOrigin: http://${host}\r\n${ws}\r\n`,
      `GET /ws?token=${t} HTTP/1.1\r\nHost: ${host}\r\nOrigin: http://${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 99\r\n\r\n`,
      `POST /ws?token=${t} HTTP/1.1\r\nHost: ${host}\r\nOrigin: http://${host}\r\n${ws}Content-Length: 3\r\n\r\nabc`,
    ];
    for (const bytes of cases) {
      const reply = await exchange(server.port, bytes);
      // Either an HTTP answer (any status but a 5xx) or the socket closed on bytes that are not HTTP.
      const status = statusOf(reply.text);
      if (status === 0) expect(reply.closedByServer, `no answer to ${JSON.stringify(bytes.slice(0, 120))}`).toBe(true);
      else expect(status, `${JSON.stringify(bytes.slice(0, 120))} -> ${reply.text.slice(0, 200)}`).toBeLessThan(500);
    }
    expect(await alive()).toBe(200);
  });

  it('survives 150 generated requests (seeded), then still answers a normal one', async () => {
    const rand = seeded(26);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
    const pieces = [
      '/',
      '%',
      '%E0',
      '%A4%A',
      '%ZZ',
      '%00',
      '?',
      '&',
      '=',
      '#',
      '[',
      ']',
      '..',
      '//',
      'http://[',
      'api/',
      'assets/',
      'ws',
      '\\',
      '@',
      ':',
      'token=',
      server.token,
    ];
    const methods = ['GET', 'POST', 'HEAD', 'PUT', 'OPTIONS', 'DELETE', 'G\tET'];
    const headerNames = ['Host', 'Origin', 'Authorization', 'Cookie', 'Content-Type', 'Content-Length', 'Upgrade', 'Connection', 'Sec-WebSocket-Key'];
    const headerValues = [
      host,
      `http://${host}`,
      `Bearer ${server.token}`,
      'http://[',
      '%E0%A4%A',
      'websocket',
      'Upgrade',
      'application/json',
      '-5',
      '1e99',
      '',
      '\x7f',
    ];
    const started = Date.now();
    for (let i = 0; i < 150; i++) {
      let target = '';
      const n = 1 + Math.floor(rand() * 6);
      for (let k = 0; k < n; k++) target += pick(pieces);
      if (rand() < 0.7 && !target.startsWith('/')) target = '/' + target;
      const lines = [`${pick(methods)} ${target} HTTP/1.1`, `Host: ${host}`];
      const extra = Math.floor(rand() * 5);
      for (let k = 0; k < extra; k++) lines.push(`${pick(headerNames)}: ${pick(headerValues)}`);
      const body = rand() < 0.3 ? pick(['{}', '{"a":', '[]', 'null', '\xff\xfe']) : '';
      const reply = await exchange(server.port, lines.join('\r\n') + '\r\n\r\n' + body);
      const status = statusOf(reply.text);
      if (status === 0) expect(reply.closedByServer, `no answer to case ${i}: ${JSON.stringify(lines)}`).toBe(true);
      else expect(status, `case ${i}: ${JSON.stringify(lines)} -> ${reply.text.slice(0, 200)}`).toBeLessThan(500);
      if (Date.now() - started > 40_000) break; // bounded in time as well as in count
    }
    expect(await alive()).toBe(200);
  });
});
