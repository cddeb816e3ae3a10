/**
 * The host side of runs, shared by the CLI now and the LabService (UI) later: create a run from a
 * preset or a config (freezing the config snapshot into the store), start or resume it in an
 * engine process through an EngineLauncher, relay its messages, and, when the engine exits
 * without having written a final status (kill -9, out of memory, a native abort), mark the run
 * interrupted so it can be resumed from its last checkpoint.
 *
 * Files of a run: `<dir of the database>/runs/<runId>/` (paths.ts): checkpoints and the STOP flag.
 *
 * Not here: the training loop (src/engine, src/core/train), printing (src/cli).
 * Tests: test/engine/crash.test.ts, control.test.ts, failure.test.ts; test/cli/train.test.ts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import type { RunConfig } from '../config';
import { resolveRunConfig } from '../config';
import type { LabStore, RunRecord, RunStatus } from '../store';
import type { EngineHandle, EngineLauncher, EngineMode } from './launcher';
import type { EngineMessage } from './messages';
import { runDirFor, stopFlagPath } from './paths';

export interface NewRunOptions {
  config: RunConfig;
  /** Preset the config came from, if any. */
  preset?: string | null;
}

/** Run name when the config has none: `<preset or custom>-s<seed>`. */
export function defaultRunName(config: RunConfig, preset: string | null | undefined): string {
  return config.name || `${preset ?? 'custom'}-s${config.seed}`;
}

/** Stores a new run ('created') with its frozen config snapshot; returns its id. */
export function createRun(store: LabStore, { config, preset = null }: NewRunOptions): number {
  const name = defaultRunName(config, preset);
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
  status: RunStatus;
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
  /** Stop between steps or mini-batches (the step in progress is abandoned); the run ends 'stopped'. */
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
}

/** Statuses a run may be resumed from (`force` also allows running/paused: a host that died with its engine). */
const RESUMABLE: readonly RunStatus[] = ['interrupted', 'stopped', 'failed'];

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
    if (!RESUMABLE.includes(run.status) && !force) throw new Error(`run ${run.id} is ${run.status} and cannot be resumed`);
  }
}

/** Starts (mode 'start') or resumes a stored run in a new engine process. */
export function launchRun(runId: number, mode: EngineMode, options: LaunchOptions, force = false): ActiveRun {
  const { store, dbPath, launcher } = options;
  const run = store.getRun(runId);
  if (!run) throw new Error(`no run with id ${runId} in ${dbPath}`);
  checkLaunchable(run, mode, force);
  const runDir = runDirFor(dbPath, runId);
  mkdirSync(runDir, { recursive: true });
  const engine = launcher.launch({ dbPath, runId, mode: run.status === 'created' ? 'start' : 'resume' });
  let finalStatus = false;
  engine.onMessage((msg) => {
    if (msg.type === 'status' && ['completed', 'stopped', 'failed'].includes(msg.status)) finalStatus = true;
    options.onMessage?.(msg);
  });
  const done = new Promise<RunOutcome>((resolve) => {
    engine.onExit((code, signal) => {
      const how = signal ? `signal ${signal}` : `exit code ${code}`;
      // markInterrupted only touches a run still created/running/paused: an engine that wrote its
      // final status before dying is left alone.
      if (!finalStatus || code !== 0) store.markInterrupted(runId, `engine exited without finishing the run (${how})`);
      const after = store.getRun(runId)!;
      resolve({ runId, status: after.status, error: after.error, exitCode: code, signal, lastStep: after.lastStep });
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
