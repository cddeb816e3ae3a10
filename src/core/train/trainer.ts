/**
 * The training loop (read this first of src/core/train). One step:
 *
 *   1. evaluation, when scheduled (before the step's update: the series counts updates done)
 *   2. rollouts: N tasks x G episodes through the run's rollout driver   (rollout/drivers.ts)
 *   3. old log-probs (and reference log-probs) by the teacher-forced scorer (stepData.ts)
 *   4. advantages and event validation                                     (srpo/)
 *   5. epochs x event-atomic mini-batches: objective, clip, AdamW           (update.ts)
 *   6. checkpoint when scheduled, then the step's record in ONE store transaction
 *
 * Everything random derives from (seed, step), and the optimizer state is checkpointed, so a
 * run resumed from a checkpoint continues exactly as if it had never stopped (on the CPU
 * backends; GPU kernels may reorder float sums). After the last training step an eval-only
 * step (index = the number of training steps) records the final evaluation. The last training
 * step is config.steps - 1, or the first step whose rollouts reach a budget (budget.ts): every
 * step records the cumulative cost, and a resumed run reads it back.
 *
 * A stop never loses a committed step. The step's scheduled evaluation is committed on its own as
 * soon as it ends (store writeEvaluation, with its stored episodes of split 'eval', evalEpisodes.ts),
 * so the curves and the trace viewer show it while the step still trains; the rest of the step is
 * one transaction (the final step's evaluation and episodes are part of it).
 * `onMiniBatch('before-update')` runs once the rollouts are scored: a throw there abandons the step with the weights untouched (they are still those of the
 * last committed step, which saveStopCheckpoint can then save). Once the update has begun the
 * engine lets it finish and commit (`onMiniBatch('update')` may only throw to abandon the run,
 * e.g. a lost lease): the weights are then ahead of the store and only the step's commit brings
 * them back in line. Why finish rather than roll back: a rollback needs a copy of every trainable
 * weight and both AdamW moments taken before each update (3x the trainable parameters in
 * memory: ~7 GB for a fully fine-tuned Qwen3-0.6B in float32), while finishing costs only the
 * rest of one update before the stop lands: at most time/update, measured 3.1-4.6 s of a 5.0-5.6 s
 * step for math-quick (node backend, 2 CPU cores at load ~8), ~0.7 s for the engine tests'
 * tiny config. No memory, no per-step cost.
 *
 * Not here: backend start-up, the process, pause/stop signals (src/engine), the store's schema.
 * Tests: test/core/train/trainer.test.ts; stop / resume / early evaluation: test/engine/stopResume.test.ts.
 */
import * as tf from '@tensorflow/tfjs';
import type { RunConfig } from '../config';
import { mixSeed } from '../models/random';
import { openPolicies } from '../policies/registry';
import type { Policies } from '../policies/types';
import { rolloutDriver, type RolloutDriver } from '../rollout/drivers';
import { batchMetrics, prepareObjectiveBatch } from '../srpo';
import type { LabStore } from '../store';
import type { StepRecord } from '../store/records';
import { BUDGET_METRICS } from '../../shared/budget';
import { BudgetMeter, loadBudgetTotals, saveBudgetTotals } from './budget';
import { checkpointDir, restoreOptimizers, savePoliciesCheckpoint } from './checkpoints';
import { buildEnvironment, createEpisodes, tasksForStep, type Environment, type EnvironmentOptions } from './environment';
import { driverRunner, evaluateAsync } from './evaluate';
import { storedEvalQueries } from './evalEpisodes';
import { AdamW } from './optimizer';
import { buildStepData } from './stepData';
import { StepMetrics } from '../../shared/metricCatalogue';
import { episodeRecords, rolloutMetrics } from './stepRecord';
import { runUpdate } from './update';

/**
 * Backend memory for the step's metrics: live tensors always, and GPU memory where the backend
 * exposes it in tf.memory() (numBytesInGPU / numBytesInGPUAllocated; tfjs-node-gpu reports
 * neither: TensorFlow's allocator is outside tfjs, so its figure is `numBytes` of tensors on the
 * device, reported as memory/device_bytes when the backend is tensorflow).
 */
