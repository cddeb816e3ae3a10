/**
 * Reads a parquet file's rows as plain objects, synchronously, with hyparquet (a maintained
 * pure-JS reader). hyparquet is an ES module with an async API, while the dataset loaders run
 * inside synchronous code (the trainer builds its environment in a constructor); so the read
 * happens in a worker thread and this thread blocks on an Atomics.wait until the worker has
 * posted the rows, then takes them with receiveMessageOnPort (the pattern of `synckit`).
 * Structs, lists and maps come back as objects and arrays; INT64 columns as BigInt (the loaders
 * convert what they use).
 *
 * Node-only (worker_threads). Not here: verl's layout (datasets.ts reads the rows).
 * Tested by test/core/data/formats.test.ts on test/fixtures/data/verl_tiny.parquet.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';

/** Longest wait for the worker (a DAPO-Math parquet of 17k rows reads in about a second). */
const TIMEOUT_MS = 10 * 60_000;

// The worker is CommonJS evaluated from a string (no file to ship beside the bundles); it
// imports hyparquet by the absolute URL resolved here, so it works from src/ and from out/.
const WORKER = `
const { workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const { port, flag, path, url } = workerData;
const done = (msg) => { port.postMessage(msg); Atomics.store(flag, 0, 1); Atomics.notify(flag, 0); };
(async () => {
  try {
    const hp = await import(url);
    const buf = readFileSync(path);
    const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
    const rows = await hp.parquetReadObjects({ file });
    done({ rows });
  } catch (err) {
    done({ error: String((err && err.message) || err) });
  }
})();
`;

let hyparquetUrl: string | null = null;
function resolveHyparquet(): string {
  if (hyparquetUrl) return hyparquetUrl;
  const req = createRequire(__filename);
  // The package's "default" export condition is its Node entry (src/node.js).
  hyparquetUrl = pathToFileURL(req.resolve('hyparquet')).href;
  return hyparquetUrl;
}

/** Every row of the parquet file at `path`; throws `<path>: cannot read parquet: ...`. */
export function readParquetRows(path: string): Record<string, unknown>[] {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(WORKER, { eval: true, workerData: { port: port2, flag, path, url: resolveHyparquet() }, transferList: [port2] });
  try {
    const waited = Atomics.wait(flag, 0, 0, TIMEOUT_MS);
    if (waited === 'timed-out') throw new Error(`${path}: cannot read parquet: no answer from the reader in ${TIMEOUT_MS / 1000} s`);
    const msg = receiveMessageOnPort(port1)?.message as { rows?: Record<string, unknown>[]; error?: string } | undefined;
    if (!msg) throw new Error(`${path}: cannot read parquet: the reader sent nothing`);
    if (msg.error !== undefined) throw new Error(`${path}: cannot read parquet: ${msg.error}`);
    return msg.rows ?? [];
  } finally {
    port1.close();
    void worker.terminate();
  }
}

/** Whether the file starts with parquet's magic bytes `PAR1` (given its first 4 bytes). */
export function isParquetMagic(head: Uint8Array): boolean {
  return head.length >= 4 && head[0] === 0x50 && head[1] === 0x41 && head[2] === 0x52 && head[3] === 0x31;
}
