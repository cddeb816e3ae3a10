/**
 * The policy update of one training step: several epochs over the step's complete events,
 * each split into event-atomic mini-batches (an event and all its members always travel
 * together; SRPO.md's event-atomic rule), one optimizer step per mini-batch.
 *
 * Per mini-batch: the current log-probs of every member come from the teacher-forced scorer of
 * the policy that produced it (`Policies.score`, the same scorer that computed the old
 * log-probs: SRPO.md point 2), in event-atomic micro-batches when update.microBatchRows asks or
 * the tape budget needs (gradients accumulated, denominators the whole mini-batch's); rows are grouped by policy and
 * the objective's event membership follows that row order (no gather needed on wasm). Then the
 * registry objective (srpo/objective.ts), an optional k3 KL penalty to the frozen reference policy, the global
 * gradient norm (before clipping), clipping, and AdamW per policy. A non-finite loss or norm
 * skips the update (SRPO.md point 9) and is counted. One read-back per mini-batch: the metrics,
 * the per-event outcomes, each member's log-ratio and each member's per-token current log-probs
 * (the trace viewer colours tokens by log pi_cur - log pi_old from them).
 *
 * Mini- and micro-batch index arithmetic: miniBatches.ts; the KL term: klReference.ts.
 * Tests: test/core/train/update.test.ts, test/core/train/trainer.test.ts.
 */
import * as tf from '@tensorflow/tfjs';
import type { RunConfig } from '../config';
import { mixSeed, mulberry32, permutation } from '../models/random';
import type { Policies } from '../policies/types';
import {
  buildObjectiveInputs,
  getVariant,
  objectiveTotals,
  SURROGATE_METRIC_COMBINE,
  type MetricCombine,
  type ObjectiveConfig,
  type PreparedBatch,
} from '../srpo';
import { packOutputs, unpackOutputs, type EventOutcome, type PackLayout } from '../srpo/readBack';
import type { ObjectiveTotals } from '../srpo/tensors';
import type { AdamW } from './optimizer';
import { klToReference, padRows, referenceLogp } from './klReference';
import { chunk, microBatches, subBatch, tapeFits, type MemberSample, type SubBatch } from './miniBatches';

export type { EventOutcome, MemberSample };
export { chunk, microBatches, subBatch };

export interface UpdateResult {
  /** Objective diagnostics averaged over the applied updates, plus grad/norm, update/* counts. */
  metrics: Record<string, number>;
  /** Per prepared event: set log-ratio, ratio and clip state at its last mini-batch (per-event variants). */
  events: Map<number, EventOutcome>;
  /** Per prepared member: l_{e,j} at its last mini-batch (nats). */
  memberLogRatios: Map<number, number>;
  /**
   * Per prepared member: log pi_cur of each generated token at its last mini-batch (nats, the
   * values the loss saw, before that mini-batch's optimizer step), trimmed to the member's length.
   * Masked positions included; the masked sum of (logpCur - logpOld) is memberLogRatios' value.
   */
  memberLogpCur: Map<number, Float32Array>;
  applied: number;
  skipped: number;
  /** Why the last skipped update was skipped. */
  lastSkipReason: string | null;
  /** Forward/backward passes run: one per micro-batch of every mini-batch. */
  passes: number;
}

export interface UpdateContext {
  /** The run's policies (src/core/policies). */
  policies: Policies;
  optimizers: ReadonlyMap<string, AdamW>;
  config: RunConfig;
  padId: number;
  /** Seed of the step (epoch shuffles derive from it). */
  seed: number;
  /** Called after each mini-batch (pause/stop checks, progress). */
  onMiniBatch?: () => void;
}

