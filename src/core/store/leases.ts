/**
 * Run leases: at most one process may write a run at a time, and everyone can see which. A lease
 * is a row of run_leases (migration 004) naming its holder (pid, host name, a random token per
 * holder), what it is held for, when it was acquired and its last heartbeat:
 * - `queued`: a lab host (LabService) holds the run while it waits for an engine slot;
 * - `starting`: a host reserved the run and is launching its engine;
 * - `engine`: the engine process trains it (it took the `starting` lease over from its parent).
 * `resume`, `resume --force`, `deleteRun`, a second host and the UI all go through
 * `acquireLease` / `liveLease` and are refused with a LeaseHeldError naming the holder while the
 * lease is alive. A lease is dead, and taken over by the next acquirer, when
 *   - its heartbeat is older than the timeout (any host), or
 *   - it was taken on this host and its pid no longer exists (checked with signal 0).
 *
 * The heartbeat: Trainer.step is synchronous, so an engine's timers do not run during a step. A
 * LeaseKeeper therefore beats from a worker thread with its own connection (leaseHeartbeat.ts),
 * every HEARTBEAT_EVERY_MS whatever the engine's thread is doing, and also from inside the step
 * (at every mini-batch, the hook that polls the STOP flag, and between steps), where it learns at
 * once that a beat was refused. Where no worker can run (an in-memory database) the timer on the
 * event loop and the in-step beats remain. Why a timeout of 10 minutes all the same
 * (SRPO_LAB_LEASE_TIMEOUT_S overrides it): a machine can stall every thread of a process (swap, a
 * suspended laptop); on this host a dead engine is seen at once through its pid, and the timeout
 * only matters for a holder on another host (whose pid cannot be checked) and for a pid reused by
 * an unrelated process. A holder that finds its heartbeat refused (its lease was taken over) must
 * stop writing.
 *
 * Not here: when leases are taken (host/runs.ts, host/labService.ts, engine/runEngine.ts).
 * This file touches Node (os, process). Tests: test/core/store/leases.test.ts, and the
 * reproductions in test/engine/leases.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { LabDb } from './db';
import { HEARTBEAT_SQL, HeartbeatThread } from './leaseHeartbeat';

export type LeaseKind = 'queued' | 'starting' | 'engine';

/** Who holds (or wants) a lease. `token` tells apart two holders in one process. */
export interface LeaseHolder {
  token: string;
  pid: number;
  host: string;
}

export interface RunLease {
  runId: number;
  kind: LeaseKind;
  /** The holder's token. */
  holder: string;
  pid: number;
  host: string;
  acquiredAt: number;
  heartbeatAt: number;
}

/** How liveness is judged: the clock, this host's name, a pid probe, the heartbeat timeout. */
export interface LeaseEnv {
  now(): number;
  host: string;
  pidAlive(pid: number): boolean;
  timeoutMs: number;
}

export const DEFAULT_LEASE_TIMEOUT_MS = 10 * 60_000;
/** How often a holder's heartbeat thread (or, without one, its timer) refreshes the heartbeat. */
export const HEARTBEAT_EVERY_MS = 5_000;

/** A new holder identity for this process (a fresh token each call). */
export function leaseHolder(): LeaseHolder {
  return { token: randomUUID(), pid: process.pid, host: hostname() };
}

/** True while a process with this pid exists on this host (EPERM: it exists, owned by someone else). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The heartbeat timeout: SRPO_LAB_LEASE_TIMEOUT_S (seconds, > 0) or 10 minutes. */
export function leaseTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.SRPO_LAB_LEASE_TIMEOUT_S?.trim();
  if (!v) return DEFAULT_LEASE_TIMEOUT_MS;
  const s = Number(v);
  if (!Number.isFinite(s) || s <= 0) throw new Error(`SRPO_LAB_LEASE_TIMEOUT_S="${v}" is not a positive number of seconds`);
  return s * 1000;
}

/** Liveness as judged from this process. */
export function defaultLeaseEnv(): LeaseEnv {
  return { now: Date.now, host: hostname(), pidAlive, timeoutMs: leaseTimeoutMs() };
}

/** Thrown when a live lease of another holder stands in the way; the message names the holder. */
export class LeaseHeldError extends Error {
  constructor(
    readonly lease: RunLease,
    now: number,
  ) {
    super(`run ${lease.runId} is ${describeLease(lease, now)}`);
    this.name = 'LeaseHeldError';
  }
}

