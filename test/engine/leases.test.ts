/**
 * One live engine per run, with real engines (the reproductions of issue 12, items 2, 3 and 10):
 * - `resume --force` while the run's engine is alive is refused, naming the engine (pid, host,
 *   since, last heartbeat); the engine finishes the run with every step (before: a second engine
 *   truncated after the last checkpoint and steps went missing for good);
 * - the lab API's deleteRun (and resume, start) of a run the CLI is training is refused with a
 *   conflict naming the engine; the CLI finishes normally, nothing lost (before: the folder and
 *   rows went, the engine died on `updateRun: no run with id`, the CLI crashed with a TypeError);
 * - a dead holder's lease (its pid gone on this host) is taken over, and the takeover is said;
 * - `resume` of a completed run is refused at once, before anything is printed.
 * The engine's heartbeat advances while it trains (refreshed from inside the synchronous step).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/commands';
import type { CliIO } from '../../src/cli/io';
import { LabService } from '../../src/core/host/labService';
import { NodeForkLauncher } from '../../src/core/host/launcher';
import { LabStore } from '../../src/core/store';
import { acquireLease, getLease, pidAlive } from '../../src/core/store/leases';
import type { LabApiError } from '../../src/shared/api';
import { duplicatedSteps, integrityCheck, isStep, newRun, startRecorded, tempLab, TINY, tinyConfig } from './helpers';

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = { out: (l) => out.push(l), tty: null, launcher: new NodeForkLauncher({ stdio: 'pipe' }), onInterrupt: () => () => {} };
  const code = await runCli(argv, io, (l) => err.push(l));
  return { code, out: out.join('\n'), err: err.join('\n') };
}

async function rejection(p: Promise<unknown>): Promise<LabApiError> {
  try {
    await p;
  } catch (err) {
    return err as LabApiError;
  }
  throw new Error('expected a rejection');
}

async function until<T>(what: string, get: () => T | undefined | null | false, timeoutMs = 60_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const since = '\\(since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z, last heartbeat \\d+ s ago\\)';

describe('one live engine per run (leases)', () => {
  it('resume --force while the engine is alive is refused, naming it; the engine finishes with every step', async () => {
    const { dbPath, store } = tempLab();
    // Long enough that the engine is still training a second after step 0 (in-step heartbeats are
    // throttled to one a second; a run that ended first would release its lease with no newer beat).
    const steps = 30;
    const runId = newRun(store, tinyConfig({ steps, checkpointEvery: 1 }));
    const run = startRecorded(store, dbPath, runId, 'start');
    await run.waitFor(isStep(0), 'step 0');
    const beat0 = getLease(store.db, runId)!;
    expect(beat0).toMatchObject({ kind: 'engine', pid: run.engine.pid, host: hostname() });

    const forced = await cli(['resume', String(runId), '--force', '--db', dbPath]);
    expect(forced.code).toBe(1);
    expect(forced.err).toMatch(
      new RegExp(
        `^srpo-lab resume: run ${runId} is being trained by engine pid ${run.engine.pid} on host ${hostname()} ${since}; --force does not override a live engine`,
      ),
    );
    expect(forced.out).toBe(''); // refused before announcing what it would redo

    await run.waitFor(isStep(2), 'step 2');
    // Refreshed while the engine trains (heartbeats are throttled to one a second, so a fast
    // machine may commit steps 0-2 within one: wait for the next beat, not for a step count).
    const beat = await until(
      'a newer heartbeat',
      () => {
        const l = getLease(store.db, runId);
        if (!l && run.messages.some((m) => m.type === 'status' && m.status === 'completed'))
          throw new Error(
            `the run ended with no heartbeat after ${new Date(beat0.heartbeatAt).toISOString()}: it trained for less than the 1 s throttle; give it more steps`,
          );
        return l && l.heartbeatAt > beat0.heartbeatAt ? l.heartbeatAt : null;
      },
      30_000,
    );
    expect(beat).toBeGreaterThan(beat0.heartbeatAt);
    expect((await run.done).status).toBe('completed');
    expect(store.committedSteps(runId)).toEqual(Array.from({ length: steps + 1 }, (_, i) => i));
    expect(duplicatedSteps(store, runId)).toEqual([]);
    expect(integrityCheck(store)).toBe('ok');
    expect(getLease(store.db, runId)).toBeNull(); // released at the end
    store.close();
  }, 120_000);

  it("the lab API refuses to delete, resume or start a run the CLI is training; the CLI's run completes intact", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'srpo-lease-'));
    const db = join(dir, 'lab.db');
    const tinyFile = join(dir, 'tiny.json');
    writeFileSync(tinyFile, JSON.stringify({ ...TINY, policies: { init: null } }));
    const training = cli([
      'train',
      '--preset',
      'math-quick',
      '--config',
      tinyFile,
      '--db',
      db,
      '--set',
      'steps=3',
      '--set',
      'checkpointEvery=1',
      '--set',
      `policies.modelOverrides=${JSON.stringify(TINY.policies.modelOverrides)}`,
    ]);
    const watch = await until('the database', () => existsSync(db) && LabStore.open(db));
    await until('step 0 committed', () => watch.committedSteps(1).length > 0);
    const engine = getLease(watch.db, 1)!;
    expect(engine.kind).toBe('engine');
    expect(engine.pid).not.toBe(process.pid);

    const service = new LabService({ dbPath: db, launcher: new NodeForkLauncher({ stdio: 'pipe' }) });
    try {
      const del = await rejection(service.call('deleteRun', { runId: 1 }));
      expect(del.code).toBe('conflict');
      expect(del.message).toMatch(
        new RegExp(`^run 1 is being trained by engine pid ${engine.pid} on host ${hostname()} ${since}; stop it before deleting it$`),
      );
      const resume = await rejection(service.call('resumeRun', { runId: 1, force: true }));
      expect(resume.code).toBe('conflict');
      expect(resume.message).toMatch(new RegExp(`^run 1 is being trained by engine pid ${engine.pid}`));
      expect((await rejection(service.call('startRun', { runId: 1 }))).code).toBe('conflict');
      expect((await service.call('getRun', { runId: 1 })).status).toBe('running');
    } finally {
      await service.close();
    }

    const done = await training;
    expect(done.err).toBe('');
    expect(done.code).toBe(0);
    expect(watch.getRun(1)!.status).toBe('completed');
    expect(watch.committedSteps(1)).toEqual([0, 1, 2, 3]);
    const dbDir = dirname(resolve(db));
    const ckpts = watch.checkpoints(1).map((c) => (isAbsolute(c.path) ? c.path : resolve(dbDir, c.path)));
    expect(ckpts).toHaveLength(3);
    expect(ckpts.every((p) => existsSync(p))).toBe(true);
    watch.close();
  }, 120_000);

  it("takes over a dead engine's lease (its pid gone on this host) and says so", async () => {
    const { dbPath, store } = tempLab();
    const runId = newRun(store, tinyConfig({ steps: 1 }));
    // A host that died with its engine: the run still says running, the lease names a gone pid.
    store.updateRun(runId, { status: 'running', startedAt: Date.now() });
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    expect(pidAlive(gone)).toBe(false);
    acquireLease(store.db, runId, { token: 'dead-engine', pid: gone, host: hostname() }, 'engine');

    const resumed = await cli(['resume', String(runId), '--force', '--db', dbPath]);
    expect(resumed.err).toBe('');
    expect(resumed.code).toBe(0);
    expect(resumed.out).toMatch(
      new RegExp(
        `took over the lease of run ${runId} from a dead holder, being trained by engine pid ${gone} on host ${hostname()} ${since}: process ${gone} no longer exists on this host`,
      ),
    );
    expect(store.getRun(runId)!.status).toBe('completed');
    expect(store.committedSteps(runId)).toEqual([0, 1]);
    expect(getLease(store.db, runId)).toBeNull();
    store.close();
  }, 120_000);

  it('an engine whose lease was taken over stops writing: no status, no stop checkpoint, not marked interrupted', async () => {
    const { dbPath, store } = tempLab();
    const runId = newRun(store, tinyConfig({ steps: 6, checkpointEvery: 0 }));
    const run = startRecorded(store, dbPath, runId, 'start');
    await run.waitFor(isStep(0), 'step 0');
    run.pause(); // only the heartbeat timer runs now
    await run.waitFor((m) => m.type === 'status' && m.status === 'paused', 'paused');
    const committed = store.committedSteps(runId);
    // Someone judged the engine dead and took the run (here: this process, alive).
    store.db.raw
      .prepare("UPDATE run_leases SET holder = 'thief', kind = 'engine', pid = ?, heartbeat_at = ? WHERE run_id = ?")
      .run(process.pid, Date.now(), runId);
    const end = await run.done;
    expect(end.exitCode).toBe(1);
    expect(
      run.messages.some(
        (m) =>
          m.type === 'log' &&
          m.level === 'error' &&
          m.line.startsWith(`lost the lease of run ${runId} (it is now being trained by engine pid ${process.pid} on host ${hostname()}`),
      ),
    ).toBe(true);
    expect(run.messages.filter((m) => m.type === 'status').map((m) => m.type === 'status' && m.status)).toEqual(['running', 'paused']);
    expect(store.getRun(runId)!.status).toBe('paused'); // left as the new holder will find it
    expect(store.committedSteps(runId)).toEqual(committed);
    expect(store.checkpoints(runId)).toEqual([]);
    expect(getLease(store.db, runId)!.holder).toBe('thief');
    store.close();
  }, 120_000);

  it('resume of a completed run is refused at once, before anything is printed', async () => {
    const { dbPath, store } = tempLab();
    const runId = newRun(store, tinyConfig({ steps: 1 }));
    store.updateRun(runId, { status: 'completed' });
    const r = await cli(['resume', String(runId), '--db', dbPath]);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`srpo-lab resume: run ${runId} is already completed`);
    expect(r.out).toBe('');
    store.close();
  });
});
