/**
 * A run lease's heartbeat written from a worker thread with its own SQLite connection, so that it
 * keeps beating while the engine's thread is inside a long synchronous step (a tfjs forward and
 * backward pass, a checkpoint write, an index build). A timer on the engine's own event loop does
 * not run during a step, and a step longer than the lease timeout let another host take the run
 * over from a live engine. better-sqlite3 connections work in worker threads (one per thread).
 *
 * The worker updates `heartbeat_at` every `everyMs`, only where the row still names this holder's
 * token (the same UPDATE as leases.ts heartbeatLease), so it can never refresh someone else's
 * lease. When the update finds no row (the lease was taken over or deleted) it sets the shared
 * LOST flag, tells the owner, and stops: the engine's thread reads the flag at its next mini-batch
 * (LeaseKeeper.beat, no SQL) and stops writing the run. A busy database delays one beat, not the
 * next. `stop()` ends it (the flag, then a message; the worker closes its connection and exits);
 * the worker never keeps the process alive.
 *
 * The worker is plain CommonJS evaluated from a string (no file to ship beside the electron-vite
 * bundles, as corpusReader.ts does); it requires better-sqlite3 by the absolute path this module
 * resolves, so it loads the same native build as the engine's own connection.
 *
 * Not here: when and what leases are (leases.ts). Node only (worker_threads).
 * Tested by test/core/store/leaseHeartbeat.test.ts (the engine's thread blocked past the lease
 * timeout while another connection watches the heartbeat and another host tries a takeover).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** The heartbeat refresh; the holder's token in the WHERE clause keeps it to one's own lease. */
export const HEARTBEAT_SQL = 'UPDATE run_leases SET heartbeat_at = ? WHERE run_id = ? AND holder = ?';

/** Slots of the shared Int32Array. */
const LOST = 0;
const BEATS = 1;
const STOP = 2;

const WORKER = `
const { workerData, parentPort } = require('node:worker_threads');
const { sqlite, dbPath, runId, token, everyMs, busyMs, sql, state } = workerData;
const Database = require(sqlite);
const db = new Database(dbPath, { fileMustExist: true, timeout: busyMs });
const beat = db.prepare(sql);
let done = false;
let timer = null;
function finish() {
  if (done) return;
  done = true;
  if (timer) clearInterval(timer);
  db.close();
  parentPort.close();
}
function tick() {
  if (done) return;
  if (Atomics.load(state, ${STOP}) === 1) return finish();
  let changes;
  try {
    changes = beat.run(Date.now(), runId, token).changes;
  } catch (err) {
    return; // busy or locked: the next tick tries again
  }
  if (changes === 0) {
    Atomics.store(state, ${LOST}, 1);
    parentPort.postMessage('lost');
    return finish();
  }
  Atomics.add(state, ${BEATS}, 1);
}
parentPort.on('message', (m) => { if (m === 'stop') finish(); });
timer = setInterval(tick, everyMs);
tick();
`;

export interface HeartbeatThreadOptions {
  /** The database file (a worker opens its own connection; an in-memory database cannot be shared). */
  dbPath: string;
  runId: number;
  /** The holder's token: only a lease row naming it is refreshed. */
  token: string;
  /** Milliseconds between beats. */
  everyMs: number;
  /** Called once, on this thread's event loop, when a beat finds the lease gone. */
  onLost?: () => void;
  /** Called if the worker fails (cannot open the database, cannot load better-sqlite3). */
  onError?: (err: Error) => void;
}

/** One lease's heartbeat in a worker thread; see the header. */
export class HeartbeatThread {
  private readonly state = new Int32Array(new SharedArrayBuffer(12));
  private readonly worker: Worker;
  private stopped = false;

  constructor(options: HeartbeatThreadOptions) {
    const sqlite = createRequire(__filename).resolve('better-sqlite3');
    const workerData = {
      sqlite,
      dbPath: options.dbPath,
      runId: options.runId,
      token: options.token,
      everyMs: options.everyMs,
      // A beat waits for the writer at most half its period, so beats never pile up.
      busyMs: Math.max(10, Math.floor(options.everyMs / 2)),
      sql: HEARTBEAT_SQL,
      state: this.state,
    };
    this.worker = new Worker(WORKER, { eval: true, workerData });
    this.worker.unref();
    this.worker.on('message', (m) => {
      if (m === 'lost' && !this.stopped) options.onLost?.();
    });
    this.worker.on('error', (err) => {
      if (!this.stopped) options.onError?.(err);
    });
  }

  /** True once a beat found the lease no longer this holder's (readable while this thread is busy). */
  get lost(): boolean {
    return Atomics.load(this.state, LOST) === 1;
  }

  /** Beats written so far. */
  get beats(): number {
    return Atomics.load(this.state, BEATS);
  }

  /** No beat starts after this returns (one in flight may finish); the worker closes its connection and exits. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    Atomics.store(this.state, STOP, 1);
    this.worker.postMessage('stop');
  }
}
