/**
 * Web mode: the LabService over HTTP + WebSocket for a browser (`srpo-lab serve`), listening on
 * 127.0.0.1 only. Every request and socket must carry the random token printed in the URL
 * (`?token=`, an `Authorization: Bearer` header, or the HttpOnly SameSite=Strict cookie set when
 * the page is first opened with the token); anything else gets 401: a JSON ApiResult on the API,
 * and for a page (GET of anything but /api/ and /assets/) a short HTML page that says which
 * (missing or wrong token) and what to open instead (tokenPage). Checked before the token, on
 * every request and on the WebSocket upgrade (403 when wrong, whatever the token):
 * - Host must be 127.0.0.1:PORT or localhost:PORT (DNS rebinding);
 * - Origin, when sent, must be exactly http://127.0.0.1:PORT or http://localhost:PORT. A page
 *   on another local port is same-*site* (the Strict cookie goes with its requests) but not
 *   same-*origin*; browsers always send Origin on POST and on WebSocket upgrades, so the upgrade
 *   without an Origin is refused too. Non-browser clients (the CLI, tests) send no Origin and use
 *   the Bearer header on the API.
 * Bodies: JSON only, at most 1 MiB (413), at most MAX_INPUT_DEPTH levels deep (400, measured on
 * the raw text before parsing), and no `__proto__`/`constructor`/`prototype` keys (400).
 * Nothing a client sends ends the process: the request target is split without anything that
 * throws (requestTarget.ts; only `/path?query` is accepted, else 400), the token is checked before
 * the path is percent-decoded (a malformed escape is then 400), and every handler (request,
 * upgrade, static) turns whatever it throws into an answer.
 *
 *   GET  /, /assets/...   the built renderer (out/renderer), strict CSP, no-referrer
 *   POST /api/<method>    JSON input -> ApiResult JSON (400 invalid input, 404 unknown method …)
 *   GET  /ws              WebSocket: one JSON LabPush per text frame
 *
 * Not here: the API itself (src/core/host/labService.ts), the push sockets (websocket.ts), the input
 * guards (src/shared/inputGuards.ts). Tested by test/server/server.test.ts, origin.test.ts,
 * limits.test.ts, fuzz.test.ts and test/e2e/lab.test.ts.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, resolve, sep } from 'node:path';
import type { Duplex } from 'node:stream';
import { HTTP_STATUS, toApiError, type ApiResult } from '../shared/api';
import { findForbiddenKey, forbiddenKeyMessage, jsonTextDepth, MAX_INPUT_DEPTH } from '../shared/inputGuards';
import type { LabHost } from '../core/host/labHost';
import { decodePath, parseRequestTarget, type RequestTarget } from './requestTarget';
import { createPushSockets } from './websocket';

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
  /** Bytes queued for one socket above which detail pushes are dropped (websocket.ts; default 1 MiB). */
  pushHighWaterBytes?: number;
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

export const MAX_BODY = 1 << 20;

/** A request the server could not read (a malformed escape, target or header): answered 400. */
class BadRequest extends Error {}

const STATUS_TEXT = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' } as const;

/** The origins a page of this server has: the only ones allowed to call it from a browser. */
export function ownOrigins(port: number): string[] {
  return [`http://127.0.0.1:${port}`, `http://localhost:${port}`];
}

/**
 * The desktop renderer's meta CSP allows no sockets (`connect-src 'self'`); served in web mode,
 * the page needs its own WebSocket, so the served copy names exactly this server's ws origins.
 */
export function webModeHtml(html: string, port: number): string {
  return html.replace(
    /(<meta\s+http-equiv="Content-Security-Policy"\s+content="[^"]*?connect-src 'self')/i,
    `$1 ws://127.0.0.1:${port} ws://localhost:${port}`,
  );
}

/**
 * The 401 page a browser gets for the lab's page without a valid token: static HTML (no script,
 * so the CSP's script-src 'self' has nothing to allow), whether a token was given (wrong: from an
 * earlier server) or not (missing: a bookmark, a copied address).
 */
