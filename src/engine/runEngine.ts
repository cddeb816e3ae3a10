/**
 * One run in one engine process: open the store (the run's only write connection), start the
 * backend, build the Trainer (fresh, or from the run's latest checkpoint with everything after it
 * truncated), run the remaining steps, report progress, obey pause/resume/stop, and leave the run
 * with a final status: completed, stopped, or failed with the error's message. A step is in the
 * store entirely or not at all (one transaction), so stopping or failing mid-step loses only the
 * uncommitted step, and resuming from a checkpoint redoes exactly the steps after it.
 *
 * Not here: the process wiring (main.ts: argv, IPC, signals), starting engines (src/core/host).
 * Tests: test/engine/*.test.ts run it for real in a forked process.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { resolveRunConfig, type RunConfig } from '../core/config';
import { KEY_METRICS, type EngineMessage, type EngineStatus } from '../core/host/messages';
import { runDirFor, stopFlagPath } from '../core/host/paths';
import { initBackend } from '../core/models/backend';
import { LabStore } from '../core/store';
import { Trainer } from '../core/train/trainer';
import { EngineControl, StopRequested } from './control';

/** Where relative `policies.init` paths (the presets' resources/warmstart/...) resolve: the lab's root. */
export const LAB_ROOT = resolve(__dirname, '../..');

export interface EngineRequest {
  dbPath: string;
  runId: number;
  mode: 'start' | 'resume';
}

export interface EngineResult {
  status: Extract<EngineStatus, 'completed' | 'stopped' | 'failed'>;
  error?: string;
}

export async function runEngine(req: EngineRequest, send: (msg: EngineMessage) => void, control?: EngineControl): Promise<EngineResult> {
  const log = (line: string, level: 'info' | 'warn' | 'error' = 'info'): void => send({ type: 'log', level, line });
  let store: LabStore;
  try {
    store = LabStore.open(req.dbPath);
  } catch (err) {
    // No store, no run to mark: say why and exit non-zero; the host marks the run interrupted.
    const error = (err as Error).message;
    log(error, 'error');
    return { status: 'failed', error };
  }
  const run = store.getRun(req.runId);
  if (!run) {
    store.close();
    const error = `no run with id ${req.runId} in ${req.dbPath}`;
    log(error, 'error');
    return { status: 'failed', error };
  }

  const runDir = runDirFor(req.dbPath, req.runId);
  mkdirSync(runDir, { recursive: true });
  const ctl = control ?? new EngineControl(stopFlagPath(runDir));
  const setStatus = (status: EngineStatus, error?: string): void => {
    const ended = status === 'completed' || status === 'stopped' || status === 'failed';
    store.updateRun(req.runId, { status, error: error ?? null, endedAt: ended ? Date.now() : null });
    send({ type: 'status', status, ...(error !== undefined ? { error } : {}) });
  };

  let trainer: Trainer | null = null;
  try {
    store.updateRun(req.runId, { startedAt: run.startedAt ?? Date.now() });
    setStatus('running');
    const config: RunConfig = resolveRunConfig(run.config);
    const backend = await initBackend({ requested: config.backend });
    store.updateRun(req.runId, { backend: backend.name });

    const resume = prepareStart(store, req, dirname(resolve(req.dbPath)));
    if (resume) log(`resuming from the checkpoint of step ${resume.step} (${resume.dir})`);
    trainer = new Trainer({ config, runDir, store, runId: req.runId, baseDir: LAB_ROOT, resume: resume ?? undefined });
    send({ type: 'ready', runId: req.runId, backend, startStep: trainer.startStep, totalSteps: config.steps });

    for (const step of trainer.remainingSteps()) {
      const stop = await ctl.betweenSteps((paused) => setStatus(paused ? 'paused' : 'running'));
      if (stop !== null) return finish('stopped', `stopped before step ${step} (${stop})`);
      const summary = trainer.step(step, () => ctl.checkMidStep());
      const metrics: Record<string, number> = {};
      for (const k of KEY_METRICS) if (k in summary.metrics) metrics[k] = summary.metrics[k];
      send({ type: 'step', step, final: summary.final, totalSteps: config.steps, metrics, wallMs: summary.wallMs, checkpoint: summary.checkpoint });
    }
    return finish('completed');
  } catch (err) {
    if (err instanceof StopRequested) return finish('stopped', `stopped during a step, which was abandoned (${err.reason})`);
    const error = (err as Error)?.message ?? String(err);
    log(error, 'error');
    return finish('failed', error);
  } finally {
    trainer?.dispose();
    ctl.dispose();
    store.close();
  }

  function finish(status: EngineResult['status'], detail?: string): EngineResult {
    if (status === 'stopped') {
      if (detail) log(detail);
      try {
        const saved = trainer?.saveStopCheckpoint();
        if (saved) log(`saved a checkpoint of the last committed step for the resume (${saved})`);
      } catch (err) {
        log(`could not save a checkpoint at the stop (the resume starts from the last scheduled one): ${(err as Error).message}`, 'error');
      }
      setStatus('stopped');
      return { status };
    }
    setStatus(status, detail);
    return { status, ...(detail !== undefined ? { error: detail } : {}) };
  }
}

/**
 * Where the trainer starts. start: a run with nothing committed (anything after step -1 is
 * removed, which is nothing). resume: the latest checkpoint, every step after it removed; with
 * no checkpoint, everything removed and a fresh start at step 0.
 */
function prepareStart(store: LabStore, req: EngineRequest, dbDir: string): { dir: string; step: number } | null {
  if (req.mode === 'start') {
    const committed = store.committedSteps(req.runId);
    if (committed.length > 0) throw new Error(`run ${req.runId} already has ${committed.length} committed steps; resume it instead of starting it`);
    store.truncateAfter(req.runId, -1);
    return null;
  }
  const ckpt = store.latestCheckpoint(req.runId);
  if (!ckpt) {
    store.truncateAfter(req.runId, -1);
    return null;
  }
  const dir = isAbsolute(ckpt.path) ? ckpt.path : resolve(dbDir, ckpt.path);
  if (!existsSync(dir)) throw new Error(`checkpoint of step ${ckpt.step} is missing on disk (${dir}); cannot resume run ${req.runId}`);
  store.truncateAfter(req.runId, ckpt.step);
  return { dir, step: ckpt.step };
}