export function runUpdate(full: PreparedBatch, samples: readonly MemberSample[], objective: ObjectiveConfig, ctx: UpdateContext): UpdateResult {
  const result: UpdateResult = {
    metrics: {},
    events: new Map(),
    memberLogRatios: new Map(),
    memberLogpCur: new Map(),
    applied: 0,
    skipped: 0,
    lastSkipReason: null,
    passes: 0,
  };
  // The step's metrics over its applied optimizer steps: the mean, but the extremes (ratio/min,
  // ratio/max) the step's extreme, as the catalogue describes them.
  const sums: Record<string, number> = {};
  const extremes: Record<string, number> = {};
  const policies = ctx.policies;
  const { epochs, miniBatches } = ctx.config.update;
  for (let epoch = 0; epoch < epochs && full.events.length > 0; epoch++) {
    const order = permutation(full.events.length, mulberry32(mixSeed(ctx.seed, epoch)));
    // Training-only randomness (LoRA dropout): each member draws once per epoch, keyed by itself (policies/types.ts TrainingNoise).
    const noiseSeed = mixSeed(ctx.seed, TRAINING_NOISE, epoch);
    for (const events of chunk(order, miniBatches)) {
      const r = updateMiniBatch({ full, eventIdx: events, samples, objective, update: ctx, policies, noiseSeed });
      result.passes += r.passes;
      if (r.skipReason) {
        result.skipped++;
        result.lastSkipReason = r.skipReason;
      } else {
        result.applied++;
        for (const [k, v] of Object.entries(r.metrics)) {
          const rule = MICRO_BATCH_COMBINE[k];
          if (rule === 'min' || rule === 'max') extremes[k] = extremes[k] === undefined ? v : Math[rule](extremes[k], v);
          else sums[k] = (sums[k] ?? 0) + v;
        }
      }
      r.events.forEach((o, e) => result.events.set(e, o));
      r.memberLogRatios.forEach((l, j) => result.memberLogRatios.set(j, l));
      r.memberLogpCur.forEach((lp, j) => result.memberLogpCur.set(j, lp));
      ctx.onMiniBatch?.();
    }
  }
  for (const [k, v] of Object.entries(sums)) result.metrics[k] = v / result.applied;
  Object.assign(result.metrics, extremes);
  result.metrics['update/applied'] = result.applied;
  result.metrics['update/skipped'] = result.skipped;
  result.metrics['update/passes'] = result.passes;
  return result;
}

/** Salt of the training-noise seed (apart from the epoch shuffles' mixSeed(seed, epoch)). */
const TRAINING_NOISE = 0xd50;

/** One mini-batch of an update: its events and what it shares with the update's other mini-batches. */
interface MiniBatchContext {
  /** The step's prepared batch (every complete event). */
  full: PreparedBatch;
  /** The mini-batch's events: indices into full.events, in the epoch's shuffled order. */
  eventIdx: readonly number[];
  /** Every sampled member of the step, by prepared member source index. */
  samples: readonly MemberSample[];
  objective: ObjectiveConfig;
  update: UpdateContext;
  /** The run's policies. */
  policies: Policies;
  /** Seed of the epoch's training-only randomness (LoRA dropout). */
  noiseSeed: number;
}

/** The mini-batch's denominators, which every micro-batch divides by (SRPO.md point 7). */
interface MiniBatchTotals {
  totals: ObjectiveTotals;
  /** Generated tokens of the whole mini-batch (the KL's denominator, >= 1). */
  klTokens: number;
}

interface MiniBatchResult {
  metrics: Record<string, number>;
  /** By full prepared event index. */
  events: Map<number, EventOutcome>;
  /** By full prepared member index. */
  memberLogRatios: Map<number, number>;
  /** By full prepared member index: current log-probs of the member's tokens (a copy, member length). */
  memberLogpCur: Map<number, Float32Array>;
  skipReason: string | null;
  /** Micro-batches (forward/backward passes) the mini-batch ran in. */
  passes: number;
}

/**
 * How a micro-batch's metrics make the mini-batch's: the losses, the KL term and the objective's
 * means are already divided by the whole mini-batch's totals, so they add up; the ratio's extremes
 * take the extreme. A metric not listed here is an error (it would need a rule).
 */
const MICRO_BATCH_COMBINE: Readonly<Record<string, MetricCombine>> = {
  'loss/policy': 'sum',
  'loss/total': 'sum',
  'kl/ref': 'sum',
  ...SURROGATE_METRIC_COMBINE,
};

/** `value` combined into `into[key]` by MICRO_BATCH_COMBINE. */
function combineMetric(into: Record<string, number>, key: string, value: number): void {
  const rule = MICRO_BATCH_COMBINE[key];
  if (!rule) throw new Error(`update: metric ${key} has no micro-batch rule (MICRO_BATCH_COMBINE)`);
  const prev = into[key];
  into[key] = prev === undefined ? value : rule === 'sum' ? prev + value : rule === 'min' ? Math.min(prev, value) : Math.max(prev, value);
}

/**
 * One optimizer step on the events `eventIdx` of `full`: the summed gradients of its micro-batches
 * (`accumulate`), their global norm (`globalGradNorm`), then, unless the loss or the norm is not
 * finite, the clip and AdamW per policy (`applyClipped`).
 */
