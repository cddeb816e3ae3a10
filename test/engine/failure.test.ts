/**
 * A run whose trainer throws ends 'failed' with the error's message (not 'interrupted'), keeps
 * every step committed before the error, and keeps its config snapshot.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDirFor } from '../../src/core/host/paths';
import { integrityCheck, newRun, startRecorded, tempLab, tinyConfig } from './helpers';

describe('engine failure', () => {
  it('fails the run with the message when the warm start is missing', async () => {
    const { dbPath, store } = tempLab();
    const config = tinyConfig({ steps: 2, policies: { init: '/nonexistent/warmstart/math-tiny' } });
    const runId = newRun(store, config);
    const run = startRecorded(store, dbPath, runId, 'start');
    const end = await run.done;
    expect(end.status).toBe('failed');
    expect(end.exitCode).toBe(1);
    expect(end.error).toMatch(
      /field "policies\.init" = "\/nonexistent\/warmstart\/math-tiny": model folder \/nonexistent\/warmstart\/math-tiny does not exist/,
    );
    expect(run.messages).toContainEqual(expect.objectContaining({ type: 'status', status: 'failed', error: end.error }));
    const stored = store.getRun(runId)!;
    expect(stored.backend).toBe('wasm');
    expect(stored.endedAt).not.toBeNull();
    expect(JSON.stringify(stored.config)).toBe(JSON.stringify({ ...config, name: stored.name }));
    store.close();
  }, 60_000);

  it('keeps the steps committed before an error mid-run', async () => {
    const { dbPath, store } = tempLab();
    const runId = newRun(store, tinyConfig({ steps: 4, checkpointEvery: 2 }));
    // The first checkpoint (after step 1) cannot be written: `checkpoints` is a file.
    mkdirSync(runDirFor(dbPath, runId), { recursive: true });
    writeFileSync(join(runDirFor(dbPath, runId), 'checkpoints'), 'not a directory');
    const end = await startRecorded(store, dbPath, runId, 'start').done;
    expect(end.status).toBe('failed');
    expect(end.error).toMatch(/ENOTDIR|EEXIST|not a directory/i);
    expect(store.committedSteps(runId)).toEqual([0]);
    expect(integrityCheck(store)).toBe('ok');
    store.close();
  }, 60_000);
});
