/**
 * Gradients of the fast path with respect to the current log-probs: against central finite
 * differences of the float64 reference; exactly zero where the clip (or the ±20 clamp) is
 * active and on masked tokens; SRPO with K = 1 equal to sequence-level PPO's gradient; and the
 * whole-mini-batch denominator (SRPO.md point 7) making micro-batch gradients add up.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import {
  ALGORITHMS,
  objectiveConfig,
  objectiveForTraining,
  objectiveTotals,
  prepareObjectiveBatch,
  referenceObjective,
  type ObjectiveBatch,
  type ObjectiveConfigInput,
  type PreparedBatch,
} from '../../../src/core/srpo';
import { randomBatch } from './randomBatch';

/** d loss / d logpCur from tfjs, as rows of the prepared batch. */
function tfGradient(batch: ObjectiveBatch, config: ObjectiveConfigInput): { grad: number[][]; prepared: PreparedBatch } {
  const cfg = objectiveConfig(config);
  const prepared = prepareObjectiveBatch(batch, cfg);
  const t = prepared.maxLength;
  const cur = tf.tensor2d(
    prepared.members.flatMap((m) => [...m.logpCur, ...new Array(t - m.logpCur.length).fill(0)]),
    [prepared.members.length, t],
  );
  const g = tf.tidy(() => tf.grad((x: tf.Tensor) => objectiveForTraining(prepared, x as tf.Tensor2D, cfg).loss)(cur));
  const rows = g.arraySync() as number[][];
  g.dispose();
  cur.dispose();
  return { grad: rows, prepared };
}

/** Central differences of the reference loss, same layout. */
function numericGradient(batch: ObjectiveBatch, config: ObjectiveConfigInput, prepared: PreparedBatch, h = 1e-6): number[][] {
  return prepared.members.map((m) =>
    m.logpCur.map((_, t) => {
      const cur = batch.members[m.source].logpCur;
      const saved = cur[t];
      cur[t] = saved + h;
      const up = referenceObjective(batch, config).loss;
      cur[t] = saved - h;
      const down = referenceObjective(batch, config).loss;
      cur[t] = saved;
      return (up - down) / (2 * h);
    }),
  );
}

/** Keeps batches away from the clip kinks so finite differences are meaningful. */
function awayFromKinks(batch: ObjectiveBatch, config: ObjectiveConfigInput): boolean {
  const cfg = objectiveConfig(config);
  const ref = referenceObjective(batch, config);
  const edges = [Math.log(1 - cfg.clipLow), Math.log(1 + cfg.clipHigh), 20, -20];
  return ref.events.every((e) => e.logRatio === undefined || edges.every((x) => Math.abs(e.logRatio! - x) > 1e-3));
}

