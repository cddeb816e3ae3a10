/**
 * An engine killed with SIGKILL mid-run: the host marks the run interrupted, resuming continues
 * from the last checkpoint, and in the end every step 0..steps is committed exactly once, the
 * database is intact, the config snapshot unchanged, and (CPU backends are deterministic) the
 * metrics and the evaluations' stored episodes equal those of the same run trained without interruption.
 */
import { describe, expect, it } from 'vitest';
import { duplicatedSteps, integrityCheck, isStep, newRun, startRecorded, tempLab, tinyConfig } from './helpers';

describe('engine crash (kill -9) and resume', () => {
  it('loses nothing committed, records nothing twice, and resumes to the same result', async () => {
    const { dbPath, store } = tempLab();
    const config = tinyConfig({ steps: 5, checkpointEvery: 1 });
    const runId = newRun(store, config);
    const cleanId = newRun(store, config);
    const snapshot = JSON.stringify(store.getRun(runId)!.config);

    // The reference run trains alongside in its own engine (two writers on one WAL database).
    const clean = startRecorded(store, dbPath, cleanId, 'start');
    const crashing = startRecorded(store, dbPath, runId, 'start');
    await crashing.waitFor(isStep(1), 'step 1 committed');
    // Somewhere in the next step (or between steps): wherever the kill lands must be safe.
    await new Promise((r) => setTimeout(r, Math.random() * 400));
    crashing.engine.kill('SIGKILL');
    const killed = await crashing.done;
    expect(killed.signal).toBe('SIGKILL');
    expect(killed.status).toBe('interrupted');
    expect(killed.error).toMatch(/engine exited without finishing the run \(signal SIGKILL\)/);
    const committedAtKill = store.committedSteps(runId);
    expect(committedAtKill.length).toBeGreaterThanOrEqual(2);
    expect(committedAtKill).toEqual(committedAtKill.map((_, i) => i));
    expect(integrityCheck(store)).toBe('ok');

    const resumed = startRecorded(store, dbPath, runId, 'resume');
    const ready = await resumed.waitFor((m) => m.type === 'ready', 'ready');
    expect(ready.type === 'ready' && ready.startStep).toBe(store.latestCheckpoint(runId) ? committedAtKill.length : 0);
    const end = await resumed.done;
    expect(end.status).toBe('completed');
    expect((await clean.done).status).toBe('completed');

    expect(store.committedSteps(runId)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(duplicatedSteps(store, runId)).toEqual([]);
    expect(integrityCheck(store)).toBe('ok');
    expect(JSON.stringify(store.getRun(runId)!.config)).toBe(snapshot);
    expect(store.getRun(runId)!.error).toBeNull();
    expect(store.checkpoints(runId).map((c) => c.step)).toEqual([0, 1, 2, 3, 4]);

    const keys = store.metricKeys(runId).filter((k) => !/^(time|memory)\//.test(k) && !/latency/.test(k));
    expect(keys).toEqual(expect.arrayContaining(['reward/mean', 'loss/total', 'eval/macro/avg']));
    for (const key of keys) {
      const a = store.metricSeries(runId, key).map((p) => [p.step, p.value]);
      const b = store.metricSeries(cleanId, key).map((p) => [p.step, p.value]);
      expect(a, key).toEqual(b);
    }
    expect(store.evaluations(runId).map(({ step, benchmark, avgAtN, passAtN }) => ({ step, benchmark, avgAtN, passAtN }))).toEqual(
      store.evaluations(cleanId).map(({ step, benchmark, avgAtN, passAtN }) => ({ step, benchmark, avgAtN, passAtN })),
    );
    // The evaluations' stored episodes (a kill may land between an evaluation's commit and its step's): the twin's rows.
    const evalEpisodes = (id: number) =>
      store.db.raw.prepare("SELECT step, key, reward, correct, final_answer FROM episodes WHERE run_id = ? AND split = 'eval' ORDER BY step, key").all(id);
    expect(evalEpisodes(runId).length).toBeGreaterThan(0);
    expect(evalEpisodes(runId)).toEqual(evalEpisodes(cleanId));
    store.close();
  }, 120_000);
});
