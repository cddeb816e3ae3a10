/**
 * The policy update of one training step: several epochs over the step's complete events,
 * each split into event-atomic mini-batches (an event and all its members always travel
 * together; SRPO.md's event-atomic rule), one optimizer step per mini-batch.
 *
 * Per mini-batch: the current log-probs of every member come from the teacher-forced scorer of
 * the policy that produced it (models/logprobs.ts, the same code that computed the old
 * log-probs: SRPO.md point 2); rows are grouped by policy and the objective's event membership
 * follows that row order (no gather needed on wasm). Then the registry objective
 * (srpo/objective.ts), an optional k3 KL penalty to the frozen reference policy, the global
 * gradient norm (before clipping), clipping, and AdamW per policy. A non-finite loss or norm
 * skips the update (SRPO.md point 9) and is counted. One read-back per mini-batch: the metrics,
 * the per-event outcomes, each member's log-ratio and each member's per-token current log-probs
 * (the trace viewer colours tokens by log pi_cur - log pi_old from them).
 *
 * Tests: test/core/train/update.test.ts, test/core/train/trainer.test.ts.
 */
import * as tf from '@tensorflow/tfjs';
import type { RunConfig } from '../config';
import { scoreCompletions } from '../models/logprobs';
import type { PolicySet } from '../models/policySet';
import { mixSeed, mulberry32, permutation } from '../models/random';
import { buildObjectiveInputs, getVariant, type ObjectiveConfig, type PreparedBatch, type PreparedEvent, type PreparedMember } from '../srpo';
import type { AdamW } from './optimizer';

/** What the update needs of one member beyond the prepared batch (indexed by `source`). */
export interface MemberSample {
  policyId: string;
  promptTokens: number[];
  outputTokens: number[];
  /** Log-probs of the frozen reference policy (only with a KL penalty). */
  refLogp?: number[];
}

export interface EventOutcome {
  logRatio: number;
  ratio: number;
  clipped: 'low' | 'high' | null;
}

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
}

export interface UpdateContext {
  policies: PolicySet;
  optimizers: ReadonlyMap<string, AdamW>;
  config: RunConfig;
  padId: number;
  /** Seed of the step (epoch shuffles derive from it). */
  seed: number;
  /** Called after each mini-batch (pause/stop checks, progress). */
  onMiniBatch?: () => void;
}

interface SubBatch {
  prepared: PreparedBatch;
  /** Contiguous row ranges per policy, in row order. */
  groups: { policyId: string; rows: number[] }[];
  /** Sub event index -> full prepared event index; sub member row -> full prepared member index. */
  eventOf: number[];
  memberOf: number[];
}

/** Splits `order` into `parts` nearly equal, non-empty chunks. */
export function chunk<T>(order: readonly T[], parts: number): T[][] {
  const n = Math.min(parts, order.length);
  const out: T[][] = [];
  for (let i = 0; i < n; i++) out.push(order.slice(Math.floor((i * order.length) / n), Math.floor(((i + 1) * order.length) / n)));
  return out;
}

/** The mini-batch of the given events, its members grouped by policy (rows in policy order). */
export function subBatch(full: PreparedBatch, eventIdx: readonly number[], samples: readonly MemberSample[], policyIds: readonly string[]): SubBatch {
  const memberOf: number[] = [];
  const groups: SubBatch['groups'] = [];
  for (const policyId of policyIds) {
    const rows: number[] = [];
    for (const e of eventIdx) {
      for (const j of full.events[e].members) {
        if (samples[full.members[j].source].policyId === policyId) {
          rows.push(memberOf.length);
          memberOf.push(j);
        }
      }
    }
    if (rows.length) groups.push({ policyId, rows });
  }
  const subIndexOfEvent = new Map(eventIdx.map((e, i) => [e, i]));
  const events: PreparedEvent[] = eventIdx.map((e) => ({ ...full.events[e], members: [] }));
  const members: PreparedMember[] = memberOf.map((j, row) => {
    const m = full.members[j];
    const ev = subIndexOfEvent.get(m.event)!;
    events[ev].members.push(row);
    return { ...m, event: ev };
  });
  const maxLength = Math.max(1, ...members.map((m) => m.mask.length));
  return {
    prepared: { events, members, dropped: [], groups: full.groups, maxLength },
    groups,
    eventOf: [...eventIdx],
    memberOf,
  };
}