const HELD_FOR = {
  queued: 'queued by lab host',
  starting: 'being started by lab host',
  engine: 'being trained by engine',
} satisfies Record<LeaseKind, string>;

/** "being trained by engine pid 4242 on host lab1 (since 2026-…Z, last heartbeat 3 s ago)". */
export function describeLease(lease: RunLease, now: number): string {
  const ago = Math.max(0, Math.round((now - lease.heartbeatAt) / 1000));
  return `${HELD_FOR[lease.kind]} pid ${lease.pid} on host ${lease.host} (since ${new Date(lease.acquiredAt).toISOString()}, last heartbeat ${ago} s ago)`;
}

/** Whether a lease still binds, and if not, why (for the takeover message). */
export function leaseLiveness(lease: RunLease, env: LeaseEnv): { alive: true } | { alive: false; why: string } {
  const silent = env.now() - lease.heartbeatAt;
  if (silent > env.timeoutMs) return { alive: false, why: `no heartbeat for ${Math.round(silent / 1000)} s (timeout ${Math.round(env.timeoutMs / 1000)} s)` };
  if (lease.host === env.host && !env.pidAlive(lease.pid)) return { alive: false, why: `process ${lease.pid} no longer exists on this host` };
  return { alive: true };
}

interface LeaseRow {
  run_id: number;
  kind: LeaseKind;
  holder: string;
  pid: number;
  host: string;
  acquired_at: number;
  heartbeat_at: number;
}

const toLease = (r: LeaseRow): RunLease => ({
  runId: r.run_id,
  kind: r.kind,
  holder: r.holder,
  pid: r.pid,
  host: r.host,
  acquiredAt: r.acquired_at,
  heartbeatAt: r.heartbeat_at,
});

const SELECT = 'SELECT * FROM run_leases WHERE run_id = ?';
const SELECT_ALL = 'SELECT * FROM run_leases ORDER BY acquired_at, run_id';
const UPSERT = `INSERT INTO run_leases (run_id, kind, holder, pid, host, acquired_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (run_id) DO UPDATE SET kind = excluded.kind, holder = excluded.holder, pid = excluded.pid, host = excluded.host,
    acquired_at = excluded.acquired_at, heartbeat_at = excluded.heartbeat_at`;
const BEAT = HEARTBEAT_SQL;
const RELEASE = 'DELETE FROM run_leases WHERE run_id = ? AND holder = ?';
const RELEASE_PID = 'DELETE FROM run_leases WHERE run_id = ? AND pid = ? AND host = ?';

/** The run's lease row, alive or not. */
export function getLease(db: LabDb, runId: number): RunLease | null {
  const row = db.stmt<[number], LeaseRow>(SELECT).get(runId);
  return row ? toLease(row) : null;
}

/** The run's lease if it is alive, else null. */
export function liveLease(db: LabDb, runId: number, env: LeaseEnv = defaultLeaseEnv()): RunLease | null {
  const lease = getLease(db, runId);
  return lease && leaseLiveness(lease, env).alive ? lease : null;
}

/** Every live lease of the database, oldest first. */
export function liveLeases(db: LabDb, env: LeaseEnv = defaultLeaseEnv()): RunLease[] {
  return db
    .stmt<[], LeaseRow>(SELECT_ALL)
    .all()
    .map(toLease)
    .filter((l) => leaseLiveness(l, env).alive);
}

export interface AcquireOptions {
  env?: LeaseEnv;
  /**
   * The engine's case: a live `starting` lease held by this pid on this host (the engine's parent,
   * which reserved the run for it) is taken over, not refused.
   */
  fromParent?: number;
}

export interface Acquired {
  lease: RunLease;
  /** The dead lease that was taken over, and why it was dead; null when there was none (or it was ours). */
  tookOver: { lease: RunLease; why: string } | null;
}

/**
 * Takes the run's lease for `holder` as `kind` (one IMMEDIATE transaction: two acquirers cannot
 * both win). Succeeds when there is no lease, when it is the holder's own (the kind is updated),
 * when it is dead (taken over), or when `fromParent` matches a `starting` lease. Throws
 * LeaseHeldError otherwise.
 */
