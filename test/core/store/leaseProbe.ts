/**
 * Another host, in a worker thread with its own connection, watching a run's lease while the
 * test's thread is blocked (test/core/store/leaseHeartbeat.test.ts). Not a test file.
 *
 * workerData: { dbPath, runId, timeoutMs }. It opens the database, posts `ready`, and on
 * `{ blockedAt, sampleAt: number[], takeoverAt }` (milliseconds after blockedAt) reads the
 * lease's heartbeat at each sample time, then tries to take the lease as a holder on another
 * host (whose pid cannot be checked: only the heartbeat's age counts) with the given timeout,
 * and posts `{ samples, takeover }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { LabStore } from '../../../src/core/store';
import { acquireLease, getLease } from '../../../src/core/store/leases';

interface Go {
  blockedAt: number;
  sampleAt: number[];
  takeoverAt: number;
}

const { dbPath, runId, timeoutMs } = workerData as { dbPath: string; runId: number; timeoutMs: number };
const store = LabStore.open(dbPath);
const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));

parentPort!.on('message', (go: Go) => {
  void (async () => {
    const samples: { at: number; heartbeatAt: number | null }[] = [];
    for (const dt of go.sampleAt) {
      await sleepUntil(go.blockedAt + dt);
      samples.push({ at: Date.now(), heartbeatAt: getLease(store.db, runId)?.heartbeatAt ?? null });
    }
    await sleepUntil(go.blockedAt + go.takeoverAt);
    let takeover: { taken: boolean; message: string };
    try {
      const env = { now: Date.now, host: 'another-host', pidAlive: () => true, timeoutMs };
      acquireLease(store.db, runId, { token: 'another-host-engine', pid: 1, host: 'another-host' }, 'engine', { env });
      takeover = { taken: true, message: '' };
    } catch (err) {
      takeover = { taken: false, message: (err as Error).message };
    }
    store.close();
    parentPort!.postMessage({ samples, takeover });
  })();
});
parentPort!.postMessage('ready');
