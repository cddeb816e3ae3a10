/**
 * A push socket whose client stops reading (a throttled tab, a stalled network) must not grow
 * the server's memory without bound: above the threshold detail pushes (points, progress, log)
 * are dropped, status and run-list pushes still go, and a client that stays congested far past
 * the threshold is closed with 1013 so the page reconnects. Through server.ts too: the same
 * policy behind the token checks, with a stub LabHost that pushes on demand.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { LabHost } from '../../src/core/host/labHost';
import type { LabPush } from '../../src/shared/api';
import { startLabServer, type LabServer } from '../../src/server/server';
import { createPushSockets, type PushSocket, type PushSockets } from '../../src/server/websocket';
import { openSocket, type TestSocket } from './wsClient';

const HIGH_WATER = 64 * 1024;
/** A points push of about 27 KB of JSON. */
const bigPoints = (step: number): LabPush => ({
  type: 'points',
  runId: 1,
  step,
  points: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`metric/with/a/long/name/${i}`, { step, value: i / 7, wallTime: 1_700_000_000_000 + i }])),
});
const status = (runId: number): LabPush => ({ type: 'status', runId, status: 'completed', error: null });
const byteLength = (p: LabPush): number => Buffer.byteLength(JSON.stringify(p));

describe('push sockets: backpressure from a client that stops reading', () => {
  let http: Server;
  let sockets: PushSockets;
  let client: TestSocket | null = null;

  /** A bare HTTP server whose every upgrade becomes a push socket (no checks: this is the transport alone). */
  async function serve(): Promise<{ port: number; opened: Promise<PushSocket> }> {
    sockets = createPushSockets({ highWaterBytes: HIGH_WATER });
    let open!: (s: PushSocket) => void;
    const opened = new Promise<PushSocket>((r) => (open = r));
    http = createServer();
    http.on('upgrade', (req, socket, head) => sockets.accept(req, socket, head, open));
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
    return { port: (http.address() as AddressInfo).port, opened };
  }

  afterEach(async () => {
    client?.close();
    client = null;
    await sockets.closeAll();
    http.closeAllConnections();
    await new Promise<void>((r) => http.close(() => r()));
  });

  it('drops detail pushes above the threshold, so the queue stays within threshold + one push; status still arrives', async () => {
    const { port, opened } = await serve();
    client = await openSocket(port, '/');
    const conn = await opened;
    client.ws.pause(); // the client reads nothing more
    await new Promise((r) => setTimeout(r, 50));

    const sent = 2000; // ~54 MB of pushes: unbounded, the queue would hold most of it
    let worst = 0;
    for (let step = 0; step < sent; step++) {
      conn.push(bigPoints(step));
      worst = Math.max(worst, conn.bufferedAmount);
    }
    conn.push(status(7));
    console.log(`backpressure: ${sent} pushes of ${byteLength(bigPoints(0))} B, ${conn.dropped} dropped, worst queue ${worst} B (threshold ${HIGH_WATER} B)`);
    expect(conn.dropped).toBeGreaterThan(sent / 2);
    expect(worst).toBeLessThanOrEqual(HIGH_WATER + byteLength(bigPoints(sent)) + byteLength(status(7)));

    client.ws.resume();
    await client.waitFor((m) => (m as LabPush).type === 'status', 'the status push sent while congested', 10_000);
    const points = client.messages.filter((m) => (m as LabPush).type === 'points');
    expect(points.length).toBe(sent - conn.dropped);
    const steps = points.map((m) => (m as { step: number }).step);
    expect(steps).toEqual([...steps].sort((a, b) => a - b)); // what arrives arrives in order
  });

  it('closes a client that stays congested far past the threshold (1013), even with must-send pushes', async () => {
    const { port, opened } = await serve();
    client = await openSocket(port, '/');
    const conn = await opened;
    client.ws.pause();
    await new Promise((r) => setTimeout(r, 50));
    const fat = { type: 'status', runId: 1, status: 'failed', error: 'x'.repeat(16 * 1024) } satisfies LabPush;
    let worst = 0;
    for (let i = 0; i < 2000; i++) {
      conn.push(fat);
      worst = Math.max(worst, conn.bufferedAmount);
    }
    expect(worst).toBeLessThanOrEqual(4 * HIGH_WATER + 2 * byteLength(fat)); // + the close frame
    client.ws.resume();
    await new Promise<void>((r) => (client!.closeCode !== null ? r() : client!.ws.once('close', () => r())));
    expect(client.closeCode).toBe(1013);
  });
});

describe('server.ts relays pushes through the same policy', () => {
  let server: LabServer;
  afterEach(async () => server.close());

  it('a paused page loses points but not the status push, and still gets hello first', async () => {
    const listeners = new Set<(p: LabPush) => void>();
    const host: LabHost = {
      call: async () => {
        throw new Error('no API in this test');
      },
      subscribe: (l) => (listeners.add(l), () => listeners.delete(l)),
      close: async () => undefined,
    };
    server = await startLabServer({ service: host, pushHighWaterBytes: HIGH_WATER });
    const ws = await openSocket(server.port, `/ws?token=${server.token}`);
    expect(ws.status).toMatch(/ 101 /);
    await ws.waitFor((m) => (m as LabPush).type === 'hello', 'hello', 5000);
    ws.ws.pause();
    await new Promise((r) => setTimeout(r, 50));
    const sent = 2000;
    for (let step = 0; step < sent; step++) for (const l of listeners) l(bigPoints(step));
    for (const l of listeners) l(status(3));
    ws.ws.resume();
    await ws.waitFor((m) => (m as LabPush).type === 'status', 'status after congestion', 10_000);
    const points = ws.messages.filter((m) => (m as LabPush).type === 'points').length;
    expect(points).toBeGreaterThan(0);
    expect(points).toBeLessThan(sent / 2);
    expect(ws.messages[0]).toEqual({ type: 'hello' });
    ws.close();
    await new Promise((r) => setTimeout(r, 50));
    expect(listeners.size).toBe(0); // the closed socket unsubscribed
  });
});
