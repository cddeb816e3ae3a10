/**
 * The heartbeat keeps beating while the holder's thread is blocked (issue 26, point 9: the
 * engine's heartbeat was a timer on its event loop, silent for a whole synchronous step, 27-35 s
 * seen; a step longer than the lease timeout let another host take a live engine's run over).
 * Here the test's own thread holds the lease through a LeaseKeeper and then blocks synchronously
 * (Atomics.wait, as a long tfjs step would) for three times the timeout, while another host in a
 * worker thread (leaseProbe.ts, its own connection) watches the heartbeat advance and tries to
 * take the run over: refused. Also: the thread notices a takeover on its own and stops, and
 * stop() ends the beats.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { LabStore } from '../../../src/core/store';
import { acquireLease, getLease, leaseHolder, LeaseKeeper } from '../../../src/core/store/leases';
import { tempDbPath } from './helpers';

const stores: LabStore[] = [];
const keepers: LeaseKeeper[] = [];
afterEach(() => {
  keepers.splice(0).forEach((k) => k.stop());
  stores.splice(0).forEach((s) => s.close());
});

function labWithLease(): { store: LabStore; dbPath: string; runId: number; keeperFor: (everyMs: number, onLost?: () => void) => LeaseKeeper } {
  const dbPath = tempDbPath();
  const store = LabStore.open(dbPath);
  stores.push(store);
  const runId = store.createRun({ name: 'r', config: { steps: 1 }, seed: 1, workflow: 'math', algorithm: 'srpo' });
  const me = leaseHolder();
  acquireLease(store.db, runId, me, 'engine');
  const keeperFor = (everyMs: number, onLost?: () => void) => {
    const k = new LeaseKeeper(store.db, runId, me, onLost).start(everyMs);
    keepers.push(k);
    return k;
  };
  return { store, dbPath, runId, keeperFor };
}

/** Blocks this thread for `ms`, as a long synchronous step does: no timer, no message, no I/O callback runs. */
function blockThread(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, get: () => T | null | undefined | false, timeoutMs = 20_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** The other host: leaseProbe.ts in a worker thread, TypeScript through tsx's require hook. */
function startProbe(dbPath: string, runId: number, timeoutMs: number): Worker {
  const tsxApi = createRequire(__filename).resolve('tsx/cjs/api');
  const entry = join(__dirname, 'leaseProbe.ts');
  const boot = `require(${JSON.stringify(tsxApi)}).register();\nrequire(${JSON.stringify(entry)});\n`;
  return new Worker(boot, { eval: true, workerData: { dbPath, runId, timeoutMs } });
}

const next = <T>(w: Worker): Promise<T> =>
  new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });

describe('the lease heartbeat during a long synchronous step', () => {
  it('keeps beating while the holder thread is blocked past the timeout; another host is refused', async () => {
    const TIMEOUT_MS = 1000;
    const BLOCK_MS = 3 * TIMEOUT_MS;
    const { store, dbPath, runId, keeperFor } = labWithLease();
    const keeper = keeperFor(100);
    // The heartbeat thread has started beating (its first beat comes once it has opened the database).
    const acquired = getLease(store.db, runId)!.heartbeatAt;
    await until('a first beat', () => getLease(store.db, runId)!.heartbeatAt > acquired);

    const probe = startProbe(dbPath, runId, TIMEOUT_MS);
    expect(await next<string>(probe)).toBe('ready');
    const result = next<{ samples: { at: number; heartbeatAt: number }[]; takeover: { taken: boolean; message: string } }>(probe);
    const blockedAt = Date.now();
    probe.postMessage({ blockedAt, sampleAt: [500, 1500, 2500], takeoverAt: 2 * TIMEOUT_MS });
    blockThread(BLOCK_MS);
    const blockEnded = Date.now();
    const { samples, takeover } = await result;
    await probe.terminate();

    // Every sample was taken while this thread was blocked, and saw a heartbeat written during the block.
    expect(samples).toHaveLength(3);
    for (const s of samples) {
      expect(s.at).toBeLessThan(blockEnded);
      expect(s.heartbeatAt).toBeGreaterThan(blockedAt);
      expect(s.at - s.heartbeatAt).toBeLessThan(TIMEOUT_MS); // never silent for a timeout
    }
    expect(samples[2].heartbeatAt).toBeGreaterThan(samples[0].heartbeatAt);
    // The other host found the lease alive and was refused, naming the holder.
    expect(takeover.taken).toBe(false);
    expect(takeover.message).toMatch(new RegExp(`^run ${runId} is being trained by engine pid ${process.pid} `));
    expect(getLease(store.db, runId)!.holder).toBe(keeper.holder.token);
    expect(keeper.beat()).toBe(true);
    expect(keeper.lost).toBe(false);
  }, 60_000);

  it('notices a takeover by itself, tells the holder once, and stops beating', async () => {
    const { store, runId, keeperFor } = labWithLease();
    let lost = 0;
    const keeper = keeperFor(50, () => lost++);
    await until('the thread beating', () => keeper.threadBeats > 0);
    store.db.raw.prepare("UPDATE run_leases SET holder = 'thief', heartbeat_at = 0 WHERE run_id = ?").run(runId);
    // The holder's thread is blocked: only the heartbeat thread can find out; beat() then reads its verdict.
    blockThread(500);
    expect(keeper.beat()).toBe(false);
    expect(keeper.lost).toBe(true);
    await sleep(200);
    expect(lost).toBe(1);
    // The thief's row is left as the thief wrote it (the heartbeat only ever touches the holder's own row).
    expect(getLease(store.db, runId)).toMatchObject({ holder: 'thief', heartbeatAt: 0 });
  }, 30_000);

  it('stop() ends the beats', async () => {
    const { store, runId, keeperFor } = labWithLease();
    const keeper = keeperFor(50);
    await until('the thread beating', () => keeper.threadBeats > 1);
    keeper.stop();
    await sleep(150); // a beat in flight when stop() was called may still land
    const after = getLease(store.db, runId)!.heartbeatAt;
    await sleep(400);
    expect(getLease(store.db, runId)!.heartbeatAt).toBe(after);
  }, 30_000);
});
