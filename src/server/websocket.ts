/**
 * The push sockets of web mode on the `ws` library (noServer mode: server.ts owns the HTTP
 * server and calls `accept` from its 'upgrade' handler after its own Host, Origin and token
 * checks). `ws` does the RFC 6455 framing, the handshake (a request that is not a valid upgrade
 * gets 400), ping/pong and the close handshake; frames over 1 MiB from a client close the socket
 * (1009: a client has nothing big to say). No permessage-deflate: pushes are small and local.
 *
 * Backpressure: a client that reads slower than the lab pushes (a throttled background tab, a
 * stalled network) must not grow the server's memory. Once more than `highWaterBytes` are
 * queued for a socket (`bufferedAmount`), pushes that only add detail are dropped (live points,
 * progress, log lines: the page refetches series when it next needs them), pushes whose loss
 * would leave the page wrong (status, the run list changed) are still sent, and above four times
 * the threshold the socket is closed (1013, try again later): the page reconnects.
 *
 * Not here: authentication (server.ts checks before calling `accept`), what is pushed (LabService).
 * Tested by test/server/server.test.ts, origin.test.ts and backpressure.test.ts (with `ws`'s client).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { LabPush } from '../shared/api';

/** Largest frame a client may send, in bytes. */
export const MAX_CLIENT_FRAME = 1 << 20;
/** Bytes queued for one socket above which detail pushes are dropped (default of `highWaterBytes`). */
export const PUSH_HIGH_WATER = 1 << 20;
/** Multiple of the threshold at which a socket that still does not read is closed. */
const CLOSE_FACTOR = 4;
/** How long `closeAll` waits for clients to answer the close handshake before cutting them off. */
const CLOSE_GRACE_MS = 500;

/** What a congested socket does with each kind of push. */
const WHEN_CONGESTED = {
  hello: 'send',
  progress: 'drop',
  points: 'drop',
  status: 'send',
  runs: 'send',
  log: 'drop',
  indexProgress: 'drop',
} as const satisfies Record<LabPush['type'], 'send' | 'drop'>;

export interface PushSocket {
  /** Sends one push as a JSON text frame, unless the socket is congested and the push is droppable. */
  push(push: LabPush): void;
  /** Pushes dropped so far because the client read too slowly. */
  readonly dropped: number;
  /** Bytes queued for the client and not yet handed to the network. */
  readonly bufferedAmount: number;
  onClose(listener: () => void): void;
}

export interface PushSockets {
  /** Completes the upgrade (after the caller's checks) and hands over the socket; invalid upgrades get 400 from `ws`. */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, onOpen: (socket: PushSocket) => void): void;
  /** Closes every open socket (1001), cutting off those that do not answer within CLOSE_GRACE_MS. */
  closeAll(): Promise<void>;
}

export function createPushSockets(options: { highWaterBytes?: number } = {}): PushSockets {
  const highWater = options.highWaterBytes ?? PUSH_HIGH_WATER;
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_FRAME, perMessageDeflate: false, clientTracking: false });
  const open = new Set<WebSocket>();

  const wrap = (ws: WebSocket): PushSocket => {
    let dropped = 0;
    return {
      get dropped() {
        return dropped;
      },
      get bufferedAmount() {
        return ws.bufferedAmount;
      },
      push(push) {
        if (ws.readyState !== WebSocket.OPEN) return;
        const queued = ws.bufferedAmount;
        if (queued > CLOSE_FACTOR * highWater) return ws.close(1013, 'client too slow: reconnect');
        if (queued > highWater && WHEN_CONGESTED[push.type] === 'drop') {
          dropped++;
          return;
        }
        ws.send(JSON.stringify(push));
      },
      onClose(listener) {
        ws.once('close', listener);
      },
    };
  };

  return {
    accept(req, socket, head, onOpen) {
      wss.handleUpgrade(req, socket, head, (ws) => {
        open.add(ws);
        ws.on('error', () => ws.terminate()); // a bad frame: `ws` has already sent the close code
        ws.once('close', () => open.delete(ws));
        onOpen(wrap(ws));
      });
    },
    async closeAll() {
      const closing = [...open].map(
        (ws) =>
          new Promise<void>((done) => {
            if (ws.readyState === WebSocket.CLOSED) return done();
            const cut = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS);
            ws.once('close', () => (clearTimeout(cut), done()));
            ws.close(1001, 'server closing');
          }),
      );
      await Promise.all(closing);
    },
  };
}
