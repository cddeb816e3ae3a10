/**
 * Stop is always resumable without loss (issue 17, item 1). A run of 8 steps with checkpointEvery
 * 10 (no scheduled checkpoint before the end) is stopped at a chosen point of step 4:
 * - during step 4's update: the update finishes, step 4 commits, a checkpoint of step 4 is
 *   written, and the resume starts at step 5 with steps 0-4 kept as they were;
 * - before step 4's update (rollouts done, weights untouched): step 4 is abandoned, step 3 is
 *   checkpointed, and the resume redoes step 4 only (its early-committed evaluation included).
 * Either way the resumed run ends equal to an uninterrupted twin (the lab's exact-resume
 * guarantee on CPU backends, as in crash.test.ts), and the resume plan says what it will redo.
 *
 * The stopped runs run their engine in this process (runEngine with a control that requests the
 * stop at the chosen phase, deterministically); the twin and the resumes are real forked engines.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngineMessage } from '../../src/core/host/messages';
import { resumePlanFor } from '../../src/core/host/runs';
import type { LabStore } from '../../src/core/store';
import { EngineControl } from '../../src/engine/control';
import { runEngine } from '../../src/engine/runEngine';
import { duplicatedSteps, integrityCheck, newRun, startRecorded, tempLab, tinyConfig } from './helpers';

/** Requests a stop once step `at` reaches `phase` (before its update, or inside it). */
class StopAt extends EngineControl {
  private armed = false;
  private inUpdate = false;
  constructor(private readonly phase: 'before-update' | 'update') {
    super(join(mkdtempSync(join(tmpdir(), 'srpo-stop-')), 'STOP'));
  }
  /** Called from the engine's send when the step before the target commits. */
  arm(): void {
    this.armed = true;
  }
  override checkMidStep(): void {
    if (this.armed && this.phase === 'before-update') this.stop('test stop');
    super.checkMidStep(); // (calls stopRequested: inUpdate is set only after it)
    if (this.armed) this.inUpdate = true; // the next calls come from the update's mini-batches
  }
  override stopRequested(): string | null {
    if (this.armed && this.inUpdate && this.phase === 'update') this.stop('test stop');
    return super.stopRequested();
  }
}

