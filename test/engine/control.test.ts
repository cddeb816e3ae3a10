/**
 * Pause, resume and stop through the host: a paused engine commits nothing until resumed, a
 * stop ends the run 'stopped' with only whole steps committed (a step in progress is abandoned),
 * and a stopped run resumes to completion. Also the engine's control state on its own.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkLaunchable } from '../../src/core/host/runs';
import { EngineControl, StopRequested } from '../../src/engine/control';
import { duplicatedSteps, integrityCheck, isStep, newRun, startRecorded, tempLab, tinyConfig } from './helpers';

describe('engine control', () => {
  it('pauses between steps, resumes, stops, and resumes a stopped run to completion', async () => {
    const { dbPath, store } = tempLab();
    const runId = newRun(store, tinyConfig({ steps: 6, checkpointEvery: 1, update: { epochs: 2, miniBatches: 4 } }));
    const run = startRecorded(store, dbPath, runId, 'start');
    await run.waitFor(isStep(0), 'step 0');
    run.pause();
    await run.waitFor((m) => m.type === 'status' && m.status === 'paused', 'paused');
    expect(store.getRun(runId)!.status).toBe('paused');
    const atPause = store.committedSteps(runId);
    await new Promise((r) => setTimeout(r, 1500));
    expect(store.committedSteps(runId)).toEqual(atPause); // nothing trains while paused
    run.resume();
    const resumedAt = run.messages.length;
    await run.waitFor((m) => m.type === 'status' && m.status === 'running' && run.messages.indexOf(m) >= resumedAt, 'running again');
    await run.waitFor(isStep(atPause.length), `step ${atPause.length}`);
    run.stop(); // lands between steps or inside the next one; either way only whole steps stay
    const stopped = await run.done;
    expect(stopped.status).toBe('stopped');
    expect(stopped.exitCode).toBe(0);
    const committed = store.committedSteps(runId);
    expect(committed).toEqual(committed.map((_, i) => i));
    expect(committed.length).toBeGreaterThan(atPause.length);
    expect(committed.length).toBeLessThan(7);
    const how = run.messages.find((m) => m.type === 'log' && /^stopped/.test(m.line));
    expect(how && how.type === 'log' && how.line).toMatch(/^stopped (during a step, which was abandoned|before step \d+) \(host request\)/);

    expect(() => checkLaunchable(store.getRun(runId)!, 'start')).toThrow(/is stopped, not created; resume it/);
    const again = startRecorded(store, dbPath, runId, 'resume');
    expect((await again.done).status).toBe('completed');
    expect(store.committedSteps(runId)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(duplicatedSteps(store, runId)).toEqual([]);
    expect(integrityCheck(store)).toBe('ok');
    expect(() => checkLaunchable(store.getRun(runId)!, 'resume')).toThrow(/already completed/);
    store.close();
  }, 120_000);

  it('a stop between scheduled checkpoints saves one for the last committed step: the resume redoes nothing', async () => {
    const { dbPath, store } = tempLab();
    const runId = newRun(store, tinyConfig({ steps: 5, checkpointEvery: 0 }));
    const run = startRecorded(store, dbPath, runId, 'start');
    await run.waitFor(isStep(1), 'step 1');
    run.pause(); // the stop then lands between steps, where the weights are those of the last committed step
    await run.waitFor((m) => m.type === 'status' && m.status === 'paused', 'paused');
    run.stop();
    expect((await run.done).status).toBe('stopped');
    const committed = store.committedSteps(runId);
    const last = committed[committed.length - 1];
    expect(last).toBeGreaterThanOrEqual(1);
    expect(store.checkpoints(runId).map((c) => c.step)).toEqual([last]);
    const wallTimes = store.metricSeries(runId, 'time/step').map((p) => [p.step, p.value]);

    const again = startRecorded(store, dbPath, runId, 'resume');
    expect((await again.done).status).toBe('completed');
    expect(again.messages.some((m) => m.type === 'log' && m.line.includes(`resuming from the checkpoint of step ${last + 1} (after ${last + 1} updates`))).toBe(
      true,
    );
    expect(store.committedSteps(runId)).toEqual([0, 1, 2, 3, 4, 5]);
    // The steps before the stop were kept, not recomputed.
    expect(
      store
        .metricSeries(runId, 'time/step')
        .filter((p) => p.step <= last)
        .map((p) => [p.step, p.value]),
    ).toEqual(wallTimes);
    expect(duplicatedSteps(store, runId)).toEqual([]);
    expect(integrityCheck(store)).toBe('ok');
    store.close();
  }, 120_000);

  it('sees the STOP flag mid-step, ignores a stale one, and wakes a pause on stop', async () => {
    const flag = join(mkdtempSync(join(tmpdir(), 'srpo-ctl-')), 'STOP');
    writeFileSync(flag, 'stale');
    const ctl = new EngineControl(flag); // removes the stale flag
    expect(() => ctl.checkMidStep()).not.toThrow();
    writeFileSync(flag, 'now');
    expect(() => ctl.checkMidStep()).toThrow(StopRequested);

    const paused = new EngineControl(join(mkdtempSync(join(tmpdir(), 'srpo-ctl-')), 'STOP'));
    paused.pause();
    const states: boolean[] = [];
    const result = paused.betweenSteps((p) => states.push(p));
    setTimeout(() => paused.stop('test'), 50);
    expect(await result).toBe('test');
    expect(states).toEqual([true]);
  });
});
