/**
 * Packs a PreparedBatch into the tensors every variant works on. Members are rows of padded
 * [M, T] matrices; events are reached through a one-hot [E, M] membership matrix, so that
 * per-event sums are one plain 2-D matmul (fast on wasm, and differentiable there: wasm has no
 * UnsortedSegmentSum kernel, which a gather/segment-sum gradient would need).
 *
 * The caller owns the result and frees it with `disposeObjectiveInputs`. When the trainer passes
 * its own `logpCur` (the policy's differentiable output) that tensor is not disposed here.
 */
import * as tf from '@tensorflow/tfjs';
import type { ObjectiveConfig } from './config';
import { REDUCTION_WEIGHT, SET_NORM_SCALE } from './scales';
import type { PreparedBatch } from './types';

export interface ObjectiveInputs {
  /** log pi_cur of each member token; the tensor gradients are taken with respect to. */
  logpCur: tf.Tensor2D; // [M, T] nats
  /** Behaviour log-probs. */
  logpOld: tf.Tensor2D; // [M, T] nats
  /** Loss mask: 1 on generated tokens, 0 elsewhere (and on padding). */
  mask: tf.Tensor2D; // [M, T]
  /** Row e has a 1 in the column of each member of event e. */
  membership: tf.Tensor2D; // [E, M]
  /** A_e, event scope. */
  eventAdvantage: tf.Tensor1D; // [E]
  /** Advantage per member (A_e broadcast, or the role-scoped one for Dr. MAS). */
  memberAdvantage: tf.Tensor1D; // [M]
  /** c(K_e) of the configured set normalisation. */
  setScale: tf.Tensor1D; // [E]
  /** Reduction weight w_e of the configured reduction. */
  eventWeight: tf.Tensor1D; // [E]
  /** n_{e,j}, masked tokens per member. */
  memberLength: tf.Tensor1D; // [M]
  /** Denominators of the reductions, plain numbers (>= 1; see `denominators`). */
  totals: ObjectiveTotals;
  /** Whether logpCur belongs to the caller (not freed by disposeObjectiveInputs). */
  ownsLogpCur: boolean;
}

/**
 * Denominators of the mini-batch averages. SRPO.md point 7: they must be those of the whole
 * mini-batch, so a trainer that splits a mini-batch into micro-batches passes the mini-batch's
 * totals here and sums the micro-batch losses. Each is floored at 1: a total of 0 means every
 * numerator is 0 too, so the loss is 0 rather than NaN.
 */
export interface ObjectiveTotals {
  /** sum_e w_e (SRPO reductions). */
  eventWeight: number;
  /** Masked tokens (token-level variants). */
  tokens: number;
  /** Members (member-level variants). */
  members: number;
  /** Events (SRPO's per-event diagnostics). */
  events: number;
}

export function objectiveTotals(batch: PreparedBatch, config: ObjectiveConfig): ObjectiveTotals {
  const weight = REDUCTION_WEIGHT[config.reduction];
  return {
    eventWeight: Math.max(
      1,
      batch.events.reduce((a, e) => a + weight(e), 0),
    ),
    tokens: Math.max(
      1,
      batch.members.reduce((a, m) => a + m.length, 0),
    ),
    members: Math.max(1, batch.members.length),
    events: Math.max(1, batch.events.length),
  };
}

/** Padded [M, T] float32 matrix of one member field; positions past a member's end are 0. */
export function padMembers(batch: PreparedBatch, field: 'logpCur' | 'logpOld' | 'mask'): tf.Tensor2D {
  const m = batch.members.length;
  const t = batch.maxLength;
  const out = new Float32Array(m * t);
  batch.members.forEach((mem, i) => out.set(mem[field], i * t));
  return tf.tensor2d(out, [m, t]);
}

export function buildObjectiveInputs(
  batch: PreparedBatch,
  config: ObjectiveConfig,
  options: { logpCur?: tf.Tensor2D; totals?: ObjectiveTotals } = {},
): ObjectiveInputs {
  const e = batch.events.length;
  const m = batch.members.length;
  if (options.logpCur && (options.logpCur.shape[0] !== m || options.logpCur.shape[1] !== batch.maxLength)) {
    throw new Error(`objective: logpCur has shape [${options.logpCur.shape}], expected [${m}, ${batch.maxLength}]`);
  }
  const membership = new Float32Array(e * m);
  batch.members.forEach((mem, j) => (membership[mem.event * m + j] = 1));
  const scale = SET_NORM_SCALE[config.setNorm];
  const weight = REDUCTION_WEIGHT[config.reduction];
  return {
    logpCur: options.logpCur ?? padMembers(batch, 'logpCur'),
    logpOld: padMembers(batch, 'logpOld'),
    mask: padMembers(batch, 'mask'),
    membership: tf.tensor2d(membership, [e, m]),
    eventAdvantage: tf.tensor1d(batch.events.map((ev) => ev.advantage)),
    memberAdvantage: tf.tensor1d(batch.members.map((mem) => mem.advantage)),
    setScale: tf.tensor1d(batch.events.map((ev) => scale(ev.k))),
    eventWeight: tf.tensor1d(batch.events.map((ev) => weight(ev))),
    memberLength: tf.tensor1d(batch.members.map((mem) => mem.length)),
    totals: options.totals ?? objectiveTotals(batch, config),
    ownsLogpCur: !options.logpCur,
  };
}

export function disposeObjectiveInputs(x: ObjectiveInputs): void {
  const { logpCur, totals: _t, ownsLogpCur, ...rest } = x;
  if (ownsLogpCur) logpCur.dispose();
  for (const t of Object.values(rest)) (t as tf.Tensor).dispose();
}
