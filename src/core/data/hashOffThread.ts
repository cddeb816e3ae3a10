/**
 * SHA-256 of a file in a worker thread, with progress and a cancel, so a large dataset never
 * stalls the thread that serves the API (docs/decisions/054-hashing-off-thread.md: hashing a
 * multi-GB file on the lab worker held every other request for as long). The worker streams the
 * file in 4 MiB reads (the same bytes as datasetTasks.ts fileSha256, the synchronous reference the
 * CLI keeps using) and posts the bytes done every PROGRESS_BYTES; `cancel` terminates it.
 *
 * The worker is CommonJS evaluated from a string (no file to ship beside the bundles). Node-only
 * (worker_threads). Not here: the memo and the sharing of one job between requests
 * (datasetTasks.ts hashInBackground). Tested by test/core/data/hashOffThread.test.ts.
 */
import { Worker } from 'node:worker_threads';

/** Bytes between two progress messages. */
const PROGRESS_BYTES = 64 << 20;

const WORKER = `
const { workerData, parentPort } = require('node:worker_threads');
const { openSync, readSync, closeSync } = require('node:fs');
const { createHash } = require('node:crypto');
const { path, PROGRESS_BYTES } = workerData;
const h = createHash('sha256');
const buf = Buffer.allocUnsafe(4 << 20);
let fd;
try {
  fd = openSync(path, 'r');
  let done = 0, told = 0;
  for (;;) {
    const n = readSync(fd, buf, 0, buf.length, null);
    if (n === 0) break;
    h.update(buf.subarray(0, n));
    done += n;
    if (done - told >= PROGRESS_BYTES) { told = done; parentPort.postMessage({ done }); }
  }
  parentPort.postMessage({ sha256: h.digest('hex'), done });
} catch (e) {
  parentPort.postMessage({ error: e && e.code ? e.code : String(e && e.message) });
} finally {
  if (fd !== undefined) closeSync(fd);
}
`;

export class HashCancelled extends Error {}

export interface OffThreadHash {
  /** The hex digest; rejects with HashCancelled after `cancel`, or naming the file when it cannot be read. */
  readonly sha256: Promise<string>;
  /** Bytes hashed so far (updated every PROGRESS_BYTES). */
  readonly done: number;
  /** Stops the worker; `sha256` rejects with HashCancelled. */
  cancel(): void;
}

/** Starts hashing `path` in a worker thread. */
export function hashOffThread(path: string, onProgress?: (done: number) => void): OffThreadHash {
  let done = 0;
  let settled = false;
  let cancelFn: () => void = () => undefined;
  const sha256 = new Promise<string>((resolve, reject) => {
    const worker = new Worker(WORKER, { eval: true, workerData: { path, PROGRESS_BYTES } });
    worker.unref(); // a hash in flight never keeps the process alive
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      fn();
      void worker.terminate();
    };
    worker.on('message', (m: { done?: number; sha256?: string; error?: string }) => {
      if (typeof m.done === 'number') {
        done = m.done;
        onProgress?.(done);
      }
      if (typeof m.sha256 === 'string') settle(() => resolve(m.sha256!));
      else if (m.error !== undefined) settle(() => reject(new Error(`"${path}" cannot be read (${m.error})`)));
    });
    worker.on('error', (err) => settle(() => reject(new Error(`hashing "${path}" failed: ${err.message}`))));
    worker.on('exit', () => settle(() => reject(new HashCancelled(`hashing "${path}" was cancelled`))));
    cancelFn = () => settle(() => reject(new HashCancelled(`hashing "${path}" was cancelled`)));
  });
  sha256.catch(() => undefined); // observed by whoever awaits it; never an unhandled rejection
  return {
    sha256,
    get done() {
      return done;
    },
    cancel: () => cancelFn(),
  };
}
