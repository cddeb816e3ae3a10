/**
 * RunControl: the engines of one LabService and its queue. It creates runs (from a validated
 * config), starts, resumes, pauses, stops and deletes them, and relays each engine's messages to
 * the subscribers (pushRelay.ts).
 *
 * Engines and leases: at most `maxEngines` engines run at once (engineLimit.ts); a start or
 * resume beyond that waits in a FIFO queue, holding the run's lease as `queued` (so no other
 * host can take the run meanwhile; status `queued` in listRuns/getRun and pushes) and starts
 * when a slot frees. A heartbeat keeps the queued leases alive; one taken over leaves the queue.
 * Starting, resuming and deleting a run whose lease another process holds alive (an engine of
 * the CLI, another `serve`) is refused with a conflict naming the holder (runs.ts checkRunnable).
 *
 * The one scheduler of a lab host: the LabService's runs and suites, and `srpo-lab suite run`
 * (suiteRun.ts, with `--parallel` as its engine limit) all go through it. One Ctrl-C behaviour
 * (`interrupt`): the first drops the queue (leases released, runs back to their stored status)
 * and asks every engine to stop after its step; the next kills them. `close` is the same with a
 * timeout in place of the second Ctrl-C. `onSettled` tells a caller when a run leaves this host,
 * whether its engine ran or it left the queue unstarted.
 *
 * Not here: the launch itself and an engine's exit (runs.ts), the training loop (src/engine).
 * Tested by test/core/host/engineQueue.test.ts (the queue), test/engine/leases.test.ts (lease
 * refusals), test/core/suites/suites.test.ts (a suite through it), test/server/server.test.ts and
 * test/e2e/lab.test.ts (real engines).
 */
import { rmSync } from 'node:fs';
import { LabApiError } from '../../shared/api';
import type { RunConfig } from '../config';
import { assertRunDataUnchanged } from '../data/datasetTasks';
import { acquireLease, assertNoLiveLease, heartbeatLease, HEARTBEAT_EVERY_MS, LeaseHeldError, leaseHolder, releaseLease } from '../store/leases';
import { validConfigOrThrow } from './configForm';
import type { LabContext } from './labContext';
import type { EngineLauncher, EngineMode } from './launcher';
import { runDirFor } from './paths';
import { relayEngineMessage, type RelayTarget } from './pushRelay';
import { runOrThrow } from './runQueries';
import { assertCheckpointReadable, checkRunnable, createRun, launchRun, type ActiveRun, type RunOutcome } from './runs';

/** A start or resume waiting for an engine slot. */
interface QueuedLaunch {
  runId: number;
  mode: EngineMode;
  force: boolean;
}

/** A run leaving this host: its engine exited (`outcome`), or it left the queue without starting (`notStarted`: why). */
export type RunSettled =
  | { runId: number; startedAt: number; outcome: RunOutcome; notStarted?: undefined }
  | { runId: number; startedAt?: undefined; outcome?: undefined; notStarted: string };

export class RunControl {
  private readonly active = new Map<number, ActiveRun & { paused: boolean }>();
  /** This service's lease identity (its queued runs, and the engines it launches until they take over). */
  private readonly holder = leaseHolder();
  private readonly queue: QueuedLaunch[] = [];
  private queueHeartbeat: NodeJS.Timeout | null = null;
  private readonly settledListeners = new Set<(s: RunSettled) => void>();
  /** Ctrl-Cs (or closes) so far: the first stops, the next kill. */
  private interrupts = 0;

  constructor(
    private readonly ctx: LabContext,
    private readonly launcher: EngineLauncher,
    /** Engines run at once. */
    readonly maxEngines: number,
  ) {}

  isActive(runId: number): boolean {
    return this.active.has(runId);
  }

  isQueued(runId: number): boolean {
    return this.queue.some((q) => q.runId === runId);
  }

  /** Ids of the runs whose engines this service is running. */
  activeRuns(): number[] {
    return [...this.active.keys()];
  }

  /** Ids of the runs waiting in this service's queue, in order. */
  queuedRuns(): number[] {
    return this.queue.map((q) => q.runId);
  }

  /** Every run leaving this host from now on (engine exited, or dropped from the queue unstarted); returns a disposer. */
  onSettled(listener: (s: RunSettled) => void): () => void {
    this.settledListeners.add(listener);
    return () => void this.settledListeners.delete(listener);
  }

