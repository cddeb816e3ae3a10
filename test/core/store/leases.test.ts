/**
 * Run leases as a specification: one holder at a time, a refusal that names the holder, a dead
 * holder (its pid gone on this host, or silent past the timeout on another host) taken over, the
 * engine's handover from its parent, a heartbeat refused once the lease is someone else's, and a
 * release that only ever removes one's own lease. Clock and pid probe injected where it matters.
 */
import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { LabStore } from '../../../src/core/store';
import {
  acquireLease,
  assertNoLiveLease,
  DEFAULT_LEASE_TIMEOUT_MS,
  getLease,
  heartbeatLease,
  LeaseHeldError,
  leaseHolder,
  LeaseKeeper,
  leaseTimeoutMs,
  liveLease,
  pidAlive,
  releaseLease,
  type LeaseEnv,
  type LeaseHolder,
} from '../../../src/core/store/leases';
import { tempDbPath } from './helpers';

const stores: LabStore[] = [];
afterEach(() => stores.splice(0).forEach((s) => s.close()));

function labWithRun(): { store: LabStore; runId: number } {
  const store = LabStore.open(tempDbPath());
  stores.push(store);
  const runId = store.createRun({ name: 'r', config: { steps: 1 }, seed: 1, workflow: 'math', algorithm: 'srpo' });
  return { store, runId };
}

/** A pid that existed and is gone (a finished child). */
function deadPid(): number {
  const pid = spawnSync(process.execPath, ['-e', '']).pid;
  expect(pidAlive(pid)).toBe(false);
  return pid;
}

/** A holder as another process would have it. */
const other = (pid: number, host = hostname()): LeaseHolder => ({ token: `other-${pid}-${host}`, pid, host });