const CONFIG = tinyConfig({ steps: 8, checkpointEvery: 10, update: { epochs: 2, miniBatches: 2 } });
const compared = (store: LabStore, runId: number) => store.metricKeys(runId).filter((k) => !/^(time|memory)\//.test(k) && !/latency/.test(k));
const series = (store: LabStore, runId: number, key: string) => store.metricSeries(runId, key).map((p) => [p.step, p.value]);

async function stopAtStep4(dbPath: string, runId: number, phase: 'before-update' | 'update') {
  const ctl = new StopAt(phase);
  const messages: EngineMessage[] = [];
  const result = await runEngine(
    { dbPath, runId, mode: 'start' },
    (m) => {
      messages.push(m);
      if (m.type === 'step' && m.step === 3) ctl.arm();
    },
    ctl,
  );
  return { result, messages, logs: messages.flatMap((m) => (m.type === 'log' ? [m.line] : [])) };
}

describe('stop and resume without loss', () => {
  it('a stop during step 4 (of 8, checkpointEvery 10) finishes it, checkpoints it, and resumes at step 5 equal to the uninterrupted twin', async () => {
    const { dbPath, store } = tempLab();
    const runId = newRun(store, CONFIG);
    const twinId = newRun(store, CONFIG);
    const twin = startRecorded(store, dbPath, twinId, 'start');

    const { result, logs } = await stopAtStep4(dbPath, runId, 'update');
    expect(result.status).toBe('stopped');
    expect(logs.some((l) => /stop requested during update 5 \(test stop\): finishing the step/.test(l))).toBe(true);
    expect(store.getRun(runId)!.status).toBe('stopped');
    expect(store.committedSteps(runId)).toEqual([0, 1, 2, 3, 4]);
    expect(store.checkpoints(runId).map((c) => c.step)).toEqual([4]);
    const kept = series(store, runId, 'time/step');
    expect(kept.map(([s]) => s)).toEqual([0, 1, 2, 3, 4]);

    const plan = resumePlanFor(store, runId);
    // In steps (updates done): 5 updates are committed and checkpointed; the resume runs step 6 next.
    expect(plan).toMatchObject({ fromStep: 6, checkpointStep: 5, redo: [] });
    expect(plan.text).toMatch(/continues at step 6 from the checkpoint of step 5 .*nothing committed is redone/);

    const resumed = startRecorded(store, dbPath, runId, 'resume');
    const ready = await resumed.waitFor((m) => m.type === 'ready', 'ready');
    expect(ready.type === 'ready' && ready.startStep).toBe(5);
    expect((await resumed.done).status).toBe('completed');
    expect((await twin.done).status).toBe('completed');

    expect(store.committedSteps(runId)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    // Steps 0-4 were kept as committed before the stop, not recomputed.
    expect(series(store, runId, 'time/step').filter(([s]) => (s as number) <= 4)).toEqual(kept);
    expect(duplicatedSteps(store, runId)).toEqual([]);
    expect(integrityCheck(store)).toBe('ok');
    const keys = compared(store, runId);
    expect(keys).toEqual(expect.arrayContaining(['reward/mean', 'loss/total', 'eval/macro/avg']));
    expect(keys.sort()).toEqual(compared(store, twinId).sort());
    for (const key of keys) expect(series(store, runId, key), key).toEqual(series(store, twinId, key));
    const evals = (id: number) => store.evaluations(id).map(({ step, benchmark, avgAtN, passAtN }) => ({ step, benchmark, avgAtN, passAtN }));
    expect(evals(runId)).toEqual(evals(twinId));
    store.close();
  }, 240_000);

  it("a stop before step 4's update abandons it (weights untouched), checkpoints step 3, and the resume redoes step 4 only", async () => {
    const { dbPath, store } = tempLab();
    const runId = newRun(store, CONFIG);
    const twinId = newRun(store, CONFIG);
    const twin = startRecorded(store, dbPath, twinId, 'start');

    const { result, logs } = await stopAtStep4(dbPath, runId, 'before-update');
    expect(result.status).toBe('stopped');
    expect(logs.some((l) => /^stopped during a step, which was abandoned \(test stop\) before its update/.test(l))).toBe(true);
    expect(logs.some((l) => /saved a checkpoint of the last committed step/.test(l))).toBe(true);
    expect(store.committedSteps(runId)).toEqual([0, 1, 2, 3]);
    expect(store.checkpoints(runId).map((c) => c.step)).toEqual([3]);
    // Step 4's scheduled evaluation (eval.every 2) was committed ahead of the step, before the stop.
    expect(store.evaluations(runId).map((e) => e.step)).toContain(4);

    const plan = resumePlanFor(store, runId);
    expect(plan).toMatchObject({ fromStep: 5, checkpointStep: 4, redo: [] }); // steps: 4 updates kept, update 5 redone

    const resumed = startRecorded(store, dbPath, runId, 'resume');
    const ready = await resumed.waitFor((m) => m.type === 'ready', 'ready');
    expect(ready.type === 'ready' && ready.startStep).toBe(4);
    expect((await resumed.done).status).toBe('completed');
    expect((await twin.done).status).toBe('completed');
    expect(store.committedSteps(runId)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(duplicatedSteps(store, runId)).toEqual([]);
    expect(integrityCheck(store)).toBe('ok');
    for (const key of compared(store, runId)) expect(series(store, runId, key), key).toEqual(series(store, twinId, key));
    expect(store.evaluations(runId).map((e) => [e.step, e.benchmark, e.avgAtN])).toEqual(store.evaluations(twinId).map((e) => [e.step, e.benchmark, e.avgAtN]));
    store.close();
  }, 240_000);

  it('the resume plan names the committed steps a resume from an older checkpoint recomputes', () => {
    const { store } = tempLab();
    const runId = newRun(store, CONFIG);
    for (let s = 0; s <= 6; s++) {
      const checkpoint = s === 2 ? { checkpoint: { path: 'ckpt-2' } } : {};
      store.writeStep(runId, { step: s, wallTime: Date.now(), metrics: { 'time/step': 1 }, episodes: [], tokens: false, ...checkpoint });
    }
    const plan = resumePlanFor(store, runId);
    // Records 0-6 = steps 1-7; the checkpoint of record 2 is step 3: steps 4-7 are recomputed.
    expect(plan).toMatchObject({ fromStep: 4, checkpointStep: 3, redo: [4, 5, 6, 7] });
    expect(plan.text).toMatch(/steps 4-7 \(4 steps\) were committed after it and will be recomputed/);
    store.close();
  });
});
