/**
 * One run in one engine process: open the store (the run's only write connection), start the
 * backend, build the Trainer (fresh, or from the run's latest checkpoint with everything after it
 * truncated), run the remaining steps, report progress, obey pause/resume/stop, and leave the run
 * with a final status: completed, stopped, or failed with the error's message. A step is in the
 * store entirely or not at all (one transaction; its scheduled evaluation goes first, see
 * Trainer), so failing mid-step loses only the uncommitted step. A stop never loses anything: it
 * lands between steps, or before a step's update (the step is abandoned, the weights untouched),
 * or during an update (the update finishes and the step commits first); then the last committed
 * step is checkpointed, so the resume starts right after it and redoes nothing committed.
 *
 * The engine writes its run only while it holds the run's lease (src/core/store/leases.ts): it
 * takes it over from the host that launched it (its parent reserved it as `starting`), or from a
 * dead holder, and refuses to touch the run while anyone else holds it alive. Its heartbeat is
 * written from a worker thread with its own connection (store/leaseHeartbeat.ts), which a long
 * synchronous step does not block, and also at every mini-batch and between steps, where a
 * refused refresh is noticed. If a refresh is refused (someone judged it dead and took over), it
 * stops writing at once: no status, no stop checkpoint.
 *
 * Not here: the process wiring (main.ts: argv, IPC, signals), starting engines (src/core/host).
 * Tests: test/engine/*.test.ts run it for real in a forked process.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { resolveRunConfig, type RunConfig } from '../core/config';
import { isKeyMetric, type EngineMessage, type EngineStatus } from '../core/host/messages';
import { runDirFor, stopFlagPath } from '../core/host/paths';
import { corpusProgressLine, type CorpusProgress } from '../core/data/corpusIndex';
import { initBackend } from '../core/models/backend';
import { checkResumeKind } from '../core/policies/registry';
import { LabStore } from '../core/store';
import { acquireLease, describeLease, getLease, HEARTBEAT_EVERY_MS, leaseHolder, LeaseKeeper, leaseTimeoutMs, releaseLease } from '../core/store/leases';
import { isFinalStatus, type FinalStatus } from '../shared/records';
import { Trainer } from '../core/train/trainer';
import { checkpointUpdates } from '../shared/stepConvention';
import { EngineControl, StopRequested } from './control';

/** Where relative `policies.init` paths (the presets' resources/warmstart/...) resolve: the lab's root. */
export const LAB_ROOT = resolve(__dirname, '../..');

export interface EngineRequest {
  dbPath: string;
  runId: number;
  mode: 'start' | 'resume';
}

export interface EngineResult {
  status: Extract<EngineStatus, FinalStatus>;
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

  const holder = leaseHolder();
  try {
    const { tookOver } = acquireLease(store.db, req.runId, holder, 'engine', { fromParent: process.ppid });
    if (tookOver) log(`took over the lease of run ${req.runId} from a dead holder (${describeLease(tookOver.lease, Date.now())}: ${tookOver.why})`, 'warn');
  } catch (err) {
    // Another engine or host holds the run: leave it entirely alone (no status, no truncation).
    store.close();
    const error = `${(err as Error).message}; this engine (pid ${process.pid}) leaves the run alone`;
    log(error, 'error');
    return { status: 'failed', error };
  }
  const runDir = runDirFor(req.dbPath, req.runId);
  mkdirSync(runDir, { recursive: true });
  const ctl = control ?? new EngineControl(stopFlagPath(runDir));
  // The heartbeat thread beats through every step, at least four times per lease timeout. A lease
  // lost while paused (only the thread beats then) ends the wait; the loop then finds it lost.
  const beatEvery = Math.max(50, Math.min(HEARTBEAT_EVERY_MS, leaseTimeoutMs() / 4));
  const keeper = new LeaseKeeper(store.db, req.runId, holder, () => ctl.stop('lease lost')).start(beatEvery);
  const owned = (): boolean => {
    if (keeper.lost) return false;
    try {
      return getLease(store.db, req.runId)?.holder === holder.token;
    } catch {
      return true; // an unreadable lease is not proof of a takeover; the store error surfaces elsewhere
    }
  };
  const setStatus = (status: EngineStatus, error?: string): void => {
    const ended = isFinalStatus(status);
    store.updateRun(req.runId, { status, error: error ?? null, endedAt: ended ? Date.now() : null });
    send({ type: 'status', status, ...(error !== undefined ? { error } : {}) });
  };