  /** Creates a run from a preset and/or a partial config (validated first); `start` starts or queues it. */
  create(preset: string | null, config: Record<string, unknown>, start: boolean): { runId: number } {
    const runId = createRun(this.ctx.store, { config: validConfigOrThrow(preset, config), preset });
    this.ctx.push({ type: 'runs' });
    if (start) this.launch(runId, 'start');
    return { runId };
  }

  /** Starts the run now if an engine slot is free, else queues it (its lease taken as `queued`). */
  launch(runId: number, mode: EngineMode, force = false): void {
    const { store } = this.ctx;
    const run = runOrThrow(store, runId);
    if (store.readonly)
      throw new LabApiError('conflict', `${this.ctx.dbPath} is open read-only (the file or its folder is read-only): runs can be read, not started`);
    if (this.active.has(runId)) throw new LabApiError('conflict', `run ${runId} is already running`);
    if (this.isQueued(runId)) throw new LabApiError('conflict', `run ${runId} is already queued`);
    if (this.active.size < this.maxEngines) return this.startEngine({ runId, mode, force });
    try {
      checkRunnable(store, run, mode, force, this.holder);
      acquireLease(store.db, runId, this.holder, 'queued');
    } catch (err) {
      throw new LabApiError('conflict', (err as Error).message);
    }
    this.queue.push({ runId, mode, force });
    this.syncQueueHeartbeat();
    this.ctx.push({ type: 'status', runId, status: 'queued', error: null });
    this.ctx.push({
      type: 'log',
      runId,
      level: 'info',
      line: `queued: ${this.active.size} of ${this.maxEngines} engines busy, ${this.queue.length - 1} run(s) ahead`,
    });
  }

  resume(runId: number, force: boolean): { ok: true } {
    const run = runOrThrow(this.ctx.store, runId);
    if (this.isQueued(runId)) throw new LabApiError('conflict', `run ${runId} is already queued`);
    const a = this.active.get(runId);
    if (a) {
      if (!a.paused) throw new LabApiError('conflict', `run ${runId} is already running`);
      a.resume();
      a.paused = false;
      return { ok: true };
    }
    // A changed dataset or corpus file, or a checkpoint of the former lab model (policies/registry.ts),
    // is refused here, before an engine starts (not by it, after).
    try {
      assertRunDataUnchanged(run.config as RunConfig);
      assertCheckpointReadable(this.ctx.store, this.ctx.dbPath, runId);
    } catch (err) {
      throw new LabApiError('conflict', (err as Error).message);
    }
    this.launch(runId, 'resume', force);
    return { ok: true };
  }

  control(runId: number, what: 'pause' | 'stop'): { ok: true } {
    runOrThrow(this.ctx.store, runId);
    // Stopping a queued run takes it out of the queue: it never started, nothing to stop.
    if (what === 'stop' && this.dequeue(runId)) return { ok: true };
    const a = this.active.get(runId);
    if (!a) throw new LabApiError('conflict', `run ${runId} has no engine running in this lab`);
    if (what === 'pause') {
      a.pause();
      a.paused = true;
    } else a.stop();
    return { ok: true };
  }

  /** Deletes a run that no engine runs (its rows, cached series and folder); a queued one leaves the queue first. */
  delete(runId: number): { deleted: boolean } {
    const { store } = this.ctx;
    runOrThrow(store, runId);
    if (this.active.has(runId)) throw new LabApiError('conflict', `run ${runId} is running; stop it before deleting it`);
    this.dequeue(runId);
    try {
      assertNoLiveLease(store.db, runId, this.holder);
    } catch (err) {
      if (err instanceof LeaseHeldError) throw new LabApiError('conflict', `${err.message}; stop it before deleting it`);
      throw err;
    }
    const deleted = store.deleteRun(runId);
    this.ctx.seriesCache.clear(runId);
    try {
      rmSync(runDirFor(this.ctx.dbPath, runId), { recursive: true, force: true });
    } catch {
      // Checkpoint files left behind do not matter to the database.
    }
    this.ctx.push({ type: 'runs' });
    return { deleted };
  }

