/**
 * A minimal WebSocket server side (RFC 6455) on node:http's 'upgrade' event, enough for the lab's
 * pushes: the handshake (Sec-WebSocket-Accept = base64(sha1(key + GUID))), unmasked text frames
 * out, masked frames in (text ignored, ping answered with pong, close echoed), 7/16/64-bit
 * lengths, no extensions and no fragmentation of what we send. Frames over 1 MiB from a client
 * close the socket (a client has nothing big to say).
 *
 * Not here: authentication (server.ts checks the token before calling `acceptWebSocket`).
 * Tested by test/server/server.test.ts (with Node's own WebSocket client, undici).
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const MAX_IN = 1 << 20;

export interface WebSocketConnection {
  sendText(text: string): void;
  close(code?: number, reason?: string): void;
  onClose(listener: () => void): void;
  readonly closed: boolean;
}

function frame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  const head = len < 126 ? Buffer.alloc(2) : len < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  head[0] = 0x80 | opcode; // FIN + opcode
  if (len < 126) head[1] = len;
  else if (len < 65536) {
    head[1] = 126;
    head.writeUInt16BE(len, 2);
  } else {
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(len), 2);
  }
  return Buffer.concat([head, payload]);
}

/** Completes the handshake on `socket` and returns the connection; null (socket ended with 400) if the request is not a valid upgrade. */
export function acceptWebSocket(req: IncomingMessage, socket: Duplex): WebSocketConnection | null {
  const key = req.headers['sec-websocket-key'];
  if (typeof key !== 'string' || req.headers.upgrade?.toLowerCase() !== 'websocket' || req.headers['sec-websocket-version'] !== '13') {
    socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    return null;
  }
  const accept = createHash('sha1').update(key + GUID).digest('base64');
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);

  let closed = false;
  const closeListeners: (() => void)[] = [];
  let buf = Buffer.alloc(0);
  const finish = () => {
    if (closed) return;
    closed = true;
    for (const l of closeListeners) l();
  };
  const conn: WebSocketConnection = {
    get closed() {
      return closed;
    },
    sendText(text) {
      if (!closed && socket.writable) socket.write(frame(0x1, Buffer.from(text, 'utf8')));
    },
    close(code = 1000, reason = '') {
      if (closed) return;
      const payload = Buffer.alloc(2 + Buffer.byteLength(reason));
      payload.writeUInt16BE(code, 0);
      payload.write(reason, 2);
      if (socket.writable) socket.end(frame(0x8, payload));
      finish();
    },
    onClose(listener) {
      closeListeners.push(listener);
    },
  };

  socket.on('data', (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      if (buf.length < 2) return;
      const opcode = buf[0] & 0x0f;
      const masked = (buf[1] & 0x80) !== 0;
      let len = buf[1] & 0x7f;
      let off = 2;
      if (len === 126) {
        if (buf.length < 4) return;
        len = buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (buf.length < 10) return;
        const big = buf.readBigUInt64BE(2);
        if (big > BigInt(MAX_IN)) return conn.close(1009, 'too big');
        len = Number(big);
        off = 10;
      }
      if (len > MAX_IN) return conn.close(1009, 'too big');
      // Client frames must be masked (RFC 6455 5.1).
      if (!masked) return conn.close(1002, 'unmasked client frame');
      if (buf.length < off + 4 + len) return;
      const mask = buf.subarray(off, off + 4);
      const payload = Buffer.from(buf.subarray(off + 4, off + 4 + len));
      for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3];
      buf = buf.subarray(off + 4 + len);
      if (opcode === 0x8) {
        // Echo the close (its code, if any) and end.
        if (!closed && socket.writable) socket.end(frame(0x8, payload.subarray(0, 2)));
        finish();
        return;
      }
      if (opcode === 0x9 && !closed && socket.writable) socket.write(frame(0xa, payload));
      // Text (0x1), binary (0x2), continuation (0x0) and pong (0xA) from the client are ignored.
    }
  });
  socket.on('close', finish);
  socket.on('error', finish);
  return conn;
}
