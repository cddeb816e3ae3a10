/**
 * The host side of runs, shared by the CLI now and the LabService (UI) later: create a run from a
 * preset or a config (freezing the config snapshot into the store), start or resume it in an
 * engine process through an EngineLauncher, relay its messages, and, when the engine exits
 * without having written a final status (kill -9, out of memory, a native abort), mark the run
 * interrupted so it can be resumed from its last checkpoint.
 *
 * Files of a run: `<database file>.runs/<runId>/` beside the database (paths.ts): checkpoints and the STOP flag.
 *
 * One writer per run (store/leases.ts): `launchRun` first takes the run's lease as `starting` for
 * its host (refused, naming the holder, while another engine or host holds it alive), the engine
 * takes it over from its parent, and when the engine has exited the host releases whatever is
 * left of it. A run whose lease was taken over by someone else is not marked interrupted.
 *
 * Not here: the training loop (src/engine, src/core/train), printing (src/cli).
 * Tests: test/engine/crash.test.ts, control.test.ts, failure.test.ts, leases.test.ts;
 * test/cli/train.test.ts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { RunConfig } from '../config';
import { resolveRunConfig } from '../config';
import type { LabStore, RunRecord, StoredRunStatus } from '../store';
import { isFinalStatus, RESUMABLE_STATUSES } from '../../shared/records';
import {
  acquireLease,
  assertNoLiveLease,
  defaultLeaseEnv,
  describeLease,
  getLease,
  leaseHolder,
  leaseLiveness,
  releaseLease,
  releaseLeaseOfPid,
  type LeaseEnv,
  type LeaseHolder,
} from '../store/leases';
import { checkResumeKind } from '../policies/registry';
import type { EngineHandle, EngineLauncher, EngineMode } from './launcher';
import type { EngineMessage } from './messages';
import { runDirFor, stopFlagPath } from './paths';
import { resumePlan, type ResumePlan } from '../../shared/resumePlan';

export interface NewRunOptions {
  config: RunConfig;
  /** Preset the config came from, if any. */
  preset?: string | null;
}

/**
 * Run name when the config has none: `<preset or custom>-s<seed>`; when this database already
 * has a run of that name, `<preset>-<k>-s<seed>` with the smallest k >= 2 not taken, so a second
 * series of seeds 1, 2, 3 reads math-quick-2-s1, -s2, -s3 (a series keeps one label over its
 * seeds: tables group runs by the name without `-s<seed>`). A name set in the config is kept.
 */
export function defaultRunName(config: RunConfig, preset: string | null | undefined, taken: ReadonlySet<string> = new Set()): string {
  if (config.name) return config.name;
  const base = preset ?? 'custom';
  let name = `${base}-s${config.seed}`;
  for (let k = 2; taken.has(name); k++) name = `${base}-${k}-s${config.seed}`;
  return name;
}

/** What resuming this run will redo, from the store (see src/shared/resumePlan.ts); the CLI prints it before resuming. */
export function resumePlanFor(store: LabStore, runId: number): ResumePlan {
  const run = store.getRun(runId);
  if (!run) throw new Error(`no run with id ${runId}`);
  return resumePlan(
    run.lastStep,
    store.checkpoints(runId).map((c) => c.step),
  );
}

/** Stores a new run ('created') with its frozen config snapshot; returns its id. */
export function createRun(store: LabStore, { config, preset = null }: NewRunOptions): number {
  const name = defaultRunName(config, preset, config.name ? undefined : new Set(store.listRuns().map((r) => r.name)));
  // The snapshot carries the name too, so an exported config reproduces the run as named.
  const snapshot = config.name === name ? config : resolveRunConfig({ ...config, name });
  return store.createRun({
    name,
    preset,
    config: snapshot,
    seed: snapshot.seed,
    workflow: snapshot.workflow.name,
    algorithm: snapshot.objective.algorithm,
  });
}

/** How a run's engine ended. `status` is the run's status in the store afterwards. */
export interface RunOutcome {
  runId: number;
  status: StoredRunStatus;
  error: string | null;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  lastStep: number;
}

export interface ActiveRun {
  readonly runId: number;
  readonly engine: EngineHandle;
  pause(): void;
  resume(): void;
  /**
   * Stop between steps, before a step's update (dropped) or after the update in progress commits;
   * the run ends 'stopped' with its last committed step checkpointed.
   */
  stop(): void;
  /** Resolves once the engine has exited and the run's final status is settled. */
  readonly done: Promise<RunOutcome>;
}

export interface LaunchOptions {
  store: LabStore;
  dbPath: string;
  launcher: EngineLauncher;
  /** Every message of the engine, in order. */
  onMessage?: (msg: EngineMessage) => void;
  /** Who launches (the run's lease is taken in its name first); default: a new holder for this process. */
  holder?: LeaseHolder;
  /** How lease liveness is judged (tests inject a clock); default: this process's view. */
  leaseEnv?: LeaseEnv;
}

