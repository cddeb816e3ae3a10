/**
 * Dataset files as run tasks: the `{ dataset: PATH, format?, name?, limit?, split? }` entries of
 * a run config's `tasks.train` / `tasks.eval`, beside the built-in generator names. When a
 * config is resolved for a new run each file's path is made absolute and its content hash
 * (SHA-256 of the bytes) is stored in the entry; a run that is loaded again (resume, `eval
 * --run`) refuses a file whose bytes no longer hash to the stored value, naming the file and
 * both hashes, because a resumed run must see the data it started with.
 *
 * Hashes are computed by streaming the file (4 MiB reads), and memoised per (path, size, mtime)
 * for the life of the process: the new-run form validates a config on every change. A host that
 * serves an API hashes ahead with `hashInBackground` (a worker thread, hashOffThread.ts: a large
 * file never stalls its other requests; one job per file however many requests wait for it), which
 * fills the same memo, so the synchronous `fileSha256` that resolving a config calls then answers
 * at once.
 * Node-only (fs). Not here: the loaders (datasets.ts), task mixing (src/core/train/environment.ts).
 * Tested by test/core/data/datasetTasks.test.ts.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { basename, extname, resolve } from 'node:path';
import { z } from 'zod';
import { DATASET_FORMATS, loadDatasetFile, type DatasetFile } from './datasets';
import { hashOffThread } from './hashOffThread';

export const datasetTaskSchema = z
  .object({
    dataset: z
      .string()
      .min(1)
      .describe('Path of a dataset file (JSONL, JSON list or parquet; see src/core/data/datasets.ts); made absolute when the run is created.'),
    format: z.enum(DATASET_FORMATS).optional().describe('Format of the file; detected from its first record when absent.'),
    name: z.string().min(1).max(100).optional().describe("Benchmark name shown in tables; default the file's name without extension."),
    limit: z.number().int().min(1).max(100_000_000).optional().describe('Use only the first N rows (train and eval). 1..1e8.'),
    split: z.string().min(1).max(100).optional().describe('Keep only rows whose split (or verl extra_info.split) is this.'),
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional()
      .describe('SHA-256 of the file, filled when the run is created; a resume refuses a file whose content changed.'),
  })
  .strict();
export type DatasetTask = z.output<typeof datasetTaskSchema>;

const hashMemo = new Map<string, { size: number; mtimeMs: number; sha256: string }>();

/**
 * SHA-256 (hex) of a file's bytes, streamed; throws naming the file when it cannot be read.
 * `fresh` skips the memo (a check that a file did not change must read it).
 */
export function fileSha256(path: string, fresh = false): string {
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new Error(`"${path}" does not exist`);
  }
  if (!st.isFile()) throw new Error(`"${path}" is not a file`);
  const memo = hashMemo.get(path);
  if (!fresh && memo && memo.size === st.size && memo.mtimeMs === st.mtimeMs) return memo.sha256;
  const h = createHash('sha256');
  const buf = Buffer.allocUnsafe(4 << 20);
  const fd = openSync(path, 'r');
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      h.update(buf.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  const sha256 = h.digest('hex');
  hashMemo.set(path, { size: st.size, mtimeMs: st.mtimeMs, sha256 });
  return sha256;
}

/** A hash being computed off the API's thread. */
export interface HashJob {
  path: string;
  /** The file's size in bytes when the job started. */
  bytes: number;
  /** Bytes hashed so far. */
  readonly done: number;
  /** The digest; on success the memo holds it (when the file did not change meanwhile). Rejects when cancelled or unreadable. */
  readonly sha256: Promise<string>;
  cancel(): void;
}

const inFlight = new Map<string, { size: number; mtimeMs: number; job: HashJob }>();

/**
 * Hashes `path` in a worker thread unless the memo already holds its current hash; the running
 * job when one is already hashing the same bytes. Null when there is nothing to hash ahead (the
 * memo is fresh, or the path is not a regular file: the synchronous check says why, in words).
 */
export function hashInBackground(path: string): HashJob | null {
  let st;
  try {
    st = statSync(path);
  } catch {
    return null;
  }
  if (!st.isFile()) return null;
  const memo = hashMemo.get(path);
  if (memo && memo.size === st.size && memo.mtimeMs === st.mtimeMs) return null;
  const running = inFlight.get(path);
  if (running && running.size === st.size && running.mtimeMs === st.mtimeMs) return running.job;
  running?.job.cancel(); // the file changed under it
  const { size, mtimeMs } = st;
  const hash = hashOffThread(path);
  const sha256 = hash.sha256
    .then((digest) => {
      // Kept only when the file still has the size and time it had when the read began.
      let now;
      try {
        now = statSync(path);
      } catch {
        return digest;
      }
      if (now.size === size && now.mtimeMs === mtimeMs) hashMemo.set(path, { size, mtimeMs, sha256: digest });
      return digest;
    })
    .finally(() => {
      if (inFlight.get(path)?.job === job) inFlight.delete(path);
    });
  sha256.catch(() => undefined); // a job nobody waits for any more must not reject unobserved
  const job: HashJob = {
    path,
    bytes: size,
    get done() {
      return hash.done;
    },
    sha256,
    cancel: () => hash.cancel(),
  };
  inFlight.set(path, { size, mtimeMs, job });
  return job;
}

