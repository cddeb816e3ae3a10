/**
 * Runs through the desktop app, from the BUILT bundles under the stand-in Electron: a run created
 * through the page's `window.lab` trains in a utility process running out/main/engine.js (a Node
 * fork that has only Electron's `process.parentPort` to talk through, see utilityParentPort.cjs),
 * its progress, points and status pushes reach the window, pause / resume / stop work, and closing
 * the last window quits the app the way Electron does (window-all-closed -> app.quit ->
 * before-quit): the engine is stopped between steps, exits 0, the run ends `stopped` with a
 * checkpoint, and the next start of the app resumes it to completion. An engine killed mid-run
 * leaves its run interrupted, with the reason pushed, and the run resumes.
 * The tiny math-quick config of the engine tests (~1 s a step on 2 CPU cores).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LabPush, RunDetail } from '../../src/shared/api';
import { BUNDLES, bootDesktopApp, ensureBuilt, removeTempFolders, type DesktopApp } from './desktopApp';

const TINY = {
  policies: { init: null, modelOverrides: { dModel: 32, nLayers: 1, nHeads: 2, contextLength: 192 } },
  rollout: { tasksPerStep: 2, groupSize: 2, maxNewTokens: 8 },
  eval: { every: 2, n: 2, queries: 2 },
};

type Progress = Extract<LabPush, { type: 'progress' }>;
type Status = Extract<LabPush, { type: 'status' }>;
const isProgress =
  (runId: number, minStep = 0) =>
  (p: LabPush): p is Progress =>
    p.type === 'progress' && p.runId === runId && p.step >= minStep;
/** A status push of the run; with `since`, only one received after that many pushes. */
const isStatus =
  (runId: number, status: string, since?: { pushes: LabPush[]; count: number }) =>
  (p: LabPush): p is Status =>
    p.type === 'status' && p.runId === runId && p.status === status && (!since || since.pushes.indexOf(p) >= since.count);

/** The status push that ends a run (whichever end it is), so a failure shows at once with its reason. */
const isEnd =
  (runId: number) =>
  (p: LabPush): p is Status =>
    p.type === 'status' && p.runId === runId && ['completed', 'stopped', 'failed', 'interrupted'].includes(p.status);

/** Waits for a step of the run at or after `minStep`; an end of the run before it fails at once with its reason. */
async function stepOrEnd(app: DesktopApp, runId: number, minStep = 0, timeoutMs = 120_000): Promise<Progress> {
  const p = await app.waitForPush(`step ${minStep} of run ${runId}`, (q) => isProgress(runId, minStep)(q) || isEnd(runId)(q), timeoutMs);
  if (p.type !== 'progress') throw new Error(`run ${runId} ended before step ${minStep}: ${JSON.stringify(p)}`);
  return p;
}

// The bundles are built first when missing or older than their sources (CI has built them).
beforeAll(() => ensureBuilt(), 240_000);
afterAll(() => removeTempFolders());

