/**
 * The renderer's only door to the lab: a LabClient over Electron IPC when the preload exposed
 * `window.lab`, else over HTTP (POST /api/<method>) + WebSocket pushes in web mode, with the
 * token taken from the page URL once (then kept in sessionStorage and removed from the address
 * bar). Every method unwraps the wire's ApiResult and throws ApiClientError on failure. Nothing
 * else in the renderer touches window.lab, fetch or WebSocket.
 *
 * Connection state (web mode; IPC is always 'connected'): 'lost' when a call cannot reach the
 * server (fetch fails, or a proxy-style 5xx without an ApiResult body) or the push socket closes;
 * 'unauthorized' when the server answers 401 (a token from an earlier server, an expired
 * cookie); back to 'connected' on the next call that gets an answer or when the socket opens.
 * `onConnection` subscribes to it (App.vue's banner, NewRunView's "valid"); `retryConnection`
 * reconnects the socket at once and probes with a cheap call.
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

export type ConnectionStatus = 'connected' | 'lost' | 'unauthorized';
export interface ConnectionState {
  status: ConnectionStatus;
  /** What failed, for the banner (null when connected). */
  message: string | null;
}

let connection: ConnectionState = { status: 'connected', message: null };
const connectionListeners = new Set<(s: ConnectionState) => void>();

function setConnection(status: ConnectionStatus, message: string | null): void {
  if (connection.status === status && connection.message === message) return;
  // A lost socket does not overwrite a more specific answer (a refused token).
  if (status === 'lost' && connection.status === 'unauthorized') return;
  connection = { status, message };
  for (const l of [...connectionListeners]) l(connection);
}

/** The connection as last seen. */
export function connectionState(): ConnectionState {
  return connection;
}

/** Calls `listener` on every change of the connection state; returns a disposer. */
export function onConnection(listener: (s: ConnectionState) => void): () => void {
  connectionListeners.add(listener);
  return () => void connectionListeners.delete(listener);
}

let reconnectNow: () => void = () => undefined;

/** Reconnects the push socket now and probes the server; resolves true when it answered. */
export async function retryConnection(): Promise<boolean> {
  reconnectNow();
  try {
    await labClient().listRuns({});
    return true;
  } catch {
    return false;
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
  let timer: ReturnType<typeof setTimeout> | null = null;

  const connect = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (socket || listeners.size === 0) return;
    const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws?token=${encodeURIComponent(token)}`);
    socket = ws;
    ws.onopen = () => setConnection('connected', null);
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
      if (listeners.size) {
        setConnection('lost', 'live updates stopped: the lab server closed the connection');
        timer = setTimeout(connect, (retry = Math.min(retry * 2, 10_000)));
      }
    };
  };
  reconnectNow = () => {
    retry = 500;
    if (!socket) connect();
  };

  const call = async (method: ApiMethod, input: unknown) => {
    let res: Response;
    try {
      res = await fetch(`/api/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(input ?? {}),
      });
    } catch (e) {
      const message = `cannot reach the lab server (${(e as Error).message})`;
      setConnection('lost', message);
      throw new ApiClientError({ code: 'internal', message });
    }
    let body: ApiResult<unknown>;
    try {
      body = (await res.json()) as ApiResult<unknown>;
    } catch {
      // No ApiResult: not the lab answering (a proxy, a server going down).
      if (res.status >= 500) setConnection('lost', `the lab server answered HTTP ${res.status}`);
      throw new ApiClientError({ code: 'internal', message: `${method}: HTTP ${res.status}` });
    }
    if (res.status === 401) setConnection('unauthorized', body.ok ? 'token refused' : body.error.message);
    else setConnection('connected', null);
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
