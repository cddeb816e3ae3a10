/**
 * Hashing a config's data files ahead of resolving it, off the API's thread: every dataset file,
 * filled slot and corpus a request names is hashed in a worker thread (datasetTasks.ts
 * hashInBackground, which fills the memo that resolving the config then reads), and the request
 * waits for it only up to a bound. Past the bound, validateConfig answers at once with a pending
 * state (each field still being read, with its progress) and the hash goes on; the next
 * validation of the same file joins the same job. Why: a multi-GB file hashed on the lab worker
 * would hold every other request with it (docs/decisions/054-hashing-off-thread.md).
 *
 * Not here: what the hash is for (datasetTasks.ts), path roots (pathRoots.ts). Tested by
 * test/core/data/hashOffThread.test.ts (listRuns while a 2 GB file is hashed).
 */
import { hashInBackground, type HashJob } from '../data/datasetTasks';
import { configPaths } from './pathRoots';

/** How long validateConfig waits for hashes before it answers with a pending state. */
export const VALIDATE_HASH_WAIT_MS = 1_000;
/** How long createRun / createSuite wait for hashes before refusing with "still hashing, try again". */
export const CREATE_HASH_WAIT_MS = 10_000;

/** A data file whose hash is still being computed: the field that names it and its progress. */
export interface PendingHash {
  /** Dotted path of the field (`tasks.train.0.dataset`). */
  field: string;
  /** The path as the request gave it. */
  file: string;
  bytes: number;
  done: number;
}

const GB = 1e9;
const MB = 1e6;
const size = (n: number): string => (n >= GB ? `${(n / GB).toFixed(1)} GB` : `${(n / MB).toFixed(1)} MB`);

/** The sentence for one pending file. */
export function pendingHashMessage(p: PendingHash): string {
  const pct = p.bytes > 0 ? Math.floor((100 * p.done) / p.bytes) : 0;
  return `still reading "${p.file}" to hash it (${pct}% of ${size(p.bytes)}); ask again in a moment`;
}

/**
 * Starts hashing every data file the configs name (off this thread) and waits up to `waitMs` for
 * all of them; returns the files still being hashed then (empty: every hash is in the memo, or
 * the file cannot be hashed and resolving the config will say why).
 */
export async function hashDataFilesAhead(configs: readonly unknown[], waitMs: number): Promise<PendingHash[]> {
  const jobs: { field: string; file: string; job: HashJob }[] = [];
  for (const config of configs) {
    for (const p of configPaths(config)) {
      if (p.kind !== 'data') continue;
      const job = hashInBackground(p.abs);
      if (job) jobs.push({ field: p.field, file: p.value, job });
    }
  }
  if (jobs.length === 0) return [];
  const finished = new Set<HashJob>();
  const all = Promise.allSettled(jobs.map(({ job }) => job.sha256.finally(() => finished.add(job))));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([all, new Promise<void>((r) => (timer = setTimeout(r, waitMs)))]);
  clearTimeout(timer);
  return jobs.filter(({ job }) => !finished.has(job)).map(({ field, file, job }) => ({ field, file, bytes: job.bytes, done: job.done }));
}