export function runUpdate(full: PreparedBatch, samples: readonly MemberSample[], objective: ObjectiveConfig, ctx: UpdateContext): UpdateResult {
  const result: UpdateResult = { metrics: {}, events: new Map(), memberLogRatios: new Map(), memberLogpCur: new Map(), applied: 0, skipped: 0, lastSkipReason: null };
  const sums: Record<string, number> = {};
  const { epochs, miniBatches } = ctx.config.update;
  for (let epoch = 0; epoch < epochs && full.events.length > 0; epoch++) {
    const order = permutation(full.events.length, mulberry32(mixSeed(ctx.seed, epoch)));
    for (const events of chunk(order, miniBatches)) {
      const sub = subBatch(full, events, samples, ctx.policies.ids());
      const r = updateMiniBatch(sub, samples, objective, ctx);
      if (r.skipReason) {
        result.skipped++;
        result.lastSkipReason = r.skipReason;
      } else {
        result.applied++;
        for (const [k, v] of Object.entries(r.metrics)) sums[k] = (sums[k] ?? 0) + v;
      }
      r.events.forEach((o, i) => result.events.set(sub.eventOf[i], o));
      r.memberLogRatios.forEach((l, row) => result.memberLogRatios.set(sub.memberOf[row], l));
      r.memberLogpCur.forEach((lp, row) => result.memberLogpCur.set(sub.memberOf[row], lp));
      ctx.onMiniBatch?.();
    }
  }
  for (const [k, v] of Object.entries(sums)) result.metrics[k] = v / result.applied;
  result.metrics['update/applied'] = result.applied;
  result.metrics['update/skipped'] = result.skipped;
  return result;
}

interface MiniBatchResult {
  metrics: Record<string, number>;
  events: EventOutcome[];
  memberLogRatios: number[];
  /** Per row: current log-probs of the member's tokens (a copy, member length). */
  memberLogpCur: Float32Array[];
  skipReason: string | null;
}