describe('runs in the desktop app: utility-process engines (built bundles, stand-in Electron)', () => {
  let app: DesktopApp;
  /** The run the first test trained (its pushes are checked again by the second). */
  let twoStepRun = 0;

  beforeAll(async () => {
    app = await bootDesktopApp();
  }, 60_000);

  afterAll(async () => {
    if (app && !app.electron.app.hasQuit) await app.quit();
    await app?.electron.dispose();
  });

  it('a run created through IPC trains 2 steps in a utility process, and its pushes reach the window', async () => {
    const { runId } = await app.call<{ runId: number }>('createRun', { preset: 'math-quick', config: { ...TINY, steps: 2, name: 'two-steps' }, start: true });
    const end = await app.waitForPush('the run to end', isEnd(runId), 120_000);
    expect(end).toMatchObject({ status: 'completed', error: null });

    // The engine: the built bundle, forked as a utility process for this run, ended cleanly.
    const forks = app.electron.forks.filter((f) => f.args[1] === String(runId));
    expect(forks).toHaveLength(1);
    const [engine] = forks;
    expect(engine.modulePath).toBe(BUNDLES.engine);
    expect(engine.args.slice(1)).toEqual([String(runId), 'start']);
    expect(String(engine.options.serviceName)).toContain(`run ${runId}`);
    expect((engine.options.env as Record<string, string>).ELECTRON_RUN_AS_NODE).toBeUndefined();
    await expect.poll(() => engine.child.exit, { timeout: 10_000 }).toEqual({ code: 0, signal: null });

    // What the page saw: a progress push per step (2 training steps, then the final evaluation
    // step, as in test/engine/control.test.ts), points for the curves, running then completed.
    const progress = app.pushes.filter(isProgress(runId));
    expect(progress.map((p) => p.step)).toEqual([0, 1, 2]);
    expect(progress.every((p) => p.totalSteps === 2)).toBe(true);
    expect(progress.at(-1)!.final).toBe(true);
    expect(progress[0].metrics['reward/mean']).toEqual(expect.any(Number));
    expect(app.pushes.some((p) => p.type === 'points' && p.runId === runId && Object.keys(p.points).length > 0)).toBe(true);
    const statuses = app.pushes.filter((p): p is Status => p.type === 'status' && p.runId === runId).map((p) => p.status);
    expect(statuses[0]).toBe('running');
    expect(statuses.at(-1)).toBe('completed');
    // Nothing was refused on the way (an engine message that fails validation arrives as a log error).
    expect(app.pushes.filter((p) => p.type === 'log' && p.level === 'error')).toEqual([]);

    // The engine's exit reached the worker before this call did: its last pushes are out by the answer.
    const run = await app.call<RunDetail>('getRun', { runId });
    await new Promise((r) => setImmediate(r));
    expect(run).toMatchObject({ status: 'completed', lastStep: 2, active: false, error: null });
    expect(run.backend).toEqual(expect.any(String));
    twoStepRun = runId;
  }, 150_000);

  it('tells the window a completed run ended without an error (every status push of its end)', () => {
    expect(twoStepRun, 'the run of the test before').toBeGreaterThan(0);
    // The page shows a status push's error next to the run: a completed run must not get one.
    const ends = app.pushes.filter((p): p is Status => p.type === 'status' && p.runId === twoStepRun && p.status === 'completed');
    expect(ends.length).toBeGreaterThan(0);
    expect(ends.filter((p) => p.error !== null)).toEqual([]);
  });

  it('pause, resume and stop from the window reach the engine', async () => {
    const { runId } = await app.call<{ runId: number }>('createRun', { preset: 'math-quick', config: { ...TINY, steps: 40, name: 'controlled' }, start: true });
    await stepOrEnd(app, runId);

    await app.call('pauseRun', { runId });
    const paused = await app.waitForPush('paused', isStatus(runId, 'paused'), 30_000);
    expect((await app.call<RunDetail>('getRun', { runId })).status).toBe('paused');
    const progressBefore = (p: LabPush) => app.pushes.slice(0, app.pushes.indexOf(p)).filter(isProgress(runId));
    const atPause = progressBefore(paused);
    // Nothing trains while paused, up to the resume's acknowledgement: the engine sends 'running'
    // when its pause ends and before its next step, and its messages reach the window in the order
    // sent, so a step trained while paused would be pushed before it. (That a pause holds over time
    // until a resume or a stop is test/engine/control.test.ts's, on a fake clock.)
    const since = { pushes: app.pushes, count: app.pushes.length };
    expect(app.pushes.slice(app.pushes.indexOf(paused)).filter(isStatus(runId, 'running')), 'running again before the resume').toEqual([]);
    await app.call('resumeRun', { runId });
    const running = await app.waitForPush('running again', isStatus(runId, 'running', since), 30_000);
    expect(progressBefore(running)).toEqual(atPause);
    const next = await stepOrEnd(app, runId, atPause.at(-1)!.step + 1, 60_000);
    expect(next.step).toBe(atPause.at(-1)!.step + 1); // the first step after the resume is the next one
    expect(app.pushes.indexOf(next)).toBeGreaterThan(app.pushes.indexOf(running));

    await app.call('stopRun', { runId });
    expect(await app.waitForPush('the run to end', isEnd(runId), 60_000)).toMatchObject({ status: 'stopped' });
    const engine = app.electron.forks.find((f) => f.args[1] === String(runId))!;
    await expect.poll(() => engine.child.exit, { timeout: 10_000 }).toEqual({ code: 0, signal: null });
    const run = await app.call<RunDetail>('getRun', { runId });
    expect(run.status).toBe('stopped');
    expect(run.active).toBe(false);
    expect(run.lastStep).toBeLessThan(40);
  }, 240_000);

  it('an engine that dies mid-run leaves its run interrupted, says why, and the run resumes', async () => {
    const { runId } = await app.call<{ runId: number }>('createRun', { preset: 'math-quick', config: { ...TINY, steps: 6, name: 'killed' }, start: true });
    await stepOrEnd(app, runId);
    const engine = app.electron.forks.find((f) => f.args[1] === String(runId))!;
    // Out of memory, a driver crash: the utility process is gone without a word.
    engine.child.child.kill('SIGKILL');
    const end = await app.waitForPush('the run to end', isEnd(runId), 30_000);
    expect(end.status).toBe('interrupted');
    expect(end.error).toMatch(/engine exited without finishing the run/);
    expect((await app.call<RunDetail>('getRun', { runId })).active).toBe(false);
    const since = app.pushes.length;
    await app.call('resumeRun', { runId });
    expect(await app.waitForPush('the resumed run to end', (p) => isEnd(runId)(p) && app.pushes.indexOf(p) >= since, 120_000)).toMatchObject({
      status: 'completed',
    });
  }, 200_000);
});

