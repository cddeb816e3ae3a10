/**
 * The server tests' WebSocket client: `ws`'s client (the same library as the server, so no
 * second frame codec to trust), wrapped for tests: the handshake's status line, the JSON pushes
 * received, waiting for one, ping. Like a browser it sends an Origin header: by default the
 * server's own page (`http://127.0.0.1:PORT`); `origin` names another one, or null sends none;
 * `host` overrides the Host header; `headers` adds more (a cookie).
 */
import WebSocket from 'ws';

export interface TestSocket {
  /** Status line of the handshake response (`HTTP/1.1 101 Switching Protocols`, or a refusal). */
  status: string;
  messages: unknown[];
  waitFor(pred: (m: unknown) => boolean, what: string, timeoutMs?: number): Promise<unknown>;
  /** Sends a ping; `pongs` counts the answers. */
  ping(data?: Buffer): void;
  readonly pongs: number;
  /** The close code the server sent, once closed (1006 when the connection just dropped). */
  readonly closeCode: number | null;
  /** The underlying client, for tests that need more (pausing reads). */
  readonly ws: WebSocket;
  close(): void;
}

export function openSocket(
  port: number,
  path: string,
  host = `127.0.0.1:${port}`,
  origin: string | null = `http://127.0.0.1:${port}`,
  headers: Record<string, string> = {},
): Promise<TestSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, {
      headers: { host, ...headers },
      ...(origin === null ? {} : { origin }),
      perMessageDeflate: false,
    });
    let status = '';
    let pongs = 0;
    let closeCode: number | null = null;
    const messages: unknown[] = [];
    const waiters: { pred: (m: unknown) => boolean; resolve: (m: unknown) => void }[] = [];
    const api: TestSocket = {
      get status() {
        return status;
      },
      messages,
      get pongs() {
        return pongs;
      },
      get closeCode() {
        return closeCode;
      },
      ws,
      waitFor(pred, what, timeoutMs = 60_000) {
        const seen = messages.find(pred);
        if (seen) return Promise.resolve(seen);
        return new Promise((ok, fail) => {
          const t = setTimeout(() => fail(new Error(`timed out waiting for ${what}; got ${JSON.stringify(messages).slice(0, 2000)}`)), timeoutMs);
          waiters.push({ pred, resolve: (m) => (clearTimeout(t), ok(m)) });
        });
      },
      ping(data = Buffer.alloc(0)) {
        ws.ping(data);
      },
      close() {
        ws.terminate();
      },
    };
    ws.on('upgrade', (res) => {
      status = `HTTP/${res.httpVersion} ${res.statusCode} ${res.statusMessage}`;
      resolve(api);
    });
    ws.on('unexpected-response', (req, res) => {
      status = `HTTP/${res.httpVersion} ${res.statusCode} ${res.statusMessage}`;
      res.resume();
      req.destroy();
      resolve(api);
    });
    ws.on('error', (err) => {
      if (!status) reject(err);
    });
    ws.on('pong', () => pongs++);
    ws.on('close', (code) => (closeCode = code));
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const m: unknown = JSON.parse(data.toString());
      messages.push(m);
      for (const w of [...waiters]) {
        if (w.pred(m)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    });
  });
}