export function memoryMetrics(info: tf.MemoryInfo & { numBytesInGPU?: number; numBytesInGPUAllocated?: number } = tf.memory()): Record<string, number> {
  const out: Record<string, number> = { 'memory/tensors': info.numTensors };
  if (typeof info.numBytesInGPU === 'number') out['memory/gpu_bytes'] = info.numBytesInGPU;
  if (tf.getBackend() === 'tensorflow') out['memory/device_bytes'] = info.numBytes;
  if (typeof info.numBytesInGPUAllocated === 'number') out['memory/gpu_allocated_bytes'] = info.numBytesInGPUAllocated;
  return out;
}

/** Steps in a row whose every update was skipped (non-finite) before the run fails. */
export const MAX_SKIPPED_STEPS = 3;

export interface TrainerOptions {
  config: RunConfig;
  /** Where checkpoints go (`<runDir>/checkpoints/step-NNNNNN`). */
  runDir: string;
  store?: LabStore;
  runId?: number;
  /** Directory `policies.init` is resolved against (default: the working directory). */
  baseDir?: string;
  /** Resume from this checkpoint directory of this run (weights, versions, optimizer state). */
  resume?: { dir: string; step: number };
  /** Called once a step's scheduled evaluation is committed ahead of the step (the engine pushes its points). */
  onEvaluation?: (step: number) => void;
  /** Progress of a corpus index build while the environment is built (the engine logs it). */
  onIndexProgress?: EnvironmentOptions['onIndexProgress'];
  /** The run's log (an external workflow's program output goes there). */
  onLog?: (line: string, level?: 'info' | 'warn' | 'error') => void;
}

export interface StepSummary {
  step: number;
  /** Eval-only final step. */
  final: boolean;
  metrics: Record<string, number>;
  checkpoint: string | null;
  wallMs: number;
}

/**
 * Where in a step `onMiniBatch` is called: 'before-update' once the rollouts are scored, and also
 * every quarter second while an asynchronous batch (an external program) plays (weights untouched:
 * throwing abandons the step cleanly), 'update' before each mini-batch of the update (the step will
 * be committed: throw only to abandon the run).
 */
export type StepPhase = 'before-update' | 'update';

export class Trainer {
  readonly config: RunConfig;
  readonly env: Environment;
  /** The run's policies, whatever the model kind (src/core/policies); the KL reference lives inside. */
  readonly policies: Policies;
  private readonly optimizers = new Map<string, AdamW>();
  /** Plays rollout and evaluation batches (rollout/drivers.ts: lockstep, or an external program). */
  private readonly driver: RolloutDriver;
  private skippedInARow = 0;
  private lastStoreMs = 0;
  /** First step this trainer will run. */
  readonly startStep: number;
  /** Last step whose record is committed and whose result the weights are (-1: none). */
  private committed: number;
  /** Whether that step has a checkpoint on disk. */
  private committedHasCheckpoint: boolean;
  /** Set once an update of an uncommitted step has begun: the weights are ahead of the store. */
  private dirty = false;
  /** Cumulative rollout cost against config.budget. */
  private readonly budget: BudgetMeter;
  /** Index of the eval-only final step: config.steps, or earlier once a budget is reached. */
  private endStep: number;

  constructor(private readonly options: TrainerOptions) {
    this.config = options.config;
    this.env = buildEnvironment(this.config, { runDir: options.runDir, onIndexProgress: options.onIndexProgress });
    this.policies = openPolicies(this.config, { baseDir: options.baseDir ?? process.cwd(), resumeDir: options.resume?.dir });
    try {
      for (const p of this.policies.policies()) this.optimizers.set(p.id, new AdamW(this.policies.trainable(p.id), this.config.optimizer));
      if (options.resume) restoreOptimizers(options.resume.dir, this.optimizers);
    } catch (err) {
      for (const o of this.optimizers.values()) o.dispose();
      this.policies.dispose();
      throw err;
    }
    this.driver = rolloutDriver({ config: this.config, policies: this.policies, baseDir: options.baseDir ?? process.cwd(), log: options.onLog });
    this.startStep = options.resume ? options.resume.step + 1 : 0;
    this.committed = this.startStep - 1;
    this.committedHasCheckpoint = options.resume !== undefined;
    const spent = options.resume ? (loadBudgetTotals(options.resume.dir) ?? this.restoredBudgetMetrics(options.resume.step)) : {};
    this.budget = new BudgetMeter(this.config.budget, spent);
    this.endStep = this.budget.reached() ? this.startStep : this.config.steps;
  }