/** Checks that `mode` fits the run's status; throws a message saying what to do instead. */
export function checkLaunchable(run: RunRecord, mode: EngineMode, force = false): void {
  if (mode === 'start' && run.status !== 'created') {
    throw new Error(`run ${run.id} is ${run.status}, not created; resume it instead (srpo-lab resume ${run.id})`);
  }
  if (mode === 'resume') {
    if (run.status === 'completed') throw new Error(`run ${run.id} is already completed`);
    if (run.status === 'created') return; // never started: resume = start from step 0
    if ((run.status === 'running' || run.status === 'paused') && !force) {
      throw new Error(`run ${run.id} is ${run.status}: an engine may still be training it; if none is (its host died with it), resume with --force`);
    }
    // RESUMABLE_STATUSES; `force` also allows running/paused: a host that died with its engine.
    if (!RESUMABLE_STATUSES.includes(run.status) && !force) throw new Error(`run ${run.id} is ${run.status} and cannot be resumed`);
  }
}

/**
 * checkLaunchable, then the lease: throws a LeaseHeldError naming the holder while the run's
 * lease is alive and not `holder`'s. Everything that may start, resume or delete a run asks this
 * first, before saying or writing anything.
 */
export function checkRunnable(store: LabStore, run: RunRecord, mode: EngineMode, force = false, holder?: LeaseHolder, env?: LeaseEnv): void {
  assertNoLiveLease(store.db, run.id, holder, env);
  checkLaunchable(run, mode, force);
}

/**
 * Refuses a resume whose latest checkpoint this version cannot read (the former lab model:
 * policies/registry.ts checkResumeKind), before an engine starts and truncates anything.
 */
export function assertCheckpointReadable(store: LabStore, dbPath: string, runId: number): void {
  const ckpt = store.latestCheckpoint(runId);
  if (ckpt) checkResumeKind(isAbsolute(ckpt.path) ? ckpt.path : resolve(dirname(dbPath), ckpt.path));
}

/** Starts (mode 'start') or resumes a stored run in a new engine process. */
export function launchRun(runId: number, mode: EngineMode, options: LaunchOptions, force = false): ActiveRun {
  const { store, dbPath, launcher } = options;
  const holder = options.holder ?? leaseHolder();
  const env = options.leaseEnv ?? defaultLeaseEnv();
  const run = store.getRun(runId);
  if (!run) throw new Error(`no run with id ${runId} in ${dbPath}`);
  checkRunnable(store, run, mode, force, holder, env);
  // Reserved for the engine, which takes it over from its parent (this process) when it starts.
  const { tookOver } = acquireLease(store.db, runId, holder, 'starting', { env });
  if (tookOver)
    options.onMessage?.({
      type: 'log',
      level: 'warn',
      line: `took over the lease of run ${runId} from a dead holder, ${describeLease(tookOver.lease, env.now())}: ${tookOver.why}`,
    });
  const runDir = runDirFor(dbPath, runId);
  let engine: EngineHandle;
  try {
    mkdirSync(runDir, { recursive: true });
    engine = launcher.launch({ dbPath, runId, mode: run.status === 'created' ? 'start' : 'resume' });
  } catch (err) {
    releaseLease(store.db, runId, holder);
    throw err;
  }
  const enginePid = engine.pid;
  let finalStatus = false;
  engine.onMessage((msg) => {
    if (msg.type === 'status' && isFinalStatus(msg.status)) finalStatus = true;
    options.onMessage?.(msg);
  });
  const done = new Promise<RunOutcome>((resolve) => {
    engine.onExit((code, signal) => {
      const how = signal ? `signal ${signal}` : `exit code ${code}`;
      // What is left of the lease is ours or our engine's (a killed engine cannot release it).
      releaseLease(store.db, runId, holder);
      if (enginePid !== undefined) releaseLeaseOfPid(store.db, runId, enginePid, holder.host);
      // Someone else holds the run now (they took over a lease they judged dead): not ours to mark.
      const other = getLease(store.db, runId);
      const takenOver = other !== null && leaseLiveness(other, env).alive;
      // markInterrupted only touches a run still created/running/paused: an engine that wrote its
      // final status before dying is left alone.
      if (!takenOver && (!finalStatus || code !== 0)) store.markInterrupted(runId, `engine exited without finishing the run (${how})`);
      const after = store.getRun(runId);
      resolve({
        runId,
        status: after?.status ?? 'interrupted',
        error: after ? after.error : `run ${runId} no longer exists`,
        exitCode: code,
        signal,
        lastStep: after?.lastStep ?? -1,
      });
    });
  });
  return {
    runId,
    engine,
    pause: () => engine.send({ type: 'pause' }),
    resume: () => engine.send({ type: 'resume' }),
    stop: () => {
      // The flag reaches an engine that is inside a (synchronous) step; the message one between steps.
      try {
        writeFileSync(stopFlagPath(runDir), `${Date.now()}\n`);
      } catch {
        // The message alone still stops it between steps.
      }
      engine.send({ type: 'stop' });
    },
    done,
  };
}
