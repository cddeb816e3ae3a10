/**
 * `srpo-lab train` and `srpo-lab resume`: build a run config (preset, `--config FILE`, `--set
 * key=value`), store the run, and train it in an engine process (src/core/host/runs.ts) while
 * showing progress (progress.ts). Ctrl-C asks the engine to stop (it finishes or abandons the
 * step in progress, exits cleanly) and prints how to resume; a second Ctrl-C kills it (the run is
 * then marked interrupted, resumable all the same).
 *
 * `resume` takes the run's lease (as `starting`, handed to the engine when it starts) before it
 * says anything: a second `resume` of the same run, started at the same moment, is then refused
 * before it prints a word, instead of announcing what it would redo and being refused after.
 *
 * Not the loop (src/engine). Tests: test/cli/train.test.ts, test/cli/resumeLease.test.ts.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import {
  applySets,
  assertCrossFieldRules,
  assertPresetModelFolder,
  giveWayToModelFolder,
  mergeConfig,
  PRESET_NAMES,
  presetInput,
  resolveRunConfig,
  setPath,
  type RunConfig,
} from '../core/config';
import { assertRunDataUnchanged } from '../core/data';
import { checkpointUpdates } from '../shared/stepConvention';
import { assertCheckpointReadable, checkLaunchable, checkRunnable, createRun, launchRun, resumePlanFor, type RunOutcome } from '../core/host/runs';
import type { LabStore } from '../core/store';
import { acquireLease, defaultLeaseEnv, describeLease, LeaseHeldError, leaseHolder, releaseLease, type LeaseHolder } from '../core/store/leases';
import type { ParsedArgs } from './args';
import type { CliIO } from './io';
import { getRunOrThrow, labCommand, openLab, runArg } from './lab';
import { ProgressView } from './progress';

/** The run config of `train`'s arguments: preset, then the config file, then each --set (in order). */
export function configFromArgs(args: ParsedArgs): { config: RunConfig; preset: string | null } {
  const preset = args.options.preset ?? null;
  const file = args.options.config;
  if (!preset && !file) throw new Error(`train needs --preset NAME or --config FILE; presets: ${PRESET_NAMES.join(', ')}`);
  let input: Record<string, unknown> = preset ? presetInput(preset) : {};
  const fromFile = file ? readConfigFile(file) : {};
  const sets: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args.sets)) setPath(sets, key, value);
  input = applySets(mergeConfig(input, fromFile), args.sets); // objects replace, switches drop old keys
  // A checkpoint path the user typed is relative to where they typed it; the engine resolves
  // relative paths against the lab's root (where the presets' resources/warmstart lives).
  const userInit = ((sets.policies ?? fromFile.policies) as { init?: unknown } | undefined)?.init;
  if (typeof userInit === 'string' && !isAbsolute(userInit)) input = mergeConfig(input, { policies: { init: resolve(userInit) } });
  const config = resolveRunConfig(input);
  if (preset) assertPresetModelFolder(preset, config); // the real-model presets need --set policies.init=PATH
  return { config, preset };
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read config file ${path}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`config file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`config file ${path} must hold a JSON object (a partial run config)`);
  return parsed as Record<string, unknown>;
}

export async function trainCommand(args: ParsedArgs, out: (line: string) => void, io: CliIO): Promise<void> {
  const parsed = configFromArgs(args);
  const preset = parsed.preset;
  // Another model's folder in policies.init decides the shape: the lab model's overrides give way (validateRunConfig.ts).
  const config = giveWayToModelFolder(parsed.config);
  // A bad policies.init is refused here, before a run exists (not by the engine, after).
  assertCrossFieldRules(config); // policies.init and dataset paths, heads | width, overrides that disagree with init's checkpoint
  const { store, dbPath } = openLab(args, true, out);
  try {
    const runId = createRun(store, { config, preset });
    out(`run ${runId} "${store.getRun(runId)!.name}": ${config.steps} steps of ${config.workflow.name}/${config.objective.algorithm} (${dbPath})`);
    await trainRun(store, dbPath, runId, 'start', false, out, io);
  } finally {
    store.close();
  }
}

export async function resumeCommand(args: ParsedArgs, out: (line: string) => void, io: CliIO): Promise<void> {
  const runId = runArg(args, 'resume');
  const { store, dbPath } = openLab(args, false, out);
  try {
    const force = args.flags.has('force');
    // Refused before anything is said about what the resume would do (a completed run, a live
    // engine, another resume that got here first): the lease is taken, atomically, before the
    // first line, and the run read again under it (another resume may have finished it meanwhile).
    // launchRun then finds the lease ours; the engine takes it over when it starts.
    const holder = leaseHolder();
    const env = defaultLeaseEnv();
    const refusal = (err: unknown): unknown =>
      err instanceof LeaseHeldError
        ? new Error(`${err.message}; --force does not override a live engine: stop it first (Ctrl-C where it runs, or Stop in the UI)`)
        : err;
    let tookOver: ReturnType<typeof acquireLease>['tookOver'];
    try {
      checkRunnable(store, getRunOrThrow(store, runId, dbPath), 'resume', force, holder, env);
      tookOver = acquireLease(store.db, runId, holder, 'starting', { env }).tookOver;
    } catch (err) {
      throw refusal(err);
    }
    try {
      const run = getRunOrThrow(store, runId, dbPath);
      checkLaunchable(run, 'resume', force);
      assertRunDataUnchanged(run.config as RunConfig); // a changed dataset or corpus file is refused before an engine starts
      assertCheckpointReadable(store, dbPath, runId); // so is a checkpoint of the former lab model
      if (tookOver) out(`took over the lease of run ${runId} from a dead holder, ${describeLease(tookOver.lease, env.now())}: ${tookOver.why}`);
      const ckpt = store.latestCheckpoint(runId);
      // Said before the engine starts: what the resume keeps and what it recomputes (shared/resumePlan).
      const from = ckpt ? `from the checkpoint of step ${checkpointUpdates(ckpt.step)}` : 'from the start (no checkpoint yet)'; // steps: updates done
      out(`resuming run ${runId} "${run.name}" (${run.status}) ${from}. ${resumePlanFor(store, runId).text}`);
      await trainRun(store, dbPath, runId, 'resume', force, out, io, holder);
    } finally {
      // launchRun releases it when the engine exits; this covers a refusal before the launch (only
      // this holder's row can go: the engine's lease, under its own token, is left alone).
      releaseLease(store.db, runId, holder);
    }
  } finally {
    store.close();
  }
}

async function trainRun(
  store: LabStore,
  dbPath: string,
  runId: number,
  mode: 'start' | 'resume',
  force: boolean,
  out: (line: string) => void,
  io: CliIO,
  holder?: LeaseHolder,
): Promise<RunOutcome> {
  const view = new ProgressView(out, io.tty);
  const active = launchRun(runId, mode, { store, dbPath, launcher: io.launcher, onMessage: (m) => view.handle(m), holder }, force);
  let interrupts = 0;
  const dispose = io.onInterrupt(() => {
    interrupts++;
    if (interrupts === 1) {
      view.line(
        'stopping: the engine finishes or abandons the step in progress (an update that has begun finishes and commits), then checkpoints the last committed step (Ctrl-C again to kill it)',
      );
      active.stop();
    } else active.engine.kill('SIGKILL');
  });
  let outcome: RunOutcome;
  try {
    outcome = await active.done;
  } finally {
    dispose();
    view.finish();
  }
  const db = ` --db ${dbPath}`;
  const ckpt = store.latestCheckpoint(runId);
  const resumeHint =
    `resume with: ${labCommand()} resume ${runId}${db}` +
    (ckpt ? ` (from the checkpoint of step ${checkpointUpdates(ckpt.step)})` : ' (restarts at step 1: no checkpoint yet)');
  switch (outcome.status) {
    case 'completed':
      out(
        `run ${runId} completed: ${outcome.lastStep} training steps${((store.getRun(runId)?.config as RunConfig | undefined)?.eval?.every ?? 1) > 0 ? ' and the final evaluation' : ' (evaluation off)'}. See: ${labCommand()} show ${runId}${db}`,
      );
      break;
    case 'stopped':
      out(`run ${runId} stopped (${outcome.lastStep + 1} steps committed); ${resumeHint}`);
      break;
    case 'interrupted':
      throw new Error(`run ${runId} interrupted: ${outcome.error}; ${resumeHint}`);
    default:
      throw new Error(`run ${runId} ${outcome.status}: ${outcome.error ?? 'no reason recorded'}${outcome.lastStep >= 0 ? `; ${resumeHint}` : ''}`);
  }
  return outcome;
}
