/**
 * The renderer's only door to the lab: a LabClient over Electron IPC when the preload exposed
 * `window.lab`, else over HTTP (POST /api/<method>) + WebSocket pushes in web mode, with the
 * token taken from the page URL once (then kept in sessionStorage and removed from the address
 * bar). Every method unwraps the wire's ApiResult and throws ApiClientError on failure. Nothing
 * else in the renderer touches window.lab, fetch or WebSocket.
 *
 * Tested through test/e2e/lab.test.ts (web mode in headless Chromium).
 */
import { API_METHODS, type ApiErrorDto, type ApiMethod, type ApiResult, type LabClient, type LabPush } from '../../../shared/api';

/** What the preload exposes (src/preload/index.ts): one function per method plus subscribe. */
export type LabBridge = { [M in ApiMethod]: (input: unknown) => Promise<ApiResult<unknown>> } & {
  transport: 'ipc';
  subscribe(listener: (push: LabPush) => void): () => void;
};

declare global {
  interface Window {
    lab?: LabBridge;
  }
}

export class ApiClientError extends Error {
  constructor(readonly error: ApiErrorDto) {
    super(error.message);
    this.name = 'ApiClientError';
  }
  get code() {
    return this.error.code;
  }
  get issues() {
    return this.error.issues ?? [];
  }
}

function unwrap<T>(r: ApiResult<T>): T {
  if (r.ok) return r.value;
  throw new ApiClientError(r.error);
}

function ipcClient(bridge: LabBridge): LabClient {
  const methods = Object.fromEntries(API_METHODS.map((m) => [m, async (input: unknown) => unwrap(await bridge[m](input ?? {}))]));
  return { ...(methods as unknown as LabClient), transport: 'ipc', subscribe: (l) => bridge.subscribe(l) };
}

const TOKEN_KEY = 'srpo-lab-token';

/** The token from `?token=` (stored, then removed from the visible URL) or from sessionStorage. */
function takeToken(): string {
  const url = new URL(window.location.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl) {
    sessionStorage.setItem(TOKEN_KEY, fromUrl);
    url.searchParams.delete('token');
    history.replaceState(history.state, '', url.pathname + url.search + url.hash);
    return fromUrl;
  }
  return sessionStorage.getItem(TOKEN_KEY) ?? '';
}

function httpClient(): LabClient {
  const token = takeToken();
  const listeners = new Set<(p: LabPush) => void>();
  let socket: WebSocket | null = null;
  let retry = 500;

  const connect = () => {
    if (socket || listeners.size === 0) return;
    const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws?token=${encodeURIComponent(token)}`);
    socket = ws;
    ws.onmessage = (ev) => {
      retry = 500;
      let push: LabPush;
      try {
        push = JSON.parse(String(ev.data)) as LabPush;
      } catch {
        return;
      }
      for (const l of [...listeners]) l(push);
    };
    ws.onclose = () => {
      socket = null;
      // Reconnect while someone listens (the server restarted, the laptop slept).
      if (listeners.size) setTimeout(connect, (retry = Math.min(retry * 2, 10_000)));
    };
  };

  const call = async (method: ApiMethod, input: unknown) => {
    const res = await fetch(`/api/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(input ?? {}),
    });
    let body: ApiResult<unknown>;
    try {
      body = (await res.json()) as ApiResult<unknown>;
    } catch {
      throw new ApiClientError({ code: 'internal', message: `${method}: HTTP ${res.status}` });
    }
    return unwrap(body);
  };

  const methods = Object.fromEntries(API_METHODS.map((m) => [m, (input: unknown) => call(m, input)]));
  return {
    ...(methods as unknown as LabClient),
    transport: 'http',
    subscribe(listener) {
      listeners.add(listener);
      connect();
      return () => {
        listeners.delete(listener);
        if (!listeners.size && socket) {
          socket.onclose = null;
          socket.close();
          socket = null;
        }
      };
    },
  };
}

let client: LabClient | null = null;

/** The one client of this page. */
export function labClient(): LabClient {
  client ??= window.lab ? ipcClient(window.lab) : httpClient();
  return client;
}
