/**
 * Pause, resume and stop through the host: a paused engine commits nothing until resumed, a
 * stop ends the run 'stopped' with only whole steps committed (a step in progress is abandoned),
 * and a stopped run resumes to completion. Also the engine's control state on its own, its pause
 * wait on a fake clock: no fixed sleeps, every wait is on an engine message or a clock tick.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EngineMessage } from '../../src/core/host/messages';
import { checkLaunchable } from '../../src/core/host/runs';
import { EngineControl, PAUSE_POLL_MS, StopRequested } from '../../src/engine/control';
import { duplicatedSteps, integrityCheck, isStep, newRun, startRecorded, tempLab, tinyConfig } from './helpers';

describe('engine control', () => {
  it('pauses between steps, resumes, stops, and resumes a stopped run to completion', async () => {
    const { dbPath, store } = tempLab();
    const runId = newRun(store, tinyConfig({ steps: 6, checkpointEvery: 1, update: { epochs: 2, miniBatches: 4 } }));
    const run = startRecorded(store, dbPath, runId, 'start');
    await run.waitFor(isStep(0), 'step 0');
    run.pause();
    const paused = await run.waitFor((m) => m.type === 'status' && m.status === 'paused', 'paused');
    expect(store.getRun(runId)!.status).toBe('paused');
    const atPause = store.committedSteps(runId);
    const stepsBefore = (upTo: EngineMessage) => run.messages.slice(0, run.messages.indexOf(upTo)).filter((m) => m.type === 'step');
    expect(stepsBefore(paused).map((m) => m.type === 'step' && m.step)).toEqual(atPause); // the store and the messages agree
    // Nothing trains while paused, up to the resume's acknowledgement: the engine sends 'running'
    // when its pause ends and before its next step, on the channel its step messages come on, so a
    // step committed while paused would be ordered before it. (That the pause holds over time, its
    // poll ticks included, until a resume or a stop, is for the fake-clock tests below.)
    run.resume();
    const resumedAt = run.messages.length;
    const isRunning = (m: EngineMessage) => m.type === 'status' && m.status === 'running' && run.messages.indexOf(m) > run.messages.indexOf(paused);
    expect(run.messages.filter(isRunning), 'running again before the resume was sent').toEqual([]);
    const running = await run.waitFor(isRunning, 'running again');
    expect(run.messages.indexOf(running)).toBeGreaterThanOrEqual(resumedAt);
    const next = await run.waitFor(isStep(atPause.length), `step ${atPause.length}`);
    expect(stepsBefore(running)).toHaveLength(atPause.length); // no step between the pause and the resume
    expect(next).toMatchObject({ type: 'step', step: atPause.length }); // the first step after the resume is the next one
    expect(run.messages.indexOf(next)).toBeGreaterThan(run.messages.indexOf(running));
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

  it('sees the STOP flag mid-step and ignores a stale one', () => {
    const flag = join(mkdtempSync(join(tmpdir(), 'srpo-ctl-')), 'STOP');
    writeFileSync(flag, 'stale');
    const ctl = new EngineControl(flag); // removes the stale flag
    expect(() => ctl.checkMidStep()).not.toThrow();
    writeFileSync(flag, 'now');
    expect(() => ctl.checkMidStep()).toThrow(StopRequested);
  });

  describe('a pause between steps, on a fake clock (its only clock is the flag-file poll timer, which the test ticks)', () => {
    // setImmediate stays real: betweenSteps yields once to the event loop before it pauses.
    beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }));
    afterEach(() => vi.useRealTimers());

    /** A paused control waiting between steps: the pause has begun (onPause(true) was called) when this resolves. */
    async function pausedBetweenSteps(flag = join(mkdtempSync(join(tmpdir(), 'srpo-ctl-')), 'STOP')) {
      const ctl = new EngineControl(flag);
      ctl.pause();
      const states: boolean[] = [];
      let began!: () => void;
      const pauseBegan = new Promise<void>((r) => (began = r));
      const outcome: { result?: string | null } = {};
      void ctl
        .betweenSteps((p) => {
          states.push(p);
          if (p) began();
        })
        .then((r) => (outcome.result = r));
      await pauseBegan;
      return { ctl, states, outcome };
    }

    /** Lets pending promise callbacks run without moving the clock (no poll tick fires). */
    const settle = () => vi.advanceTimersByTimeAsync(0);

    it('holds across its poll ticks, and a resume wakes it at once', async () => {
      const { ctl, states, outcome } = await pausedBetweenSteps();
      await vi.advanceTimersByTimeAsync(8 * PAUSE_POLL_MS);
      expect(outcome).toEqual({}); // still waiting after 8 polls
      expect(states).toEqual([true]);
      ctl.resume();
      await settle();
      expect(outcome).toEqual({ result: null }); // go on, without waiting for the next poll
      expect(states).toEqual([true, false]);
    });

    it('holds across its poll ticks, and a stop wakes it at once', async () => {
      const { ctl, states, outcome } = await pausedBetweenSteps();
      await vi.advanceTimersByTimeAsync(8 * PAUSE_POLL_MS);
      expect(outcome).toEqual({});
      ctl.stop('test');
      await settle();
      expect(outcome).toEqual({ result: 'test' });
      expect(states).toEqual([true]); // a stop ends the pause without reporting it over
    });

    it('sees a STOP flag written during the pause at its next poll tick (the ticks above are live)', async () => {
      const flag = join(mkdtempSync(join(tmpdir(), 'srpo-ctl-')), 'STOP');
      const { outcome } = await pausedBetweenSteps(flag);
      writeFileSync(flag, 'now');
      await settle();
      expect(outcome).toEqual({}); // no message woke it
      await vi.advanceTimersByTimeAsync(PAUSE_POLL_MS);
      expect(outcome).toEqual({ result: 'host request' });
    });
  });
});