describe('run leases', () => {
  it('one holder at a time; the refusal names the holder, its pid, host, start and heartbeat', () => {
    const { store, runId } = labWithRun();
    const a = leaseHolder();
    const b = leaseHolder();
    acquireLease(store.db, runId, a, 'engine');
    let refused: unknown;
    try {
      acquireLease(store.db, runId, b, 'starting');
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(LeaseHeldError);
    expect((refused as Error).message).toMatch(
      new RegExp(
        `^run ${runId} is being trained by engine pid ${process.pid} on host ${hostname()} \\(since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z, last heartbeat \\d+ s ago\\)$`,
      ),
    );
    expect(() => assertNoLiveLease(store.db, runId, b)).toThrow(LeaseHeldError);
    expect(() => assertNoLiveLease(store.db, runId, a)).not.toThrow(); // one's own lease is no obstacle
    // Re-acquiring one's own lease changes its kind and keeps its start.
    const before = getLease(store.db, runId)!;
    const again = acquireLease(store.db, runId, a, 'queued');
    expect(again.lease.kind).toBe('queued');
    expect(again.lease.acquiredAt).toBe(before.acquiredAt);
    expect(again.tookOver).toBeNull();
  });

  it('takes over the lease of a holder whose pid is gone on this host', () => {
    const { store, runId } = labWithRun();
    const gone = deadPid();
    acquireLease(store.db, runId, other(gone), 'engine');
    expect(liveLease(store.db, runId)).toBeNull();
    const me = leaseHolder();
    const { lease, tookOver } = acquireLease(store.db, runId, me, 'starting');
    expect(lease).toMatchObject({ holder: me.token, pid: process.pid, kind: 'starting' });
    expect(tookOver?.lease.pid).toBe(gone);
    expect(tookOver?.why).toBe(`process ${gone} no longer exists on this host`);
    // The dead holder, should it come back, finds its heartbeat refused.
    expect(heartbeatLease(store.db, runId, other(gone))).toBe(false);
  });

  it('on another host: refused while the heartbeat is fresh, taken over once it is older than the timeout', () => {
    const { store, runId } = labWithRun();
    let now = 1_000_000;
    const env: LeaseEnv = { now: () => now, host: 'here', pidAlive: () => false, timeoutMs: 60_000 };
    const far = other(12345, 'elsewhere');
    acquireLease(store.db, runId, far, 'engine', { env });
    const me = { token: 'me', pid: process.pid, host: 'here' };
    now += 59_000; // the pid cannot be checked there: only the heartbeat counts
    expect(() => acquireLease(store.db, runId, me, 'starting', { env })).toThrow(
      /being trained by engine pid 12345 on host elsewhere .*last heartbeat 59 s ago/,
    );
    expect(heartbeatLease(store.db, runId, far, now)).toBe(true);
    now += 60_001;
    const { tookOver } = acquireLease(store.db, runId, me, 'starting', { env });
    expect(tookOver?.why).toBe('no heartbeat for 60 s (timeout 60 s)');
    expect(getLease(store.db, runId)?.holder).toBe('me');
  });

  it('a live pid with a heartbeat older than the timeout is dead too (a reused pid does not hold a run forever)', () => {
    const { store, runId } = labWithRun();
    let now = 5_000_000;
    const env: LeaseEnv = { now: () => now, host: hostname(), pidAlive: () => true, timeoutMs: 1000 };
    acquireLease(store.db, runId, other(process.pid), 'engine', { env });
    now += 1001;
    expect(liveLease(store.db, runId, env)).toBeNull();
  });

  it("the engine takes over its parent's `starting` lease, and nothing else that is alive", () => {
    const { store, runId } = labWithRun();
    const host = leaseHolder(); // the parent (this process)
    const engine = { token: 'engine', pid: 999_999, host: hostname() };
    acquireLease(store.db, runId, host, 'queued');
    // Queued is not a handover: the host has not launched anything yet.
    expect(() => acquireLease(store.db, runId, engine, 'engine', { fromParent: process.pid })).toThrow(/queued by lab host pid/);
    acquireLease(store.db, runId, host, 'starting');
    expect(() => acquireLease(store.db, runId, engine, 'engine', { fromParent: process.pid + 1 })).toThrow(/being started by lab host pid/);
    const { lease, tookOver } = acquireLease(store.db, runId, engine, 'engine', { fromParent: process.pid });
    expect(lease).toMatchObject({ kind: 'engine', pid: 999_999, holder: 'engine' });
    expect(tookOver).toBeNull();
    // The parent's release after the handover leaves the engine's lease alone.
    expect(releaseLease(store.db, runId, host)).toBe(false);
    expect(getLease(store.db, runId)?.holder).toBe('engine');
    expect(releaseLease(store.db, runId, engine)).toBe(true);
    expect(getLease(store.db, runId)).toBeNull();
  });

  it('a keeper refreshes at most once a second and reports a lost lease once', () => {
    const { store, runId } = labWithRun();
    const me = leaseHolder();
    acquireLease(store.db, runId, me, 'engine');
    let now = Date.now();
    let lost = 0;
    const keeper = new LeaseKeeper(
      store.db,
      runId,
      me,
      () => lost++,
      () => now,
    );
    now += 5000;
    expect(keeper.beat()).toBe(true);
    expect(getLease(store.db, runId)!.heartbeatAt).toBe(now);
    const beatAt = now;
    now += 500;
    expect(keeper.beat()).toBe(true); // throttled: no write
    expect(getLease(store.db, runId)!.heartbeatAt).toBe(beatAt);
    // Someone judged it dead and took over.
    store.db.raw.prepare("UPDATE run_leases SET holder = 'thief' WHERE run_id = ?").run(runId);
    now += 1000;
    expect(keeper.beat()).toBe(false);
    now += 1000;
    expect(keeper.beat()).toBe(false);
    expect(keeper.lost).toBe(true);
    expect(lost).toBe(1);
    expect(getLease(store.db, runId)!.holder).toBe('thief');
  });

  it('a deleted run takes its lease with it', () => {
    const { store, runId } = labWithRun();
    acquireLease(store.db, runId, leaseHolder(), 'engine');
    store.deleteRun(runId);
    expect(getLease(store.db, runId)).toBeNull();
  });

  it('the timeout: 10 minutes unless SRPO_LAB_LEASE_TIMEOUT_S says otherwise', () => {
    expect(DEFAULT_LEASE_TIMEOUT_MS).toBe(600_000);
    expect(leaseTimeoutMs({})).toBe(600_000);
    expect(leaseTimeoutMs({ SRPO_LAB_LEASE_TIMEOUT_S: '90' })).toBe(90_000);
    expect(() => leaseTimeoutMs({ SRPO_LAB_LEASE_TIMEOUT_S: 'soon' })).toThrow(/SRPO_LAB_LEASE_TIMEOUT_S="soon" is not a positive number/);
  });
});