describe('objective gradients', () => {
  for (const algorithm of ALGORITHMS) {
    it(`${algorithm}: tfjs gradient matches finite differences of the reference`, () => {
      let checked = 0;
      for (let seed = 11; checked < 3; seed++) {
        const batch = randomBatch(seed, { events: 6, maxLen: 12, scales: [0.01, 0.05, 0.2] });
        const config = { algorithm, clipHigh: 0.28 };
        if (!awayFromKinks(batch, config)) continue;
        const { grad, prepared } = tfGradient(batch, config);
        const numeric = numericGradient(batch, config, prepared);
        const scale = Math.max(1e-3, ...numeric.flat().map(Math.abs));
        grad.forEach((row, i) => numeric[i].forEach((n, t) => expect(Math.abs(row[t] - n), `seed ${seed} member ${i} token ${t}`).toBeLessThan(2e-3 * scale)));
        expect(numeric.flat().some((v) => v !== 0)).toBe(true); // the check is not vacuous
        checked++;
      }
    });
  }

  it('is exactly zero for members of clipped or clamped events and on masked tokens', () => {
    const member = (event: string, delta: number, mask = [1, 1, 0]) => ({
      event,
      role: 'solver',
      logpOld: [-1, -2, -3],
      logpCur: [-1 + delta, -2 + delta, -3 + 5],
      mask,
    });
    const batch: ObjectiveBatch = {
      events: [
        { id: 'high', group: 'g', reward: 1, expectedK: 2 }, // A > 0, rho >> 1.2: clipped high
        { id: 'low', group: 'g', reward: 0, expectedK: 1 }, // A < 0, rho << 0.8: clipped low
        { id: 'clamp', group: 'g', reward: 0, expectedK: 1 }, // A < 0, L > 20: unclipped side, clamped
        { id: 'free', group: 'g', reward: 1, expectedK: 1 }, // A > 0, inside: non-zero gradient
      ],
      members: [member('high', 0.5), member('high', 0.5), member('low', -0.5), member('clamp', 15), member('free', 0.01)],
    };
    const { grad, prepared } = tfGradient(batch, {});
    const ids = prepared.members.map((m) => prepared.events[m.event].id);
    grad.forEach((row, i) => {
      expect(Math.abs(row[2]), 'masked token').toBe(0);
      if (ids[i] === 'free') expect(Math.abs(row[0])).toBeGreaterThan(0);
      else expect(row.slice(0, 2).map(Math.abs), ids[i]).toEqual([0, 0]);
    });
  });

  it('SRPO with K = 1 has the gradient of sequence-level PPO-clip', () => {
    const batch = randomBatch(3, { events: 10, maxK: 1, maxLen: 16, scales: [0.01, 0.1, 0.5] });
    const srpo = tfGradient(batch, { algorithm: 'srpo' });
    const ppo = tfGradient(batch, { algorithm: 'grpo_seq', grouping: 'event' }); // same advantages as SRPO
    // And by hand: d(-psi/N)/d logp_t = -A rho m_t / N while unclipped, else 0.
    const n = srpo.prepared.events.length;
    const ref = referenceObjective(batch);
    srpo.grad.forEach((row, i) => {
      const m = srpo.prepared.members[i];
      const ev = ref.events[m.event];
      row.forEach((g, t) => {
        expect(g).toBeCloseTo(ppo.grad[i][t], 6);
        const hand = ev.clipped || t >= m.mask.length ? 0 : (-m.advantage * ev.ratio! * m.mask[t]) / n;
        expect(g).toBeCloseTo(hand, 5);
      });
    });
  });

  it('uses the whole mini-batch denominator, so micro-batch gradients add up to the full one', () => {
    const batch = randomBatch(21, { events: 8, maxLen: 10, scales: [0.01, 0.1] });
    for (const config of [{ algorithm: 'srpo' as const, reduction: 'token' as const }, { algorithm: 'grpo_token' as const }]) {
      const full = tfGradient(batch, config);
      const cfg = objectiveConfig(config);
      const totals = objectiveTotals(full.prepared, cfg);
      const half = Math.floor(batch.events.length / 2);
      const parts = [batch.events.slice(0, half), batch.events.slice(half)].map((events) => {
        const ids = new Set(events.map((e) => e.id));
        const sub: ObjectiveBatch = { events, members: batch.members.filter((m) => ids.has(m.event)) };
        // Advantages come from the whole batch: reuse them by preparing the full batch and slicing.
        const prepared = full.prepared;
        const keep = prepared.events.map((e, i) => (ids.has(e.id) ? i : -1)).filter((i) => i >= 0);
        const subPrepared: PreparedBatch = {
          ...prepared,
          events: keep.map((i) => ({ ...prepared.events[i], members: [] as number[] })),
          members: [],
        };
        keep.forEach((ei, newE) =>
          prepared.events[ei].members.forEach((mj) => {
            subPrepared.events[newE].members.push(subPrepared.members.length);
            subPrepared.members.push({ ...prepared.members[mj], event: newE });
          }),
        );
        const t = prepared.maxLength;
        const cur = tf.tensor2d(
          subPrepared.members.flatMap((m) => [...m.logpCur, ...new Array(t - m.logpCur.length).fill(0)]),
          [subPrepared.members.length, t],
        );
        const g = tf.tidy(() => tf.grad((x: tf.Tensor) => objectiveForTraining(subPrepared, x as tf.Tensor2D, cfg, totals).loss)(cur));
        const rows = g.arraySync() as number[][];
        tf.dispose([g, cur]);
        expect(sub.events.length).toBe(events.length);
        return { rows, sources: subPrepared.members.map((m) => m.source) };
      });
      const bySource = new Map<number, number[]>();
      for (const p of parts) p.rows.forEach((row, i) => bySource.set(p.sources[i], row));
      full.grad.forEach((row, i) => {
        const other = bySource.get(full.prepared.members[i].source)!;
        row.forEach((g, t) => expect(other[t]).toBeCloseTo(g, 7));
      });
    }
  });

  it('leaks no tensors in loss, metrics and gradient', () => {
    const batch = randomBatch(4);
    for (const algorithm of ALGORITHMS) tfGradient(batch, { algorithm }); // warm up kernels
    const before = tf.memory().numTensors;
    for (const algorithm of ALGORITHMS) tfGradient(batch, { algorithm });
    const cfg = objectiveConfig({ dualClip: 3 });
    const prepared = prepareObjectiveBatch(batch, cfg);
    const cur = tf.zeros([prepared.members.length, prepared.maxLength]) as tf.Tensor2D;
    tf.tidy(() => {
      const out = objectiveForTraining(prepared, cur, cfg);
      return [out.loss, ...Object.values(out.metrics)];
    }).forEach((t) => t.dispose());
    cur.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });
});
