/**
 * The engine's two transports to its host (src/engine/parentChannel.ts): an Electron utility
 * process's `process.parentPort` and a Node fork's `process.send`, with fake ports; the desktop
 * launcher's handle (src/main/utilityEngine.ts) with a fake UtilityProcess, both ends wired
 * together; and the real engine entry run over a parentPort (a Node fork whose preload dresses the
 * IPC channel up as one), so the utility path of src/engine/main.ts runs end to end here, where
 * there is no Electron.
 */
import { EventEmitter } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { NodeForkLauncher } from '../../src/core/host/launcher';
import { parseHostMessage, type EngineMessage } from '../../src/core/host/messages';
import { launchRun } from '../../src/core/host/runs';
import { parentChannel, type NodeProcessLike, type ParentPortLike } from '../../src/engine/parentChannel';
import { UtilityEngineHandle, type UtilityChildLike } from '../../src/main/utilityEngine';
import { newRun, tempLab, tinyConfig } from './helpers';

/** Electron's ParentPort as seen by the engine: `{ data }` events, postMessage, started by the first listener. */
class FakeParentPort extends EventEmitter implements ParentPortLike {
  posted: unknown[] = [];
  started = false;
  constructor() {
    super();
    this.on('newListener', (name) => name === 'message' && (this.started = true));
    this.on('removeListener', (name) => name === 'message' && this.listenerCount('message') === 0 && (this.started = false));
  }
  postMessage(message: unknown): void {
    this.posted.push(message);
  }
  /** The host posts `data`. */
  deliver(data: unknown): void {
    this.emit('message', { data, ports: [] });
  }
}

class FakeNodeProcess extends EventEmitter {
  connected = true;
  sent: unknown[] = [];
  send = vi.fn((message: unknown, _h: undefined, _o: object, cb: (err: Error | null) => void): boolean => {
    this.sent.push(message);
    setImmediate(() => cb(null));
    return true;
  });
  disconnect = vi.fn(() => {
    this.connected = false;
    this.emit('disconnect');
  });
}

/** Electron's UtilityProcess as seen by the host side. */
class FakeUtilityChild extends EventEmitter implements UtilityChildLike {
  pid: number | undefined = 4242;
  stderr = null;
  stdout = null;
  posted: unknown[] = [];
  killed = 0;
  postMessage(message: unknown): void {
    this.posted.push(message);
  }
  kill(): boolean {
    this.killed++;
    return true;
  }
}

const step = (n: number, loss: number): EngineMessage => ({
  type: 'step',
  step: n,
  final: false,
  totalSteps: 4,
  metrics: { 'loss/total': loss },
  wallMs: 12,
  checkpoint: null,
});