function updateMiniBatch(mb: MiniBatchContext): MiniBatchResult {
  const { policies } = mb;
  const mini = subBatch(mb.full, mb.eventIdx, mb.samples, policies.ids());
  const { out, grads, loss, skip } = accumulate(mb, mini);
  const paramOf = new Map<string, { policyId: string; name: string }>();
  for (const g of mini.groups) for (const [name, v] of policies.trainable(g.policyId)) paramOf.set(v.name, { policyId: g.policyId, name });
  const gradNorm = globalGradNorm(grads, paramOf);
  out.metrics['grad/norm'] = gradNorm;
  out.skipReason =
    skip ?? (!Number.isFinite(loss) ? `non-finite loss (${loss})` : !Number.isFinite(gradNorm) ? `non-finite gradient norm (${gradNorm})` : null);
  if (!out.skipReason) out.metrics['grad/clip_scale'] = applyClipped(grads, paramOf, gradNorm, mb.update, policies);
  tf.dispose([...grads.values()]);
  return out;
}

/**
 * The forward/backward of each micro-batch (update.microBatchRows, the tape budget) of the mini-batch, each with
 * the WHOLE mini-batch's denominators (srpo/tensors.ts ObjectiveTotals; the KL's token count
 * likewise), so the summed gradients and losses equal those of one pass over the mini-batch
 * (SRPO.md point 7). Their metrics combine by MICRO_BATCH_COMBINE.
 * Returns the summed gradients by variable name (the caller owns them).
 */
function accumulate(mb: MiniBatchContext, mini: SubBatch) {
  const { full, eventIdx, samples, policies } = mb;
  const denominators: MiniBatchTotals = {
    totals: objectiveTotals(mini.prepared, mb.objective),
    klTokens: Math.max(
      1,
      mini.prepared.members.reduce((a, m) => a + m.length, 0),
    ),
  };
  const out: MiniBatchResult = { metrics: {}, events: new Map(), memberLogRatios: new Map(), memberLogpCur: new Map(), skipReason: null, passes: 0 };
  const grads = new Map<string, tf.Tensor>(); // by variable name
  let loss = 0;
  let skip: string | null = null;
  const micros = microBatches(full, eventIdx, mb.update.config.update.microBatchRows, tapeFits(full, samples, policies));
  out.passes = micros.length;
  for (const micro of micros) {
    // One micro-batch (the default, microBatchRows 0) holds the mini-batch's events in its order: reuse it.
    const sub = micros.length === 1 ? mini : subBatch(full, micro, samples, policies.ids());
    const r = microStep(mb, sub, denominators);
    loss += r.loss;
    for (const [k, v] of Object.entries(r.metrics)) combineMetric(out.metrics, k, v);
    r.events.forEach((o, i) => out.events.set(sub.eventOf[i], o));
    r.memberLogRatios.forEach((l, row) => out.memberLogRatios.set(sub.memberOf[row], l));
    r.memberLogpCur.forEach((lp, row) => out.memberLogpCur.set(sub.memberOf[row], lp));
    for (const [name, g] of r.grads) {
      const prev = grads.get(name);
      if (prev) {
        grads.set(name, tf.add(prev, g));
        tf.dispose([prev, g]);
      } else grads.set(name, g);
    }
    if (!Number.isFinite(r.loss)) skip ??= `non-finite loss (${r.loss})`;
  }
  return { out, grads, loss, skip };
}

/**
 * The global gradient norm (before clipping), summed in the order of (policy, parameter name):
 * names that are the same in every process, so a resumed run (whose variables may have been
 * created in another order) rounds the norm identically. Waits for the device.
 */
function globalGradNorm(grads: ReadonlyMap<string, tf.Tensor>, paramOf: ReadonlyMap<string, { policyId: string; name: string }>): number {
  const key = (varName: string) => `${paramOf.get(varName)!.policyId}/${paramOf.get(varName)!.name}`;
  const ordered = [...grads].sort(([a], [b]) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)).map(([, g]) => g);
  const norm = tf.tidy(() => tf.sqrt(tf.addN(ordered.map((g) => tf.sum(tf.square(g)))))); // []
  const value = norm.dataSync()[0];
  norm.dispose();
  return value;
}

/**
 * Clips the gradients to optimizer.gradClip by their global norm and applies AdamW per policy (its version
 * bumped); returns the clip scale. The caller still owns `grads`.
 */