  /**
   * Ctrl-C. The first: drops the queue (each run's lease released, back to its stored status,
   * resumable) and asks every engine to stop after its step (an update in progress commits); the
   * run ends `stopped` with its last committed step checkpointed. Any later one: kills the
   * engines (their runs are marked interrupted, resumable all the same). Returns which it did.
   */
  interrupt(): 'stopping' | 'killing' {
    if (this.interrupts++ === 0) {
      for (const q of [...this.queue]) this.dequeue(q.runId, 'not started: stopped by Ctrl-C');
      for (const a of this.active.values()) a.stop();
      return 'stopping';
    }
    for (const a of this.active.values()) a.engine.kill('SIGKILL');
    return 'killing';
  }

  /** `interrupt()`, then a second one after `timeoutMs` if an engine is still running; resolves once every engine has exited. */
  async close(timeoutMs: number): Promise<void> {
    const engines = [...this.active.values()];
    if (this.interrupt() === 'killing' || engines.length === 0) {
      await Promise.all(engines.map((a) => a.done));
      return;
    }
    const timer = setTimeout(() => this.interrupt(), timeoutMs);
    await Promise.all(engines.map((a) => a.done));
    clearTimeout(timer);
  }

  private startEngine({ runId, mode, force }: QueuedLaunch): void {
    const { store, dbPath } = this.ctx;
    const target: RelayTarget = {
      store,
      runId,
      push: (p) => this.ctx.push(p),
      onStatus: (status) => {
        const a = this.active.get(runId);
        if (a) a.paused = status === 'paused';
      },
    };
    let active: ActiveRun;
    try {
      active = launchRun(runId, mode, { store, dbPath, launcher: this.launcher, holder: this.holder, onMessage: (m) => relayEngineMessage(m, target) }, force);
    } catch (err) {
      throw new LabApiError('conflict', (err as Error).message);
    }
    const startedAt = Date.now();
    this.active.set(runId, Object.assign(active, { paused: false }));
    this.ctx.push({ type: 'status', runId, status: 'running', error: null });
    void active.done.then((outcome) => {
      this.active.delete(runId);
      this.ctx.push({ type: 'status', runId, status: outcome.status, error: outcome.error });
      this.settle({ runId, startedAt, outcome });
      this.startQueued();
    });
  }

  /** Starts queued runs, oldest first, while slots are free. One that can no longer start is dropped with a log line saying why. */
  private startQueued(): void {
    while (this.active.size < this.maxEngines && this.queue.length > 0) {
      const next = this.queue.shift()!;
      try {
        this.startEngine(next);
      } catch (err) {
        releaseLease(this.ctx.store.db, next.runId, this.holder);
        const run = this.ctx.store.getRun(next.runId);
        const line = `queued run could not start: ${(err as Error).message}`;
        this.ctx.push({ type: 'log', runId: next.runId, level: 'error', line });
        if (run) this.ctx.push({ type: 'status', runId: next.runId, status: run.status, error: run.error });
        this.settle({ runId: next.runId, notStarted: line });
      }
    }
    this.syncQueueHeartbeat();
  }

  /** Takes a run out of the queue (its lease released, its stored status pushed); false if it was not queued. */
  private dequeue(runId: number, why = 'stopped before it started'): boolean {
    const i = this.queue.findIndex((q) => q.runId === runId);
    if (i < 0) return false;
    this.queue.splice(i, 1);
    releaseLease(this.ctx.store.db, runId, this.holder);
    this.syncQueueHeartbeat();
    const run = this.ctx.store.getRun(runId);
    if (run) this.ctx.push({ type: 'status', runId, status: run.status, error: run.error });
    this.settle({ runId, notStarted: why });
    return true;
  }

  private settle(s: RunSettled): void {
    for (const l of [...this.settledListeners]) l(s);
  }

  /** A heartbeat for the queued leases while there are any. A refused one (taken over) leaves the queue. */
  private syncQueueHeartbeat(): void {
    if (this.queue.length > 0 && !this.queueHeartbeat) {
      this.queueHeartbeat = setInterval(() => {
        for (const q of [...this.queue]) {
          if (heartbeatLease(this.ctx.store.db, q.runId, this.holder)) continue;
          this.queue.splice(this.queue.indexOf(q), 1);
          const line = `run ${q.runId} left the queue: its lease was taken over`;
          this.ctx.push({ type: 'log', runId: q.runId, level: 'warn', line });
          this.settle({ runId: q.runId, notStarted: line });
        }
      }, HEARTBEAT_EVERY_MS);
      this.queueHeartbeat.unref();
    } else if (this.queue.length === 0 && this.queueHeartbeat) {
      clearInterval(this.queueHeartbeat);
      this.queueHeartbeat = null;
    }
  }
}