/** Cancels every background hash (a host closing). */
export function cancelBackgroundHashes(): void {
  for (const { job } of [...inFlight.values()]) job.cancel();
}

/**
 * A dataset path, or a named slot `$NAME` filled from `tasks.paths` (the *-paper-data presets
 * name their files this way); null for a slot without a file.
 */
export function fillDataSlot(path: string, paths: Readonly<Record<string, string>>): string | null {
  if (!path.startsWith('$')) return path;
  const slot = path.slice(1);
  return Object.hasOwn(paths, slot) ? paths[slot] : null;
}

/** The slots a config names (`$NAME` entries and corpus) that `tasks.paths` does not fill, in order. */
export function missingDataSlots(config: {
  tasks: { train: readonly (string | DatasetTask)[]; eval: readonly (string | DatasetTask)[]; paths: Readonly<Record<string, string>> };
  workflow: { options: Record<string, unknown> };
}): string[] {
  const named = [...config.tasks.train, ...config.tasks.eval].flatMap((e) => (typeof e === 'string' ? [] : [e.dataset]));
  if (typeof config.workflow.options.corpus === 'string') named.push(config.workflow.options.corpus);
  const missing = named.filter((p) => fillDataSlot(p, config.tasks.paths) === null).map((p) => p.slice(1));
  return [...new Set(missing)];
}

/** The error for unfilled slots, naming each and how to fill it. */
export function missingDataSlotsMessage(missing: readonly string[]): string {
  return `no file given for ${missing.map((m) => `"$${m}"`).join(', ')}: set each with ${missing.map((m) => `--set tasks.paths.${m}=PATH`).join(' ')}`;
}

/** The entry with an absolute path and its file's hash (kept when already stored). */
export function stampDatasetTask(task: DatasetTask, baseDir = process.cwd()): DatasetTask {
  const dataset = resolve(baseDir, task.dataset);
  return { ...task, dataset, sha256: task.sha256 ?? fileSha256(dataset) };
}

/** The benchmark name of an entry: its `name`, else the file name without extension. */
export function datasetTaskName(task: DatasetTask): string {
  return task.name ?? basename(task.dataset, extname(task.dataset));
}

/** Throws when the file's bytes no longer hash to the stored value; returns the hash it read. */
export function assertDatasetUnchanged(path: string, stored: string | undefined, what = 'dataset'): string {
  const now = fileSha256(path, true);
  if (stored !== undefined && now !== stored) {
    throw new Error(
      `${what} "${path}" changed since the run was created (sha256 ${stored.slice(0, 12)}... stored, ${now.slice(0, 12)}... now): ` +
        'a resumed or re-evaluated run must see the data it started with; restore the file, or start a new run',
    );
  }
  return now;
}

const loaded = new Map<string, DatasetFile>();

/** Load an entry's rows (checking its hash first); memoised per (path, hash, options). */
export function loadDatasetTask(task: DatasetTask): DatasetFile {
  const sha256 = assertDatasetUnchanged(task.dataset, task.sha256);
  const key = JSON.stringify([task.dataset, sha256, task.format, task.name, task.limit, task.split]);
  let file = loaded.get(key);
  if (!file) {
    file = loadDatasetFile(task.dataset, task.format, { benchmark: datasetTaskName(task), limit: task.limit, split: task.split });
    loaded.set(key, file);
  }
  return file;
}

/**
 * Every stored file of a run config (dataset entries, the search corpus) still has its stored
 * hash; throws on the first that changed. For a host to call before it launches a resume, so
 * the refusal comes before an engine starts (the environment checks again when it loads).
 */
export function assertRunDataUnchanged(config: {
  tasks: { train: readonly (string | DatasetTask)[]; eval: readonly (string | DatasetTask)[] };
  workflow: { options: Record<string, unknown> };
}): void {
  for (const e of [...config.tasks.train, ...config.tasks.eval])
    if (typeof e !== 'string' && !e.dataset.startsWith('$')) assertDatasetUnchanged(e.dataset, e.sha256);
  const { corpus, corpusSha256 } = config.workflow.options;
  if (typeof corpus === 'string' && !corpus.startsWith('$'))
    assertDatasetUnchanged(corpus, typeof corpusSha256 === 'string' ? corpusSha256 : undefined, 'corpus');
}