function updateMiniBatch(sub: SubBatch, samples: readonly MemberSample[], objective: ObjectiveConfig, ctx: UpdateContext): MiniBatchResult {
  const { prepared, groups } = sub;
  const T = prepared.maxLength;
  const E = prepared.events.length;
  const M = prepared.members.length;
  const klCoef = ctx.config.kl.coef;
  const paramOf = new Map<string, { policyId: string; name: string }>();
  const vars: tf.Variable[] = [];
  for (const g of groups) {
    for (const [name, v] of ctx.policies.get(g.policyId).model.params) {
      paramOf.set(v.name, { policyId: g.policyId, name });
      vars.push(v);
    }
  }
  let metricKeys: string[] = [];
  let perEvent = false;
  let packed: tf.Tensor | null = null;
  const { value, grads } = tf.variableGrads(() => {
    const parts = groups.map((g) =>
      scoreCompletions(
        ctx.policies.get(g.policyId).model,
        g.rows.map((row) => {
          const s = samples[prepared.members[row].source];
          return { prompt: s.promptTokens, completion: s.outputTokens };
        }),
        { padId: ctx.padId, minCompletionLength: T },
      ).logp,
    );
    const logpCur = (parts.length === 1 ? parts[0] : tf.concat(parts, 0)) as tf.Tensor2D; // [M, T] nats
    // The objective's own padded inputs (mask included) serve the KL term too; every tensor made
    // here is freed by variableGrads' scope once the gradients exist.
    const inputs = buildObjectiveInputs(prepared, objective, { logpCur });
    const out = getVariant(objective.algorithm).compute(inputs, objective);
    const mask = inputs.mask;
    let loss: tf.Scalar = out.loss;
    const extra: Record<string, tf.Scalar> = {};
    if (klCoef > 0) {
      const ref = tf.tensor2d(padRows(prepared.members.map((m) => samples[m.source].refLogp ?? m.logpOld), T), [M, T]);
      const d = tf.sub(ref, logpCur); // log(ref / cur), nats
      const k3 = tf.mul(tf.sub(tf.sub(tf.exp(d), d), 1), mask);
      const kl = tf.div(tf.sum(k3), Math.max(1, prepared.members.reduce((a, m) => a + m.length, 0))) as tf.Scalar;
      extra['kl/ref'] = kl;
      loss = tf.add(loss, tf.mul(kl, klCoef)) as tf.Scalar;
    }
    const metrics = { 'loss/policy': out.loss, ...out.metrics, ...extra, 'loss/total': loss };
    metricKeys = Object.keys(metrics);
    const pieces: tf.Tensor[] = [tf.stack(metricKeys.map((k) => metrics[k as keyof typeof metrics]))];
    if (out.perEvent) {
      perEvent = true;
      const p = out.perEvent;
      pieces.push(p.logRatio, p.ratio, p.clippedLow, p.clippedHigh);
    }
    pieces.push(tf.reshape(logpCur, [M * T]));
    packed = tf.keep(tf.concat(pieces));
    return loss;
  }, vars);
  const gradList = Object.values(grads);
  const norm = tf.tidy(() => tf.sqrt(tf.addN(gradList.map((g) => tf.sum(tf.square(g))))));
  const all = tf.tidy(() => tf.concat([tf.stack([value, norm]), packed!]));
  const values = all.dataSync<'float32'>(); // waits for the device: one read-back per mini-batch
  tf.dispose([all, norm, value, packed!]);

  const [loss, gradNorm] = [values[0], values[1]];
  const metrics: Record<string, number> = { 'grad/norm': gradNorm };
  metricKeys.forEach((k, i) => (metrics[k] = values[2 + i]));
  let at = 2 + metricKeys.length;
  const events: EventOutcome[] = [];
  if (perEvent) {
    for (let e = 0; e < E; e++) {
      events.push({
        logRatio: values[at + e],
        ratio: values[at + E + e],
        clipped: values[at + 2 * E + e] > 0 ? 'low' : values[at + 3 * E + e] > 0 ? 'high' : null,
      });
    }
    at += 4 * E;
  }
  const memberLogpCur = prepared.members.map((m, row) => values.slice(at + row * T, at + row * T + m.mask.length));
  // l_{e,j} = sum of masked (log pi_cur - log pi_old), from the values already read back.
  const memberLogRatios = prepared.members.map((m, row) => m.mask.reduce((a, w, t) => a + w * (memberLogpCur[row][t] - m.logpOld[t]), 0));

  const skipReason = !Number.isFinite(loss) ? `non-finite loss (${loss})` : !Number.isFinite(gradNorm) ? `non-finite gradient norm (${gradNorm})` : null;
  if (skipReason) {
    tf.dispose(gradList);
    return { metrics, events, memberLogRatios, memberLogpCur, skipReason };
  }
  const scale = Math.min(1, ctx.config.optimizer.gradClip / (gradNorm + 1e-6));
  metrics['grad/clip_scale'] = scale;
  const byPolicy = new Map<string, Map<string, tf.Tensor>>();
  for (const [varName, g] of Object.entries(grads)) {
    const { policyId, name } = paramOf.get(varName)!;
    if (!byPolicy.has(policyId)) byPolicy.set(policyId, new Map());
    byPolicy.get(policyId)!.set(name, scale === 1 ? g : tf.tidy(() => tf.mul(g, scale)));
  }
  for (const [policyId, g] of byPolicy) {
    ctx.optimizers.get(policyId)!.apply(g);
    ctx.policies.bumpVersion(policyId);
    if (scale !== 1) tf.dispose([...g.values()]);
  }
  tf.dispose(gradList);
  return { metrics, events, memberLogRatios, memberLogpCur, skipReason: null };
}

/** Rows padded with zeros to width T, flattened (a plain Float32Array for tf.tensor2d). */
function padRows(rows: readonly (readonly number[])[], T: number): Float32Array {
  const out = new Float32Array(rows.length * T);
  rows.forEach((r, i) => out.set(r, i * T));
  return out;
}