describe('quitting the desktop app with a run in progress', () => {
  it('closing the last window quits: the engine stops between steps, the run ends stopped, and resumes in the next session', async () => {
    const first = await bootDesktopApp();
    let runId: number;
    try {
      ({ runId } = await first.call<{ runId: number }>('createRun', {
        preset: 'math-quick',
        config: { ...TINY, steps: 6, checkpointEvery: 0, name: 'quit-mid-run' },
        start: true,
      }));
      await stepOrEnd(first, runId);
      // The user closes the only window (Linux): window-all-closed -> app.quit() -> before-quit.
      first.window.close();
      await first.quitted(30_000);
      // before-quit was held once for the engines to stop, then the quit went through.
      expect(first.electron.app.quitCalls).toBe(2);
      const engine = first.electron.forks.find((f) => f.args[1] === String(runId))!;
      expect(engine.child.exit).toEqual({ code: 0, signal: null });
    } finally {
      await first.electron.dispose();
    }

    // The next session, on the same userData: the run is stopped, with a checkpoint to resume from.
    const second = await bootDesktopApp({ userData: first.userData });
    try {
      const stopped = await second.call<RunDetail>('getRun', { runId });
      expect(stopped.status).toBe('stopped');
      expect(stopped.error).toBeNull();
      expect(stopped.lastStep).toBeGreaterThanOrEqual(0);
      expect(stopped.lastStep).toBeLessThan(6);
      expect(stopped.checkpoints.map((c) => c.step)).toContain(stopped.lastStep);
      await second.call('resumeRun', { runId });
      expect(await second.waitForPush('the resumed run to end', isEnd(runId), 120_000)).toMatchObject({ status: 'completed', error: null });
      const resumed = second.electron.forks.find((f) => f.args[1] === String(runId))!;
      expect(resumed.args.slice(1)).toEqual([String(runId), 'resume']);
      const done = await second.call<RunDetail>('getRun', { runId });
      expect(done).toMatchObject({ status: 'completed', lastStep: 6 });
      // The resume started after the stop's checkpoint: the steps it pushed are the ones left.
      const rest = Array.from({ length: 6 - stopped.lastStep }, (_, i) => stopped.lastStep + 1 + i);
      expect(second.pushes.filter(isProgress(runId)).map((p) => p.step)).toEqual(rest);
      await second.quit();
    } finally {
      await second.electron.dispose();
    }
  }, 300_000);
});