  let trainer: Trainer | null = null;
  try {
    store.updateRun(req.runId, { startedAt: run.startedAt ?? Date.now() });
    setStatus('running');
    const config: RunConfig = resolveRunConfig(run.config);
    // TensorFlow takes the whole GPU at start-up unless told to grow; set before tfjs-node-gpu loads (initBackend loads it).
    process.env.TF_FORCE_GPU_ALLOW_GROWTH ??= 'true';
    const backend = await initBackend({ requested: config.backend });
    store.updateRun(req.runId, { backend: backend.name });

    const resume = prepareStart(store, req, dirname(resolve(req.dbPath)));
    if (resume) log(`resuming from the checkpoint of step ${checkpointUpdates(resume.step)} (after ${checkpointUpdates(resume.step)} updates; ${resume.dir})`);
    // A corpus index build (once per corpus file) holds the event loop for minutes: beat the lease
    // from its progress calls, send each (the dashboard's bar), and log a line at most every 5 s
    // (the CLI and the UI's log show it).
    let lastIndexLog = -Infinity;
    const onIndexProgress = (p: CorpusProgress): void => {
      if (!keeper.beat()) throw new LeaseLost();
      send({ type: 'indexProgress', ...p });
      if (!p.done && performance.now() - lastIndexLog < 5000) return;
      lastIndexLog = performance.now();
      log(corpusProgressLine(p));
    };
    const onEvaluation = (step: number): void => send({ type: 'evaluation', step });
    trainer = new Trainer({
      config,
      runDir,
      store,
      runId: req.runId,
      baseDir: LAB_ROOT,
      resume: resume ?? undefined,
      onIndexProgress,
      onEvaluation,
      onLog: log,
    });
    log(`policies: ${trainer.policies.describe()}`); // a model folder's config.json decides the shape, not the preset's size fields
    send({ type: 'ready', runId: req.runId, backend, startStep: trainer.startStep, totalSteps: config.steps });

    for (const step of trainer.remainingSteps()) {
      const stop = await ctl.betweenSteps((paused) => setStatus(paused ? 'paused' : 'running'));
      if (stop !== null) return finish('stopped', `stopped before ${step < config.steps ? `step ${step + 1}` : 'the final evaluation'} (${stop})`); // steps: updates done
      if (!keeper.beat()) throw new LeaseLost();
      let finishing = false;
      const summary = await trainer.step(step, (phase) => {
        if (!keeper.beat()) throw new LeaseLost();
        if (phase === 'before-update') return ctl.checkMidStep();
        // Mid-update: the step finishes and commits, then the stop lands between steps.
        const stop = finishing ? null : ctl.stopRequested();
        if (stop !== null) {
          finishing = true;
          log(`stop requested during update ${step + 1} (${stop}): finishing the step so that nothing is lost`);
        }
      });
      const metrics: Record<string, number> = {};
      for (const [k, v] of Object.entries(summary.metrics)) if (isKeyMetric(k)) metrics[k] = v;
      send({ type: 'step', step, final: summary.final, totalSteps: config.steps, metrics, wallMs: summary.wallMs, checkpoint: summary.checkpoint });
    }
    return finish('completed');
  } catch (err) {
    if (err instanceof LeaseLost || !owned()) return lost();
    // Before the step's update: the weights are still the last committed step's (checkpointed by finish).
    if (err instanceof StopRequested) return finish('stopped', `stopped during a step, which was abandoned (${err.reason}) before its update`);
    const error = (err as Error)?.message ?? String(err);
    log(error, 'error');
    return finish('failed', error);
  } finally {
    keeper.stop();
    trainer?.dispose();
    ctl.dispose();
    try {
      releaseLease(store.db, req.runId, holder);
    } catch {
      // The host releases it after the exit (by this pid) or the next holder finds this pid gone.
    }
    store.close();
  }

  /** The lease went to someone else: write nothing more to the run. */
  function lost(): EngineResult {
    const now = getLease(store.db, req.runId);
    const error = `lost the lease of run ${req.runId}${now ? ` (it is now ${describeLease(now, Date.now())})` : ''}; stopped without writing anything more`;
    log(error, 'error');
    return { status: 'failed', error };
  }

  function finish(status: EngineResult['status'], detail?: string): EngineResult {
    if (!owned()) return lost();
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

/** Thrown from inside a step when the heartbeat was refused: the run belongs to someone else now. */
class LeaseLost extends Error {
  constructor() {
    super('the run lease was taken over');
    this.name = 'LeaseLost';
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
  // A checkpoint this version cannot read (the former lab model) is refused before anything is truncated.
  checkResumeKind(dir);
  store.truncateAfter(req.runId, ckpt.step);
  return { dir, step: ckpt.step };
}