describe('parentChannel (engine side)', () => {
  it('picks parentPort over process.send, process.send alone, or neither', () => {
    const port = new FakeParentPort();
    const both = Object.assign(new FakeNodeProcess(), { parentPort: port });
    expect(parentChannel(both as unknown as NodeProcessLike).transport).toBe('utility');
    expect(parentChannel(new FakeNodeProcess() as unknown as NodeProcessLike).transport).toBe('node-ipc');
    const bare = Object.assign(new EventEmitter(), { parentPort: null }) as unknown as NodeProcessLike;
    const none = parentChannel(bare);
    expect(none.transport).toBe('none');
    expect(none.connected()).toBe(false);
    // The process the tests run in is a vitest fork: an IPC child, no parentPort.
    expect(parentChannel().transport).toBe(process.send ? 'node-ipc' : 'none');
  });

  it('utility: unwraps { data }, posts messages as they are, and lets go of the port on close', async () => {
    const port = new FakeParentPort();
    const ch = parentChannel({ parentPort: port } as unknown as NodeProcessLike);
    expect(port.started).toBe(false);
    const got: unknown[] = [];
    ch.onMessage((raw) => got.push(raw));
    ch.onMessage((raw) => got.push(['second', raw]));
    expect(port.listenerCount('message')).toBe(1); // one port listener, however many callers
    expect(port.started).toBe(true);
    port.deliver({ type: 'pause' });
    expect(got).toEqual([{ type: 'pause' }, ['second', { type: 'pause' }]]);
    expect(parseHostMessage(got[0])).toEqual({ type: 'pause' });

    expect(ch.connected()).toBe(true);
    expect(await ch.send(step(0, NaN))).toBe(true);
    expect(port.posted).toHaveLength(1);
    expect((port.posted[0] as { metrics: Record<string, number> }).metrics['loss/total']).toBeNaN();

    ch.close();
    expect(port.listenerCount('message')).toBe(0);
    expect(port.started).toBe(false); // nothing left keeping the process alive
    expect(ch.connected()).toBe(false);
    expect(await ch.send(step(1, 1))).toBe(false);
    expect(port.posted).toHaveLength(1);
    port.deliver({ type: 'stop' });
    expect(got).toHaveLength(2);
  });

  it('utility: a throwing postMessage is a failed send, not an exception', async () => {
    const port = new FakeParentPort();
    port.postMessage = () => {
      throw new Error('port closed');
    };
    const ch = parentChannel({ parentPort: port } as unknown as NodeProcessLike);
    await expect(ch.send(step(0, 1))).resolves.toBe(false);
  });

  it('node: sends with a flush callback, relays messages and disconnect, disconnects on close', async () => {
    const proc = new FakeNodeProcess();
    const ch = parentChannel(proc as unknown as NodeProcessLike);
    const got: unknown[] = [];
    ch.onMessage((raw) => got.push(raw));
    const lost = vi.fn();
    ch.onDisconnect(lost);
    proc.emit('message', { type: 'resume' });
    expect(got).toEqual([{ type: 'resume' }]);
    expect(await ch.send({ type: 'log', level: 'info', line: 'hi' })).toBe(true);
    expect(proc.send).toHaveBeenCalledTimes(1);
    ch.close();
    expect(proc.disconnect).toHaveBeenCalledTimes(1);
    expect(lost).toHaveBeenCalledTimes(1);
    expect(proc.listenerCount('message')).toBe(0);
    expect(await ch.send({ type: 'log', level: 'info', line: 'late' })).toBe(false);
    expect(proc.send).toHaveBeenCalledTimes(1);
  });
});

describe('UtilityEngineHandle (desktop host side)', () => {
  it('validates engine messages with the protocol schema', () => {
    const child = new FakeUtilityChild();
    const handle = new UtilityEngineHandle(child);
    const got: EngineMessage[] = [];
    handle.onMessage((m) => got.push(m));
    child.emit('message', step(3, Infinity));
    child.emit('message', { type: 'step', step: 'three' });
    child.emit('message', 'not an object');
    expect(got[0]).toEqual(step(3, Infinity));
    expect(got[1]).toMatchObject({ type: 'log', level: 'error' });
    expect(got[1].type === 'log' && got[1].line).toMatch(/^invalid engine message .*step/);
    expect(got[2]).toMatchObject({ type: 'log', level: 'error' });
    expect(handle.pid).toBe(4242);
  });

  it('sends until exit, reports the exit once (and to late listeners), kills by SIGTERM or by pid', () => {
    const child = new FakeUtilityChild();
    const signals: [number, string][] = [];
    const handle = new UtilityEngineHandle(child, (pid, sig) => signals.push([pid, sig]));
    handle.send({ type: 'pause' });
    expect(child.posted).toEqual([{ type: 'pause' }]);
    handle.kill();
    expect(child.killed).toBe(1);
    handle.kill('SIGKILL');
    expect(signals).toEqual([[4242, 'SIGKILL']]);

    const exits: unknown[] = [];
    handle.onExit((code, signal) => exits.push([code, signal]));
    child.pid = undefined; // Electron's pid reads undefined after exit
    child.emit('exit', 3);
    child.emit('exit', 3);
    expect(exits).toEqual([[3, null]]);
    expect(handle.pid).toBe(4242);
    const late = vi.fn();
    handle.onExit(late);
    expect(late).toHaveBeenCalledWith(3, null);
    handle.send({ type: 'stop' });
    handle.kill();
    expect(child.posted).toHaveLength(1);
    expect(child.killed).toBe(1);
  });

  it('talks to the engine side end to end (host message in, engine message out)', async () => {
    const port = new FakeParentPort();
    const child = new FakeUtilityChild();
    // Electron in between: the engine's postMessage arrives as the child's 'message', the host's postMessage as { data }.
    port.postMessage = (m) => child.emit('message', structuredClone(m));
    child.postMessage = (m) => port.deliver(structuredClone(m));
    const ch = parentChannel({ parentPort: port } as unknown as NodeProcessLike);
    const handle = new UtilityEngineHandle(child);
    const atEngine: unknown[] = [];
    ch.onMessage((raw) => atEngine.push(parseHostMessage(raw)));
    const atHost: EngineMessage[] = [];
    handle.onMessage((m) => atHost.push(m));
    handle.send({ type: 'stop' });
    await ch.send(step(1, NaN));
    await ch.send({ type: 'status', status: 'stopped' });
    expect(atEngine).toEqual([{ type: 'stop' }]);
    expect(atHost).toEqual([step(1, NaN), { type: 'status', status: 'stopped' }]);
  });
});

