/**
 * A tiny WebSocket client for the server tests (Node 20 has no global WebSocket): raw handshake
 * over node:net, masked frames out, text frames in. Only what the tests need.
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';

export interface TestSocket {
  /** Status line of the handshake response (`HTTP/1.1 101 Switching Protocols`, or a refusal). */
  status: string;
  messages: unknown[];
  waitFor(pred: (m: unknown) => boolean, what: string, timeoutMs?: number): Promise<unknown>;
  sendRaw(opcode: number, payload: Buffer): void;
  close(): void;
  /** Frames of other opcodes seen (pong = 0xA, close = 0x8). */
  opcodes: number[];
}

export function openSocket(port: number, path: string, host = `127.0.0.1:${port}`): Promise<TestSocket> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    const key = randomBytes(16).toString('base64');
    let buf = Buffer.alloc(0);
    let status = '';
    const messages: unknown[] = [];
    const opcodes: number[] = [];
    const waiters: { pred: (m: unknown) => boolean; resolve: (m: unknown) => void }[] = [];
    const api: TestSocket = {
      get status() {
        return status;
      },
      messages,
      opcodes,
      waitFor(pred, what, timeoutMs = 60_000) {
        const seen = messages.find(pred);
        if (seen) return Promise.resolve(seen);
        return new Promise((ok, fail) => {
          const t = setTimeout(() => fail(new Error(`timed out waiting for ${what}; got ${JSON.stringify(messages).slice(0, 2000)}`)), timeoutMs);
          waiters.push({ pred, resolve: (m) => (clearTimeout(t), ok(m)) });
        });
      },
      sendRaw(opcode, payload) {
        const mask = randomBytes(4);
        const masked = Buffer.from(payload.map((b, i) => b ^ mask[i & 3]));
        sock.write(Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | payload.length]), mask, masked]));
      },
      close() {
        sock.destroy();
      },
    };
    sock.on('connect', () => {
      sock.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    sock.on('error', reject);
    sock.on('close', () => {
      if (!status) reject(new Error('closed before a response'));
      else resolve(api);
    });
    sock.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (!status) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        status = buf.subarray(0, buf.indexOf('\r\n')).toString();
        buf = buf.subarray(end + 4);
        resolve(api);
        if (!status.includes(' 101 ')) return;
      }
      for (;;) {
        if (buf.length < 2) return;
        const opcode = buf[0] & 0x0f;
        let len = buf[1] & 0x7f;
        let off = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          off = 4;
        } else if (len === 127) {
          if (buf.length < 10) return;
          len = Number(buf.readBigUInt64BE(2));
          off = 10;
        }
        if (buf.length < off + len) return;
        const payload = buf.subarray(off, off + len);
        buf = buf.subarray(off + len);
        if (opcode === 1) {
          const m = JSON.parse(payload.toString('utf8'));
          messages.push(m);
          for (const w of [...waiters]) if (w.pred(m)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(m);
          }
        } else opcodes.push(opcode);
      }
    });
  });
}
