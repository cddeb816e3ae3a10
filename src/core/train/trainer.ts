/**
 * The training loop (read this first of src/core/train). One step:
 *
 *   1. evaluation, when scheduled (before the step's update: the series counts updates done)
 *   2. rollouts: N tasks x G episodes through the orchestrator            (rollout/)
 *   3. old log-probs (and reference log-probs) by the teacher-forced scorer (stepData.ts)
 *   4. advantages and event validation                                     (srpo/)
 *   5. epochs x event-atomic mini-batches: objective, clip, AdamW           (update.ts)
 *   6. checkpoint when scheduled, then the step's record in ONE store transaction
 *
 * Everything random derives from (seed, step), and the optimizer state is checkpointed, so a
 * run resumed from a checkpoint continues exactly as if it had never stopped (on the CPU
 * backends; GPU kernels may reorder float sums). After the last training step an eval-only
 * step (index = config.steps) records the final evaluation.
 *
 * Not here: backend start-up, the process, pause/stop signals (src/engine), the store's schema.
 * Tests: test/core/train/trainer.test.ts.
 */
import * as tf from '@tensorflow/tfjs';
import type { RunConfig } from '../config';
import { mixSeed } from '../models/random';
import type { PolicySet } from '../models/policySet';
import type { CharTokenizer } from '../models/tokenizer';
import { runRollouts } from '../rollout/orchestrator';
import { batchMetrics, getVariant, prepareObjectiveBatch } from '../srpo';
import type { LabStore } from '../store';
import type { StepRecord } from '../store/records';
import { checkpointDir, initialPolicies, loadPolicies, restoreOptimizers, saveRunCheckpoint } from './checkpoints';
import { buildEnvironment, createEpisodes, tasksForStep, type Environment } from './environment';
import { evaluate } from './evaluate';
import { AdamW } from './optimizer';
import { buildStepData } from './stepData';
import { episodeRecords, rolloutMetrics } from './stepRecord';
import { runUpdate } from './update';

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
}

export interface StepSummary {
  step: number;
  /** Eval-only final step. */
  final: boolean;
  metrics: Record<string, number>;
  checkpoint: string | null;
  wallMs: number;
}

export class Trainer {
  readonly config: RunConfig;
  readonly env: Environment;
  readonly policies: PolicySet;
  readonly tokenizer: CharTokenizer;
  private readonly reference: PolicySet | null;
  private readonly optimizers = new Map<string, AdamW>();
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

  constructor(private readonly options: TrainerOptions) {
    this.config = options.config;
    this.env = buildEnvironment(this.config);
    const start = options.resume ? loadPolicies(options.resume.dir, this.config) : initialPolicies(this.config, options.baseDir);
    this.policies = start.policies;
    this.tokenizer = start.tokenizer;
    for (const p of this.policies.policies()) this.optimizers.set(p.id, new AdamW(p.model.params, this.config.optimizer));
    if (options.resume) restoreOptimizers(options.resume.dir, this.optimizers);
    this.startStep = options.resume ? options.resume.step + 1 : 0;
    this.committed = this.startStep - 1;
    this.committedHasCheckpoint = options.resume !== undefined;
    // The KL reference is the run's starting policy, frozen.
    this.reference = this.config.kl.coef > 0 ? initialPolicies(this.config, options.baseDir).policies : null;
  }

  /** Steps still to run, the final eval-only step included. */
  *remainingSteps(): Generator<number> {
    for (let s = this.startStep; s <= this.config.steps; s++) yield s;
  }