export function tokenPage(kind: 'missing' | 'wrong'): string {
  const why =
    kind === 'wrong'
      ? "The token in this address is not this server's. Each start of <code>srpo-lab serve</code> makes a new one, so a link from an earlier start no longer opens the lab."
      : 'This address has no token. The lab only opens from the address its server printed, which carries a one-time token (<code>?token=…</code>).';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>SRPO Lab: token needed</title>
<style>body{font-family:system-ui,sans-serif;background:#10131a;color:#e6e9ef;max-width:640px;margin:12vh auto;padding:0 20px;line-height:1.5}code{background:#1d2534;padding:1px 5px;border-radius:4px}h1{font-size:20px}.muted{color:#9aa3b2}</style>
</head><body><main class="token-page" data-kind="${kind}"><h1>SRPO Lab needs its token</h1><p>${why}</p>
<p>Open the URL printed by the terminal that runs <code>npm run lab -- serve</code> (or <code>srpo-lab serve</code>): <code>http://127.0.0.1:PORT/?token=…</code>. After that the page keeps working without it until the server stops.</p>
<p class="muted">Lost it? Stop the server (Ctrl-C) and start it again: it prints a new URL.</p></main></body></html>`;
}

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
  const sockets = createPushSockets({ highWaterBytes: options.pushHighWaterBytes });
  let port = 0;
  const cookieName = () => `srpo_lab_${port}`;

  /** 'ok', or the status to refuse with and why. `upgrade`: a WebSocket handshake (an Origin is required). */
  const check = (req: IncomingMessage, target: RequestTarget, upgrade: boolean): { status: 'ok' } | { status: 401 | 403; message: string } => {
    const host = req.headers.host ?? '';
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) return { status: 403, message: 'unexpected Host header' };
    const origin = req.headers.origin;
    if (origin !== undefined && !ownOrigins(port).includes(origin))
      return { status: 403, message: `cross-origin request refused: Origin ${JSON.stringify(origin)} is not this lab's page` };
    if (upgrade && origin === undefined) return { status: 403, message: 'WebSocket upgrade without an Origin header refused' };
    const auth = req.headers.authorization;
    const bearer = auth?.startsWith('Bearer ') ? auth.slice(7) : null;
    const ok = sameToken(target.query.get('token'), token) || sameToken(bearer, token) || sameToken(cookieValue(req, cookieName()), token);
    return ok ? { status: 'ok' } : { status: 401, message: 'missing or wrong token: open the URL srpo-lab serve printed' };
  };

  /** Writes one JSON answer, unless the response is already under way or gone (then the socket is dropped). */
  const sendJson = (res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}) => {
    if (res.headersSent || res.destroyed) return void res.destroy();
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...extra, ...securityHeaders(port) });
    res.end(text);
  };

  const refuse = (res: ServerResponse, status: 400 | 401 | 403 | 404 | 405 | 413, message: string) =>
    sendJson(res, status, { ok: false, error: { code: status === 401 || status === 403 ? 'unauthorized' : 'invalid_input', message } });

  const sendResult = (res: ServerResponse, status: number, result: ApiResult<unknown>) => sendJson(res, status, result, { 'cache-control': 'no-store' });

  /** What a handler that threw answers: the request was not understood (400) or the lab failed it (500). */
  const answerThrown = (res: ServerResponse, err: unknown) => {
    if (err instanceof BadRequest) return refuse(res, 400, err.message);
    sendResult(res, 500, { ok: false, error: toApiError(err) });
  };

  const handleApi = async (req: IncomingMessage, res: ServerResponse, method: string) => {
    if (req.method !== 'POST') return refuse(res, 405, 'API calls are POST /api/<method> with a JSON body');
    if (!(req.headers['content-type'] ?? '').startsWith('application/json')) {
      return sendResult(res, 400, { ok: false, error: { code: 'invalid_input', message: 'content-type must be application/json' } });
    }
    const invalid = (message: string) => sendResult(res, 400, { ok: false, error: { code: 'invalid_input', message } });
    if (Number(req.headers['content-length'] ?? 0) > MAX_BODY) return refuse(res, 413, 'request body over 1 MiB');
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > MAX_BODY) return refuse(res, 413, 'request body over 1 MiB');
      chunks.push(c as Buffer);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    // Measured on the text: JSON.parse copes, but validation and the worker's structured clone recurse.
    if (jsonTextDepth(text, MAX_INPUT_DEPTH) > MAX_INPUT_DEPTH) return invalid(`request body nests deeper than ${MAX_INPUT_DEPTH} levels`);
    let raw: unknown;
    try {
      raw = chunks.length ? JSON.parse(text) : {};
    } catch (err) {
      return invalid(`body is not JSON: ${(err as Error).message}`);
    }
    const bad = findForbiddenKey(raw);
    if (bad) return invalid(forbiddenKeyMessage(bad.key, `request body at "${bad.path}"`));
    let value: unknown;
    try {
      value = await service.call(method, raw);
    } catch (err) {
      const error = toApiError(err);
      return sendResult(res, HTTP_STATUS[error.code] ?? 500, { ok: false, error });
    }
    sendResult(res, 200, { ok: true, value });
  };

  const handleStatic = (req: IncomingMessage, res: ServerResponse, target: RequestTarget) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return refuse(res, 405, 'GET only');
    const decoded = target.rawPath === '/' ? 'index.html' : decodePath(target.rawPath);
    if (decoded === null) throw new BadRequest('the path has a malformed percent-escape or a NUL byte');
    const path = normalize(join(rendererDir, decoded));
    let body: Buffer | null = null;
    if (path.startsWith(rendererDir + sep)) {
      try {
        body = statSync(path).isFile() ? readFileSync(path) : null;
      } catch {
        body = null; // missing, unreadable or gone since: not found
      }
    }
    if (body === null) {
      if (target.rawPath === '/') {
        res.writeHead(503, { 'content-type': 'text/plain', ...securityHeaders(port) });
        return void res.end(`The renderer is not built (${rendererDir} has no index.html): run npm run build.\n`);
      }
      return refuse(res, 404, 'not found');
    }
    const headers: Record<string, string> = { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream', ...securityHeaders(port) };
    headers['cache-control'] = extname(path) === '.html' ? 'no-store' : 'private, max-age=3600';
    // Opened with ?token=: keep it as a cookie so the page's own assets load without it.
    if (sameToken(target.query.get('token'), token)) headers['set-cookie'] = `${cookieName()}=${token}; HttpOnly; SameSite=Strict; Path=/`;
    res.writeHead(200, headers);
    if (req.method === 'HEAD') return void res.end();
    res.end(extname(path) === '.html' ? webModeHtml(body.toString('utf8'), port) : body);
  };

  /** One request: the target split (never throws), then Host, Origin and token, and only then the path decoded. */
  const handleRequest = (req: IncomingMessage, res: ServerResponse) => {
    const target = parseRequestTarget(req.url);
    if (!target) return refuse(res, 400, 'the request target must be a path starting with /');
    const verdict = check(req, target, false);
    const page = !target.rawPath.startsWith('/api/') && !target.rawPath.startsWith('/assets/');
    if (verdict.status === 401 && req.method === 'GET' && page) {
      res.writeHead(401, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...securityHeaders(port) });
      return void res.end(tokenPage(target.query.has('token') ? 'wrong' : 'missing'));
    }
    if (verdict.status !== 'ok') return refuse(res, verdict.status, verdict.message);
    if (target.rawPath.startsWith('/api/')) {
      handleApi(req, res, target.rawPath.slice(5)).catch((err) => answerThrown(res, err));
    } else handleStatic(req, res, target);
  };

  const server = createServer((req, res) => {
    // Nothing a client sends may end the process: whatever a handler throws becomes an answer.
    try {
      handleRequest(req, res);
    } catch (err) {
      answerThrown(res, err);
    }
  });

  /** Ends a refused handshake with a bare status line (the socket is not HTTP-framed any more). */
  const endUpgrade = (socket: Duplex, status: 400 | 401 | 403 | 404) => {
    if (socket.destroyed) return;
    socket.end(`HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  };

  const handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const target = parseRequestTarget(req.url);
    if (!target) return endUpgrade(socket, 400);
    const verdict = target.rawPath === '/ws' ? check(req, target, true).status : 404;
    if (verdict !== 'ok') return endUpgrade(socket, verdict);
    sockets.accept(req, socket, head, (conn) => {
      const dispose = service.subscribe((push) => conn.push(push));
      conn.onClose(dispose);
      conn.push({ type: 'hello' });
    });
  };

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    try {
      handleUpgrade(req, socket, head);
    } catch {
      endUpgrade(socket, 400);
    }
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
      await sockets.closeAll();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
