/**
 * Long work never blocks the API (issue 26: validateConfig naming a 20 GB file hashed it for 69 s
 * on the lab worker, and a listRuns sent 2 s later waited 67 s). Over the real `serve` setup
 * (LabWorkerClient): while a 2 GB file (sparse: no disk) is hashed for a concurrent validateConfig,
 * listRuns answers within 1 s, and validateConfig itself answers at once with a pending state
 * naming the field and its progress. In-thread: the off-thread hash equals an independent
 * digest, it fills the memo (the next validation answers ok without hashing again), and a
 * cancelled hash rejects and leaves nothing in the memo.
 */
import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileSha256, hashInBackground } from '../../../src/core/data/datasetTasks';
import { HashCancelled } from '../../../src/core/data/hashOffThread';
import { LabService } from '../../../src/core/host/labService';
import { LabWorkerClient } from '../../../src/core/host/labWorkerClient';
import { NodeForkLauncher } from '../../../src/core/host/launcher';
import { PathRoots } from '../../../src/core/host/pathRoots';
import type { ConfigValidation } from '../../../src/shared/api';

const dir = mkdtempSync(join(tmpdir(), 'srpo-hash-'));
const datasetAt = (path: string) => ({ tasks: { train: [{ dataset: path }], eval: [] } });

/** A sparse file of `bytes` with a few real bytes at its start (so it is not all zeros). */
function sparseFile(name: string, bytes: number): string {
  const path = join(dir, name);
  writeFileSync(path, '{"question":"1+1?","answer":"2"}\n');
  truncateSync(path, bytes);
  return path;
}

describe('hashing never blocks the API', () => {
  const toClose: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const c of toClose) await c.close();
  });

  it('answers listRuns within 1 s while a 2 GB file is hashed for a concurrent validateConfig', async () => {
    const big = sparseFile('big.jsonl', 2 ** 31);
    const dbPath = join(dir, 'lab.db');
    const service = new LabWorkerClient({ dbPath, launcher: new NodeForkLauncher({ stdio: 'pipe' }), pathRoots: PathRoots.defaults(dbPath) });
    toClose.push(service);
    await service.ready;
    await service.call('listRuns', {}); // warm: the first call loads what it needs
    // serve's roots reach the worker: a file outside them is refused before it is read.
    const outside = (await service.call('validateConfig', { preset: 'math-quick', config: datasetAt('/etc/passwd') })) as ConfigValidation;
    expect(outside.errors).toEqual([
      { path: 'tasks.train.0.dataset', message: expect.stringMatching(/^"\/etc\/passwd" is outside the folders this server may read/) },
    ]);
    const started = Date.now();
    const validation = service.call('validateConfig', { preset: 'math-quick', config: datasetAt(big) }) as Promise<ConfigValidation>;
    await new Promise((r) => setTimeout(r, 300)); // the hash is under way
    const t0 = Date.now();
    expect(await service.call('listRuns', {})).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(1000);
    const v = await validation;
    // Generous: hashing 2 GB here takes several seconds; the answer comes at the bound (1 s) instead.
    expect(Date.now() - started).toBeLessThan(5000);
    expect(v.ok).toBe(false);
    expect(v.pending).toEqual([{ field: 'tasks.train.0.dataset', file: big, bytes: 2 ** 31, done: expect.any(Number) }]);
    expect(v.pending![0].done).toBeLessThan(2 ** 31);
    expect(v.errors).toEqual([
      { path: 'tasks.train.0.dataset', message: expect.stringMatching(/still reading ".*big\.jsonl" to hash it \(\d+% of 2\.1 GB\)/) },
    ]);
    // listRuns again, while the hash still runs on.
    const t1 = Date.now();
    await service.call('listRuns', {});
    expect(Date.now() - t1).toBeLessThan(1000);
  });

  it('hashes off the thread to the same digest, fills the memo, and answers ok once done', async () => {
    const path = sparseFile('mid.jsonl', 96 << 20);
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.from('tail'), 0, 4, (96 << 20) - 4); // bytes at the end too
    closeSync(fd);
    const reference = createHash('sha256').update(readFileSync(path)).digest('hex');
    const service = new LabService({ dbPath: join(dir, 'inproc.db'), launcher: new NodeForkLauncher({ stdio: 'pipe' }), hashWaitMs: 0 });
    toClose.push(service);
    const first = (await service.call('validateConfig', { preset: 'math-quick', config: datasetAt(path) })) as ConfigValidation;
    expect(first.pending?.[0]).toMatchObject({ field: 'tasks.train.0.dataset', bytes: 96 << 20 });
    let v = first;
    for (let i = 0; i < 600 && v.pending; i++) {
      await new Promise((r) => setTimeout(r, 50));
      v = (await service.call('validateConfig', { preset: 'math-quick', config: datasetAt(path) })) as ConfigValidation;
    }
    expect(v.errors).toEqual([]);
    expect((v.config as { tasks: { train: { sha256: string }[] } }).tasks.train[0].sha256).toBe(reference);
    expect(hashInBackground(path)).toBeNull(); // in the memo: nothing left to hash
    expect(fileSha256(path)).toBe(reference);
  });

  it('cancels: the hash rejects and the memo stays empty', async () => {
    const path = sparseFile('cancelled.jsonl', 2 ** 30);
    const job = hashInBackground(path)!;
    expect(job).not.toBeNull();
    expect(hashInBackground(path)).toBe(job); // one job per file, however many ask
    job.cancel();
    await expect(job.sha256).rejects.toBeInstanceOf(HashCancelled);
    const again = hashInBackground(path);
    expect(again).not.toBeNull();
    expect(again).not.toBe(job);
    again!.cancel();
    await expect(again!.sha256).rejects.toBeInstanceOf(HashCancelled);
  });
});