function applyClipped(
  grads: ReadonlyMap<string, tf.Tensor>,
  paramOf: ReadonlyMap<string, { policyId: string; name: string }>,
  gradNorm: number,
  ctx: UpdateContext,
  policies: Policies,
): number {
  const scale = Math.min(1, ctx.config.optimizer.gradClip / (gradNorm + 1e-6));
  const byPolicy = new Map<string, Map<string, tf.Tensor>>();
  for (const [varName, g] of grads) {
    const { policyId, name } = paramOf.get(varName)!;
    if (!byPolicy.has(policyId)) byPolicy.set(policyId, new Map());
    byPolicy.get(policyId)!.set(name, scale === 1 ? g : tf.tidy(() => tf.mul(g, scale)));
  }
  for (const [policyId, g] of byPolicy) {
    ctx.optimizers.get(policyId)!.apply(g);
    policies.bumpVersion(policyId);
    if (scale !== 1) tf.dispose([...g.values()]);
  }
  return scale;
}

interface MicroStepResult {
  loss: number;
  metrics: Record<string, number>;
  events: EventOutcome[];
  memberLogRatios: number[];
  /** Per row: current log-probs of the member's tokens (a copy, member length). */
  memberLogpCur: Float32Array[];
  /** Gradients by variable name (the caller owns them). */
  grads: Map<string, tf.Tensor>;
}

/** Forward and backward of one micro-batch against the mini-batch's totals; one read-back (srpo/readBack.ts). */
function microStep(mb: MiniBatchContext, sub: SubBatch, { totals, klTokens }: MiniBatchTotals): MicroStepResult {
  const { samples, objective, policies, noiseSeed } = mb;
  const { prepared, groups } = sub;
  const T = prepared.maxLength;
  const M = prepared.members.length;
  const klCoef = mb.update.config.kl.coef;
  // Checked before any tensor exists: a member without reference log-probs has no KL term.
  const ref =
    klCoef > 0
      ? padRows(
          prepared.members.map((m) => referenceLogp(samples, m.source, klCoef)),
          T,
        )
      : null;
  const vars: tf.Variable[] = [];
  for (const g of groups) vars.push(...policies.trainable(g.policyId).values());
  let layout = {} as PackLayout; // set inside variableGrads
  let packed: tf.Tensor | null = null;
  const { value, grads } = tf.variableGrads(() => {
    const parts = groups.map((g) =>
      policies.score(
        g.policyId,
        g.rows.map((row) => {
          const s = samples[prepared.members[row].source];
          return { prompt: s.promptTokens, completion: s.outputTokens };
        }),
        T,
        { seed: noiseSeed, rowKeys: g.rows.map((row) => prepared.members[row].source) },
      ),
    );
    const logpCur = (parts.length === 1 ? parts[0] : tf.concat(parts, 0)) as tf.Tensor2D; // [M, T] nats
    // The objective's own padded inputs (mask included) serve the KL term too; every tensor made
    // here is freed by variableGrads' scope once the gradients exist.
    const inputs = buildObjectiveInputs(prepared, objective, { logpCur, totals });
    const out = getVariant(objective.algorithm).compute(inputs, objective);
    const scalars: Record<string, tf.Scalar> = { 'loss/policy': out.loss, ...out.metrics };
    let loss: tf.Scalar = out.loss;
    if (ref) {
      const kl = klToReference(tf.tensor2d(ref, [M, T]), logpCur, inputs.mask, klTokens);
      scalars['kl/ref'] = kl;
      loss = tf.add(loss, tf.mul(kl, klCoef)) as tf.Scalar;
    }
    scalars['loss/total'] = loss;
    const p = packOutputs(scalars, out.perEvent, [logpCur]);
    layout = p.layout;
    packed = tf.keep(p.packed);
    return loss;
  }, vars);
  const values = packed!.dataSync<'float32'>(); // waits for the device: one read-back per micro-batch
  tf.dispose([value, packed!]);

  const { scalars: metrics, events, extras } = unpackOutputs(values, layout);
  const logpCur = extras[0]; // [M * T]
  const memberLogpCur = prepared.members.map((m, row) => logpCur.slice(row * T, row * T + m.mask.length));
  // l_{e,j} = sum of masked (log pi_cur - log pi_old), from the values already read back.
  const memberLogRatios = prepared.members.map((m, row) => m.mask.reduce((a, w, t) => a + w * (memberLogpCur[row][t] - m.logpOld[t]), 0));
  return { loss: metrics['loss/total'], metrics, events: events ?? [], memberLogRatios, memberLogpCur, grads: new Map(Object.entries(grads)) };
}