  /** Runs one step (training, or the final evaluation when step === config.steps) and records it. */
  step(step: number, onMiniBatch?: () => void): StepSummary {
    const c = this.config;
    const t0 = performance.now();
    const final = step === c.steps;
    const time: Record<string, number> = {};
    const metrics: Record<string, number> = {};
    const record: StepRecord = { step, wallTime: 0, metrics, episodes: [], tokens: step % c.tokenDetailEvery === 0 };

    if (c.eval.every > 0 && (step % c.eval.every === 0 || final)) {
      const te = performance.now();
      const ev = evaluate(this.env, c, this.policies, this.tokenizer, step);
      record.evaluations = ev.records;
      Object.assign(metrics, ev.metrics);
      time.eval = performance.now() - te;
    }

    let checkpoint: string | null = null;
    if (!final) {
      let t = performance.now();
      const episodes = createEpisodes(this.env, c, tasksForStep(this.env, c, step), c.rollout.groupSize, `s${step}`);
      const rollouts = runRollouts(episodes, { policies: this.policies, tokenizer: this.tokenizer }, {
        temperature: c.rollout.temperature,
        topP: c.rollout.topP,
        maxNewTokens: c.rollout.maxNewTokens,
        seed: mixSeed(c.seed, step, 1),
      });
      time.rollout = performance.now() - t;
      time.sampler = rollouts.samplerMs;

      t = performance.now();
      const data = buildStepData(rollouts, this.policies, this.tokenizer.padId, this.reference ?? undefined);
      const variant = getVariant(c.objective.algorithm);
      const prepared = prepareObjectiveBatch(data.batch, c.objective);
      time.old_logp = performance.now() - t;

      // A stop requested during the rollout abandons the step before any weight changes.
      onMiniBatch?.();
      this.dirty = true;
      t = performance.now();
      const update = runUpdate(prepared, data.members, c.objective, {
        policies: this.policies,
        optimizers: this.optimizers,
        config: c,
        padId: this.tokenizer.padId,
        seed: mixSeed(c.seed, step, 2),
        onMiniBatch,
      });
      time.update = performance.now() - t;

      Object.assign(metrics, rolloutMetrics(rollouts, data), batchMetrics(prepared, variant.advantageScope), update.metrics);
      for (const p of this.policies.policies()) metrics[`policy/${p.id}/version`] = p.version;
      record.episodes = episodeRecords(rollouts, data, prepared, update, c.rollout.groupSize);
      this.checkSkips(update.applied, update.skipped, update.lastSkipReason, step);

      if ((c.checkpointEvery > 0 && (step + 1) % c.checkpointEvery === 0) || step === c.steps - 1) {
        t = performance.now();
        checkpoint = saveRunCheckpoint(checkpointDir(this.options.runDir, step), this.policies, this.tokenizer, this.optimizers);
        record.checkpoint = { path: checkpoint };
        time.checkpoint = performance.now() - t;
      }
    }
    // Store time of the previous step (this step's own write is still to come).
    if (this.lastStoreMs) time.store_prev = this.lastStoreMs;
    const wallMs = performance.now() - t0;
    for (const [k, v] of Object.entries(time)) metrics[`time/${k}`] = v / 1000;
    metrics['time/step'] = wallMs / 1000;
    metrics['memory/tensors'] = tf.memory().numTensors;
    record.wallTime = Date.now();
    if (this.options.store && this.options.runId !== undefined) {
      const ts = performance.now();
      this.options.store.writeStep(this.options.runId, record);
      this.lastStoreMs = performance.now() - ts;
    }
    this.committed = step;
    this.committedHasCheckpoint = checkpoint !== null;
    this.dirty = false;
    return { step, final, metrics, checkpoint, wallMs };
  }

  /**
   * On a stop: checkpoints the last committed training step (when it has none yet) and records
   * it, so a resume continues from where the run stopped rather than from the last scheduled
   * checkpoint. Returns the directory, or null when there is nothing to save, or when a stop
   * abandoned an update midway (the weights are then ahead of the store and must not be saved:
   * the resume starts from the last checkpoint instead).
   */
  saveStopCheckpoint(): string | null {
    const step = this.committed;
    if (this.dirty || step < 0 || step >= this.config.steps || this.committedHasCheckpoint) return null;
    const dir = saveRunCheckpoint(checkpointDir(this.options.runDir, step), this.policies, this.tokenizer, this.optimizers);
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

  dispose(): void {
    for (const o of this.optimizers.values()) o.dispose();
    this.policies.dispose();
    this.reference?.dispose();
  }
}