  /** Steps still to run, the final eval-only step included (read lazily: a budget can end training early). */
  *remainingSteps(): Generator<number> {
    for (let s = this.startStep; s <= this.endStep; s++) yield s;
  }

  /** The cumulative budget metrics of the committed step a resume starts after (a checkpoint without budget.json). */
  private restoredBudgetMetrics(step: number): Record<string, number> {
    const { store, runId } = this.options;
    if (!store || runId === undefined) return {};
    const out: Record<string, number> = {};
    for (const key of Object.values(BUDGET_METRICS)) {
      const last = store.metricSeries(runId, key, { toStep: step }).at(-1);
      if (last && last.value !== null && Number.isFinite(last.value)) out[key] = last.value;
    }
    return out;
  }

  /**
   * Runs one step (training, or the final evaluation when step is the end step) and records it.
   * Async because an external workflow's batches are played by a program (rollout/drivers.ts); the
   * built-in workflows' batches are synchronous inside and their results unchanged.
   */
  async step(step: number, onMiniBatch?: (phase: StepPhase) => void): Promise<StepSummary> {
    const c = this.config;
    const t0 = performance.now();
    const final = step === this.endStep;
    const time: Record<string, number> = {};
    // Every producer's metrics go through StepMetrics: a key written twice, or not in the catalogue, throws.
    const merged = new StepMetrics();
    const metrics = merged.values;
    const record: StepRecord = { step, wallTime: 0, metrics, episodes: [], tokens: step % c.tokenDetailEvery === 0 };
    /** Metrics already committed with the evaluation (returned in the summary, not written again). */
    const early: Record<string, number> = {};
    // While an asynchronous batch (an external program) plays, the engine's before-update check runs
    // now and then: a stop or a lost lease abandons the step there, the weights untouched.
    const hooks = onMiniBatch && { poll: () => onMiniBatch('before-update') };

    if (c.eval.every > 0 && (step % c.eval.every === 0 || final)) {
      const te = performance.now();
      const ev = await evaluateAsync(this.env, c, driverRunner(c, this.driver, hooks), step, undefined, storedEvalQueries(c));
      time.eval = performance.now() - te;
      const { store, runId } = this.options;
      const tokens = record.tokens && c.eval.storeTokens; // eval token detail: opt-in (3x the bytes)
      if (!final && store && runId !== undefined) {
        // Committed now, not with the step: the curves and the trace show it while the step trains.
        store.writeEvaluation(runId, { step, wallTime: Date.now(), metrics: ev.metrics, evaluations: ev.records, episodes: ev.episodes, tokens });
        Object.assign(early, ev.metrics);
        this.options.onEvaluation?.(step);
      } else {
        record.evaluations = ev.records;
        merged.add('eval', ev.metrics);
        if (final) Object.assign(record, { episodes: ev.episodes, tokens }); // the final step trains nothing: its episodes are the evaluation's
      }
    }

    let checkpoint: string | null = null;
    if (!final) {
      let t = performance.now();
      const episodes = createEpisodes(this.env, c, tasksForStep(this.env, c, step), c.rollout.groupSize, `s${step}`);
      const rollouts = await this.driver.play(
        episodes,
        {
          temperature: c.rollout.temperature,
          topP: c.rollout.topP,
          maxNewTokens: c.rollout.maxNewTokens,
          seed: mixSeed(c.seed, step, 1),
        },
        'train',
        hooks,
      );
      time.rollout = performance.now() - t;
      time.sampler = rollouts.samplerMs;

      t = performance.now();
      const data = buildStepData(rollouts, this.policies);
      const prepared = prepareObjectiveBatch(data.batch, c.objective);
      time.old_logp = performance.now() - t;

      // A stop requested during the rollout abandons the step before any weight changes.
      onMiniBatch?.('before-update');
      this.dirty = true;
      t = performance.now();
      const update = runUpdate(prepared, data.members, c.objective, {
        policies: this.policies,
        optimizers: this.optimizers,
        config: c,
        padId: this.policies.padId,
        seed: mixSeed(c.seed, step, 2),
        onMiniBatch: onMiniBatch && (() => onMiniBatch('update')),
      });
      time.update = performance.now() - t;
      // Counted once the step can no longer be abandoned, so a stop checkpoint never holds a half step's cost.
      merged.add('budget', this.budget.add(rollouts));
      if (this.budget.reached()) this.endStep = step + 1; // this is the last training step

      merged
        .add('rollout', { ...rolloutMetrics(rollouts, data), ...rollouts.metrics })
        .add('batch', batchMetrics(prepared))
        .add(['objective', 'update'], update.metrics);
      merged.add('engine', Object.fromEntries(this.policies.policies().map((p) => [`policy/${p.id}/version`, p.version])));
      record.episodes = episodeRecords(rollouts, data, prepared, update, c.rollout.groupSize);
      this.checkSkips(update.applied, update.skipped, update.lastSkipReason, step);

      if ((c.checkpointEvery > 0 && (step + 1) % c.checkpointEvery === 0) || step === this.endStep - 1) {
        t = performance.now();
        checkpoint = savePoliciesCheckpoint(checkpointDir(this.options.runDir, step), this.policies, this.optimizers);
        saveBudgetTotals(checkpoint, this.budget);
        record.checkpoint = { path: checkpoint };
        time.checkpoint = performance.now() - t;
      }
    }
    // Store time of the previous step (this step's own write is still to come).
    if (this.lastStoreMs) time.store_prev = this.lastStoreMs;
    const wallMs = performance.now() - t0;
    merged.add('engine', { ...Object.fromEntries(Object.entries(time).map(([k, v]) => [`time/${k}`, v / 1000])), 'time/step': wallMs / 1000 });
    merged.add('engine', { ...memoryMetrics(), ...(this.policies.metrics?.() ?? {}) });
    record.wallTime = Date.now();
    if (this.options.store && this.options.runId !== undefined) {
      const ts = performance.now();
      this.options.store.writeStep(this.options.runId, record);
      this.lastStoreMs = performance.now() - ts;
    }
    this.committed = step;
    this.committedHasCheckpoint = checkpoint !== null;
    this.dirty = false;
    return { step, final, metrics: { ...early, ...metrics }, checkpoint, wallMs };
  }

