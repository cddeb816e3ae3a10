/**
 * Web mode: the LabService over HTTP + WebSocket for a browser (`srpo-lab serve`), listening on
 * 127.0.0.1 only. Every request and socket must carry the random token printed in the URL
 * (`?token=`, an `Authorization: Bearer` header, or the HttpOnly SameSite=Strict cookie set when
 * the page is first opened with the token); anything else gets 401. A Host header other than
 * 127.0.0.1/localhost:PORT gets 403 (DNS rebinding).
 *
 *   GET  /, /assets/...   the built renderer (out/renderer), strict CSP, no-referrer
 *   POST /api/<method>    JSON input -> ApiResult JSON (400 invalid input, 404 unknown method …)
 *   GET  /ws              WebSocket: one JSON LabPush per text frame
 *
 * Not here: the API itself (src/core/host/labService.ts), framing (websocket.ts).
 * Tested by test/server/server.test.ts and test/e2e/lab.test.ts.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, resolve, sep } from 'node:path';
import type { Duplex } from 'node:stream';
import { HTTP_STATUS, toApiError, type ApiResult, type LabPush } from '../shared/api';
import type { LabHost } from '../core/host/labHost';
import { acceptWebSocket, type WebSocketConnection } from './websocket';

/** The built renderer, relative to this file (src/server -> out/renderer). */
export const DEFAULT_RENDERER_DIR = resolve(__dirname, '../../out/renderer');

export interface LabServerOptions {
  /** A LabService, or a LabWorkerClient (the same service in a worker thread: `srpo-lab serve`). */
  service: LabHost;
  /** 0 (default): a free port. */
  port?: number;
  /** The token to require (default: 32 random bytes, hex). */
  token?: string;
  rendererDir?: string;
}

export interface LabServer {
  readonly port: number;
  readonly token: string;
  /** The URL to open: `http://127.0.0.1:PORT/?token=...`. */
  readonly url: string;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

const MAX_BODY = 1 << 20;

function securityHeaders(port: number): Record<string, string> {
  return {
    'content-security-policy': [
      "default-src 'none'",
      "script-src 'self'",
      // ECharts and Vue set inline styles; no inline script is ever allowed.
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data: blob:",
      "font-src 'self'",
      `connect-src 'self' ws://127.0.0.1:${port} ws://localhost:${port}`,
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
    'x-content-type-options': 'nosniff',
    // The token is in the page URL: never send it on as a Referer.
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
  };
}

function sameToken(given: string | undefined | null, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookieValue(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return null;
}

export async function startLabServer(options: LabServerOptions): Promise<LabServer> {
  const { service } = options;
  const token = options.token ?? randomBytes(32).toString('hex');
  const rendererDir = resolve(options.rendererDir ?? DEFAULT_RENDERER_DIR);
  const sockets = new Set<WebSocketConnection>();
  let port = 0;
  const cookieName = () => `srpo_lab_${port}`;

  /** 'ok', or the status to refuse with. */
  const check = (req: IncomingMessage, url: URL): 'ok' | 401 | 403 => {
    const host = req.headers.host ?? '';
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) return 403;
    const auth = req.headers.authorization;
    const bearer = auth?.startsWith('Bearer ') ? auth.slice(7) : null;
    const ok = sameToken(url.searchParams.get('token'), token) || sameToken(bearer, token) || sameToken(cookieValue(req, cookieName()), token);
    return ok ? 'ok' : 401;
  };

  const refuse = (res: ServerResponse, status: 401 | 403 | 404 | 405 | 413, message: string) => {
    res.writeHead(status, { 'content-type': 'application/json', ...securityHeaders(port) });
    res.end(JSON.stringify({ ok: false, error: { code: status === 401 || status === 403 ? 'unauthorized' : 'invalid_input', message } }));
  };

  const sendResult = (res: ServerResponse, status: number, result: ApiResult<unknown>) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...securityHeaders(port) });
    res.end(JSON.stringify(result));
  };

  const handleApi = async (req: IncomingMessage, res: ServerResponse, method: string) => {
    if (req.method !== 'POST') return refuse(res, 405, 'API calls are POST /api/<method> with a JSON body');
    if (!(req.headers['content-type'] ?? '').startsWith('application/json')) {
      return sendResult(res, 400, { ok: false, error: { code: 'invalid_input', message: 'content-type must be application/json' } });
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > MAX_BODY) return refuse(res, 413, 'request body over 1 MiB');
      chunks.push(c as Buffer);
    }
    let raw: unknown;
    try {
      raw = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
    } catch (err) {
      return sendResult(res, 400, { ok: false, error: { code: 'invalid_input', message: `body is not JSON: ${(err as Error).message}` } });
    }
    try {
      const value = await service.call(method, raw);
      sendResult(res, 200, { ok: true, value });
    } catch (err) {
      const error = toApiError(err);
      sendResult(res, HTTP_STATUS[error.code] ?? 500, { ok: false, error });
    }
  };

  const handleStatic = (req: IncomingMessage, res: ServerResponse, url: URL) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return refuse(res, 405, 'GET only');
    const rel = url.pathname === '/' ? 'index.html' : decodeURIComponent(url.pathname.slice(1));
    const path = normalize(join(rendererDir, rel));
    if (!path.startsWith(rendererDir + sep) || !existsSync(path) || !statSync(path).isFile()) {
      if (url.pathname === '/') {
        res.writeHead(503, { 'content-type': 'text/plain', ...securityHeaders(port) });
        return void res.end(`The renderer is not built (${rendererDir} has no index.html): run npm run build.\n`);
      }
      return refuse(res, 404, 'not found');
    }
    const headers: Record<string, string> = { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream', ...securityHeaders(port) };
    headers['cache-control'] = extname(path) === '.html' ? 'no-store' : 'private, max-age=3600';
    // Opened with ?token=: keep it as a cookie so the page's own assets load without it.
    if (sameToken(url.searchParams.get('token'), token)) headers['set-cookie'] = `${cookieName()}=${token}; HttpOnly; SameSite=Strict; Path=/`;
    res.writeHead(200, headers);
    res.end(req.method === 'HEAD' ? undefined : readFileSync(path));
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const verdict = check(req, url);
    if (verdict !== 'ok') return refuse(res, verdict, verdict === 401 ? 'missing or wrong token: open the URL srpo-lab serve printed' : 'unexpected Host header');
    if (url.pathname.startsWith('/api/')) {
      handleApi(req, res, url.pathname.slice(5)).catch((err) => sendResult(res, 500, { ok: false, error: toApiError(err) }));
    } else handleStatic(req, res, url);
  });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const verdict = url.pathname === '/ws' ? check(req, url) : 404;
    if (verdict !== 'ok') {
      const text = verdict === 401 ? 'Unauthorized' : verdict === 403 ? 'Forbidden' : 'Not Found';
      socket.end(`HTTP/1.1 ${verdict} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    const conn = acceptWebSocket(req, socket);
    if (!conn) return;
    sockets.add(conn);
    const dispose = service.subscribe((push) => conn.sendText(JSON.stringify(push)));
    conn.onClose(() => {
      dispose();
      sockets.delete(conn);
    });
    conn.sendText(JSON.stringify({ type: 'hello' } satisfies LabPush));
  });

  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(options.port ?? 0, '127.0.0.1', () => ok());
  });
  port = (server.address() as AddressInfo).port;
  return {
    port,
    token,
    url: `http://127.0.0.1:${port}/?token=${token}`,
    close: async () => {
      for (const s of [...sockets]) s.close(1001, 'server closing');
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