export function acquireLease(db: LabDb, runId: number, holder: LeaseHolder, kind: LeaseKind, options: AcquireOptions = {}): Acquired {
  const env = options.env ?? defaultLeaseEnv();
  return db.raw
    .transaction((): Acquired => {
      const now = env.now();
      const current = getLease(db, runId);
      let tookOver: Acquired['tookOver'] = null;
      if (current && current.holder !== holder.token) {
        const live = leaseLiveness(current, env);
        const handedOver =
          options.fromParent !== undefined && current.kind === 'starting' && current.pid === options.fromParent && current.host === holder.host;
        if (live.alive && !handedOver) throw new LeaseHeldError(current, now);
        if (!live.alive) tookOver = { lease: current, why: live.why };
      }
      const acquiredAt = current && current.holder === holder.token ? current.acquiredAt : now;
      db.stmt(UPSERT).run(runId, kind, holder.token, holder.pid, holder.host, acquiredAt, now);
      return { lease: getLease(db, runId)!, tookOver };
    })
    .immediate();
}

/** Refreshes the holder's heartbeat; false when the lease is no longer the holder's (taken over or deleted). */
export function heartbeatLease(db: LabDb, runId: number, holder: LeaseHolder, now = Date.now()): boolean {
  return db.stmt(BEAT).run(now, runId, holder.token).changes > 0;
}

/** Releases the holder's lease (a lease of someone else is left alone); returns whether one went. */
export function releaseLease(db: LabDb, runId: number, holder: LeaseHolder): boolean {
  return db.stmt(RELEASE).run(runId, holder.token).changes > 0;
}

/** Releases a lease held by the process `pid` of `host` (a host cleaning up after its engine exited). */
export function releaseLeaseOfPid(db: LabDb, runId: number, pid: number, host: string): boolean {
  return db.stmt(RELEASE_PID).run(runId, pid, host).changes > 0;
}

/** Throws LeaseHeldError when the run has a live lease not held by `holder` (if given). */
export function assertNoLiveLease(db: LabDb, runId: number, holder?: LeaseHolder, env: LeaseEnv = defaultLeaseEnv()): void {
  const lease = liveLease(db, runId, env);
  if (lease && lease.holder !== holder?.token) throw new LeaseHeldError(lease, env.now());
}

/**
 * Keeps one lease's heartbeat fresh: a worker thread beats every `everyMs` whatever this thread
 * does (leaseHeartbeat.ts; a timer on this event loop where no worker can run), and `beat()` from
 * inside long synchronous work refreshes it too (throttled to once a second) and reads the
 * thread's verdict. `lost` turns true once a refresh is refused; the holder must then stop
 * writing the run.
 */
export class LeaseKeeper {
  private timer: NodeJS.Timeout | null = null;
  private thread: HeartbeatThread | null = null;
  private last = 0;
  lost = false;

  constructor(
    private readonly db: LabDb,
    readonly runId: number,
    readonly holder: LeaseHolder,
    /** Called once, when a refresh is first refused. */
    private readonly onLost: () => void = () => {},
    private readonly now: () => number = Date.now,
  ) {}

  private markLost(): void {
    if (this.lost) return;
    this.lost = true;
    this.onLost();
  }

  /** Refreshes the heartbeat unless done in the last second; returns false once the lease is lost. */
  beat(): boolean {
    if (this.lost) return false;
    if (this.thread?.lost) {
      this.markLost();
      return false;
    }
    const t = this.now();
    if (t - this.last < 1000) return true;
    this.last = t;
    try {
      if (!heartbeatLease(this.db, this.runId, this.holder, t)) this.markLost();
    } catch {
      // A busy database delays a heartbeat; the next one (or the long timeout) covers it.
    }
    return !this.lost;
  }

  /** Beats written by the heartbeat thread so far (0 without one). */
  get threadBeats(): number {
    return this.thread?.beats ?? 0;
  }

  /** Starts the heartbeat thread (or, for an in-memory database or if it fails, a timer on this event loop). */
  start(everyMs = HEARTBEAT_EVERY_MS): this {
    if (this.thread || this.timer) return this;
    const file = this.db.path;
    if (file && file !== ':memory:' && !this.db.raw.memory) {
      try {
        this.thread = new HeartbeatThread({
          dbPath: file,
          runId: this.runId,
          token: this.holder.token,
          everyMs,
          onLost: () => this.markLost(),
          onError: () => this.startTimer(everyMs),
        });
        return this;
      } catch {
        // No worker threads here: beat from this event loop instead.
      }
    }
    this.startTimer(everyMs);
    return this;
  }

  private startTimer(everyMs: number): void {
    this.thread?.stop();
    this.thread = null;
    this.timer ??= setInterval(() => this.beat(), everyMs);
    this.timer.unref();
  }

  stop(): void {
    this.thread?.stop();
    this.thread = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