  /**
   * On a stop: checkpoints the last committed training step (when it has none yet) and records
   * it, so a resume continues from where the run stopped rather than from the last scheduled
   * checkpoint. Returns the directory, or null when there is nothing to save. The engine stops
   * only before an update or between steps, so the weights are those of the committed step; the
   * `dirty` guard (an update abandoned by a lost lease or an error) refuses to save weights that
   * are ahead of the store.
   */
  saveStopCheckpoint(): string | null {
    const step = this.committed;
    if (this.dirty || step < 0 || step >= this.endStep || this.committedHasCheckpoint) return null;
    const dir = savePoliciesCheckpoint(checkpointDir(this.options.runDir, step), this.policies, this.optimizers);
    saveBudgetTotals(dir, this.budget);
    if (this.options.store && this.options.runId !== undefined) this.options.store.addCheckpoint(this.options.runId, step, dir);
    this.committedHasCheckpoint = true;
    return dir;
  }

  /** Where this run's checkpoints go. */
  get runDir(): string {
    return this.options.runDir;
  }

  /** Store time of the last written step, ms. */
  get lastStoreTimeMs(): number {
    return this.lastStoreMs;
  }

  private checkSkips(applied: number, skipped: number, reason: string | null, step: number): void {
    this.skippedInARow = applied === 0 && skipped > 0 ? this.skippedInARow + 1 : 0;
    if (this.skippedInARow >= MAX_SKIPPED_STEPS) {
      throw new Error(`step ${step}: every update of ${MAX_SKIPPED_STEPS} steps in a row was skipped (last: ${reason})`);
    }
  }

  /** Frees the weights and ends the rollout driver (an external program is killed, its endpoint closed, without waiting). */
  dispose(): void {
    void this.driver.dispose();
    for (const o of this.optimizers.values()) o.dispose();
    this.policies?.dispose();
  }
}