/**
 * A preload for the Node fork: gives the process a `parentPort` (which parentChannel prefers over
 * process.send) that behaves like Electron's: `{ data }` events; messages queued until the first
 * 'message' listener starts the port; the IPC channel holds the process only while the port is
 * started, so after the engine's close() it must exit on its own (or by its fallback timer).
 */
const FAKE_PARENT_PORT = `
// NODE_OPTIONS preloads also run in the loader hooks' worker thread, which has no IPC channel.
if (require('node:worker_threads').isMainThread && typeof process.send === 'function') {
const { EventEmitter } = require('node:events');
const send = process.send.bind(process);
const port = new EventEmitter();
const queue = [];
let started = false;
const deliver = (data) => port.emit('message', { data, ports: [] });
process.on('message', (data) => (started ? deliver(data) : queue.push(data)));
process.channel.unref();
port.postMessage = (m) => send(m);
port.on('newListener', (n) => {
  if (n !== 'message' || started) return;
  started = true;
  process.channel.ref();
  setImmediate(() => queue.splice(0).forEach(deliver));
});
port.on('removeListener', (n) => {
  if (n !== 'message' || port.listenerCount('message') > 0) return;
  started = false;
  process.channel.unref();
});
Object.defineProperty(process, 'parentPort', { value: port, enumerable: true });
}
`;

describe('engine entry over a parentPort', () => {
  it('runs a run to completion, takes host messages, and exits by itself', async () => {
    const preload = join(mkdtempSync(join(tmpdir(), 'srpo-port-')), 'fake-parent-port.cjs');
    writeFileSync(preload, FAKE_PARENT_PORT);
    const { dbPath, store } = tempLab();
    const runId = newRun(store, tinyConfig({ steps: 2 }));
    const messages: EngineMessage[] = [];
    const launcher = new NodeForkLauncher({ stdio: 'pipe', env: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${preload}`.trim() } });
    const active = launchRun(runId, 'start', { store, dbPath, launcher, onMessage: (m) => messages.push(m) });
    // A host message through the port: an invalid one comes back as a log error from the engine.
    (active.engine as unknown as { send(m: unknown): void }).send({ type: 'bogus' });
    // Exits once it lets go of the port (or, were something else holding it, by main.ts's fallback timer).
    const outcome = await active.done;
    const stderr = (active.engine as unknown as { stderrTail(): string }).stderrTail();
    expect(outcome.status, stderr).toBe('completed');
    expect(outcome.exitCode).toBe(0);
    expect(messages[0], stderr).toEqual({ type: 'status', status: 'running' });
    expect(messages.some((m) => m.type === 'ready')).toBe(true);
    expect(messages.filter((m) => m.type === 'step').map((m) => m.type === 'step' && m.step)).toEqual([0, 1, 2]);
    expect(messages.at(-1)).toEqual({ type: 'status', status: 'completed' });
    expect(messages.some((m) => m.type === 'log' && m.level === 'error' && /invalid host message/.test(m.line))).toBe(true);
    store.close();
  }, 120_000);
});
