/**
 * The policy update on a synthetic step (random prompts and outputs scored by real tiny
 * policies: the lab's character model as a Hugging Face folder, full fine-tuning, shared or one
 * copy per role; rewards that differ within groups): event-atomic mini-batches grouped by policy,
 * ratios exactly 1 before the first update (the old log-probs come from the same scorer), every
 * parameter of a trained policy moves and versions count optimizer steps, a non-finite loss
 * skips the update and changes nothing, the k3 KL penalty to the reference adds exactly its
 * hand-computed value (one pass or micro-batched), a KL penalty without reference log-probs is an
 * error, and no tensor leaks.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { resolveRunConfig } from '../../../src/core/config';
import { mulberry32 } from '../../../src/core/models';
import type { HfPolicies } from '../../../src/core/policies/hf';
import { ALGORITHMS, computeObjective, objectiveConfig, prepareObjectiveBatch, type ObjectiveBatch } from '../../../src/core/srpo';
import { AdamW } from '../../../src/core/train/optimizer';
import { runUpdate, subBatch, type MemberSample } from '../../../src/core/train/update';
import { labPolicies } from './labPolicies';

/** A policy's trainable weights, read back, by name. */
const readTrainable = (policies: HfPolicies, id: string) => new Map([...policies.trainable(id)].map(([n, v]) => [n, Float32Array.from(v.dataSync())]));

function synthetic(seed: number, sharing: 'shared' | 'per-role' = 'per-role') {
  const rand = mulberry32(seed);
  const policies = labPolicies({ sharing, seed });
  const samples: (MemberSample & { role: string })[] = [];
  const batch: ObjectiveBatch = { events: [], members: [] };
  for (let e = 0; e < 8; e++) {
    const k = e % 2 === 0 ? 1 + Math.floor(rand() * 3) : 1;
    const role = e % 2 === 0 ? 'solver' : 'verifier';
    batch.events.push({ id: `e${e}`, group: `task${e % 4 < 2 ? 0 : 1}/${role}`, reward: Math.round(rand() * 4) / 4, expectedK: k });
    for (let j = 0; j < k; j++) {
      const len = 2 + Math.floor(rand() * 10);
      samples.push({
        role,
        policyId: policies.policyFor(role).id,
        promptTokens: [1, ...Array.from({ length: 5 }, () => 12 + Math.floor(rand() * 90))],
        outputTokens: Array.from({ length: len }, () => 12 + Math.floor(rand() * 90)),
      });
      batch.members.push({ event: `e${e}`, role, logpCur: [], logpOld: [], mask: [] });
    }
  }
  for (const id of policies.ids()) {
    const idx = samples.map((s, i) => (s.policyId === id ? i : -1)).filter((i) => i >= 0);
    if (idx.length === 0) continue; // per-role: the roles this step has no member of
    // The old log-probs as the trainer makes them (train/stepData.ts): the policy's own scorer, no tape.
    const scored = policies.scoreData(
      id,
      idx.map((i) => ({ prompt: samples[i].promptTokens, completion: samples[i].outputTokens })),
      'current',
    );
    idx.forEach((i, r) => {
      const lp = scored.logp[r].slice(0, samples[i].outputTokens.length);
      Object.assign(batch.members[i], { logpCur: lp, logpOld: lp, mask: lp.map(() => 1) });
    });
  }
  return { policies, samples, batch };
}

/** The policies this step's members belong to (per-role: solver and verifier only). */
const trained = (policies: HfPolicies, samples: readonly MemberSample[]) => policies.policies().filter((p) => samples.some((s) => s.policyId === p.id));

function context(policies: HfPolicies, update: { epochs: number; miniBatches: number; microBatchRows?: number }, kl = { coef: 0 }) {
  const config = resolveRunConfig({ update, optimizer: { lr: 1e-2 }, kl });
  const optimizers = new Map(policies.policies().map((p) => [p.id, new AdamW(policies.trainable(p.id), config.optimizer)]));
  return { config, optimizers, ctx: { policies, optimizers, config, padId: 0, seed: 3 } };
}

describe('event-atomic policy update', () => {
  it('builds mini-batches of whole events with rows grouped by policy', () => {
    const { policies, samples, batch } = synthetic(1);
    const prepared = prepareObjectiveBatch(batch, objectiveConfig({}));
    const sub = subBatch(prepared, [0, 2, 3, 6], samples, policies.ids());
    sub.prepared.events.forEach((ev) => expect(ev.members).toHaveLength(ev.k));
    expect(sub.prepared.members).toHaveLength([0, 2, 3, 6].reduce((a, e) => a + prepared.events[e].k, 0));
    const rowPolicies = sub.prepared.members.map((m) => samples[m.source].policyId);
    expect(rowPolicies).toEqual([...rowPolicies].sort((a, b) => policies.ids().indexOf(a) - policies.ids().indexOf(b)));
    sub.groups.forEach((g) => g.rows.forEach((r) => expect(rowPolicies[r]).toBe(g.policyId)));
    policies.dispose();
  });

  it('starts from ratio 1 exactly: the update scores with the code that made the old log-probs', async () => {
    const { policies, samples, batch } = synthetic(2);
    const objective = objectiveConfig({});
    const prepared = prepareObjectiveBatch(batch, objective);
    const { ctx, optimizers } = context(policies, { epochs: 1, miniBatches: 1 });
    const r = runUpdate(prepared, samples, objective, ctx);
    const expected = await computeObjective(batch, objective);
    expect(r.metrics['loss/policy']).toBeCloseTo(expected.loss, 5);
    expect(r.metrics['ratio/mean']).toBeCloseTo(1, 5);
    expect(r.metrics['clip/frac']).toBe(0);
    [...r.events.values()].forEach((e) => expect(e.ratio).toBeCloseTo(1, 5));
    for (const o of optimizers.values()) o.dispose();
    policies.dispose();
  });

  it('moves every parameter of each trained policy, counts versions, and lets ratios leave 1', () => {
    const { policies, samples, batch } = synthetic(3);
    const objective = objectiveConfig({});
    const prepared = prepareObjectiveBatch(batch, objective);
    expect(prepared.events.some((e) => e.advantage !== 0)).toBe(true);
    const before = new Map(policies.policies().map((p) => [p.id, readTrainable(policies, p.id)]));
    const { ctx, optimizers } = context(policies, { epochs: 2, miniBatches: 2 });
    const r = runUpdate(prepared, samples, objective, ctx);
    expect(r.applied).toBe(4);
    expect(r.skipped).toBe(0);
    const moved = trained(policies, samples);
    expect(moved.map((p) => p.id).sort()).toEqual(['solver', 'verifier']);
    for (const p of policies.policies()) {
      if (!moved.includes(p)) {
        // A role with no member this step: its copy is untouched and its version stays.
        expect(p.version, p.id).toBe(0);
        expect(readTrainable(policies, p.id), p.id).toEqual(before.get(p.id));
        continue;
      }
      expect(p.version).toBeGreaterThanOrEqual(2);
      expect(p.version).toBeLessThanOrEqual(4);
      const after = readTrainable(policies, p.id);
      for (const [name, values] of before.get(p.id)!) {
        expect(
          values.some((v, i) => v !== after.get(name)![i]),
          `${p.id}.${name} moved`,
        ).toBe(true);
      }
    }
    expect([...r.events.values()].some((e) => Math.abs(e.ratio - 1) > 1e-4)).toBe(true);
    expect(r.memberLogRatios.size).toBe(prepared.members.length);
    for (const [k, v] of Object.entries(r.metrics)) expect(Number.isFinite(v), k).toBe(true);
    for (const o of optimizers.values()) o.dispose();
    policies.dispose();
  });

  it('reads back per-token current log-probs: equal to the old ones before any step, summing to the member log-ratio after', () => {
    const { policies, samples, batch } = synthetic(6);
    const objective = objectiveConfig({});
    const prepared = prepareObjectiveBatch(batch, objective);
    const first = context(policies, { epochs: 1, miniBatches: 1 });
    const r1 = runUpdate(prepared, samples, objective, first.ctx);
    expect(r1.applied).toBe(1);
    expect(r1.memberLogpCur.size).toBe(prepared.members.length);
    prepared.members.forEach((m, j) => {
      const cur = r1.memberLogpCur.get(j)!;
      expect(cur).toBeInstanceOf(Float32Array);
      expect(cur.length).toBe(m.mask.length);
      cur.forEach((v, t) => expect(Math.abs(v - m.logpOld[t]), `member ${j} token ${t}`).toBeLessThan(1e-5));
    });
    for (const o of first.optimizers.values()) o.dispose();

    // More updates on the moved policies: l_{e,j} is the masked sum of the token log-ratios.
    const more = context(policies, { epochs: 3, miniBatches: 2 });
    const r2 = runUpdate(prepared, samples, objective, more.ctx);
    expect(r2.applied).toBe(6);
    let moved = 0;
    prepared.members.forEach((m, j) => {
      const cur = r2.memberLogpCur.get(j)!;
      expect(cur.length).toBe(m.mask.length);
      let sum = 0;
      cur.forEach((v, t) => (sum += m.mask[t] * (v - m.logpOld[t])));
      expect(Math.abs(sum - r2.memberLogRatios.get(j)!), `member ${j}`).toBeLessThan(1e-4);
      if (Math.abs(sum) > 1e-3) moved++;
    });
    expect(moved).toBeGreaterThan(0);
    for (const o of more.optimizers.values()) o.dispose();
    policies.dispose();
  });

  it('skips an update whose loss is not finite, changing nothing', () => {
    const { policies, samples, batch } = synthetic(4, 'shared');
    const objective = objectiveConfig({});
    const prepared = prepareObjectiveBatch(batch, objective);
    const head = policies.trainable('shared').get('lm_head.weight')!;
    tf.tidy(() => head.assign(tf.fill(head.shape, NaN)));
    const poisoned = readTrainable(policies, 'shared');
    const { ctx, optimizers } = context(policies, { epochs: 1, miniBatches: 2 });
    const r = runUpdate(prepared, samples, objective, ctx);
    expect(r.applied).toBe(0);
    expect(r.skipped).toBe(2);
    expect(r.lastSkipReason).toMatch(/non-finite/);
    expect(policies.get('shared').version).toBe(0);
    const after = readTrainable(policies, 'shared');
    expect(after.get('model.embed_tokens.weight')).toEqual(poisoned.get('model.embed_tokens.weight'));
    expect(after).toEqual(poisoned);
    for (const o of optimizers.values()) o.dispose();
    policies.dispose();
  });

  // Reference log-probs = old + d per token, d cycling through these (nats). Before any step
  // log pi_cur = log pi_old, so each token's k3 term is exp(d) - d - 1.
  const DELTAS = [0.5, -0.25, 0.1];
  const withReference = (samples: MemberSample[], batch: ObjectiveBatch) =>
    samples.map((s, i) => ({ ...s, refLogp: batch.members[i].logpOld.map((v, t) => v + DELTAS[(i + t) % 3]) }));
  const handKl = (batch: ObjectiveBatch) => {
    let sum = 0;
    let tokens = 0;
    batch.members.forEach((m, i) =>
      m.logpOld.forEach((_, t) => {
        const d = DELTAS[(i + t) % 3];
        sum += Math.exp(d) - d - 1;
        tokens++;
      }),
    );
    return sum / tokens;
  };

  it('adds the k3 KL to the reference by the hand-computed amount, in one pass or micro-batched', async () => {
    const coef = 0.5;
    for (const microBatchRows of [0, 2]) {
      const { policies, samples, batch } = synthetic(7);
      const objective = objectiveConfig({});
      const prepared = prepareObjectiveBatch(batch, objective);
      expect(prepared.events.reduce((a, e) => a + e.members.length, 0)).toBe(batch.members.length); // every member counts
      const expectedKl = handKl(batch);
      expect(expectedKl).toBeGreaterThan(0.02);
      const { ctx, optimizers } = context(policies, { epochs: 1, miniBatches: 1, microBatchRows }, { coef });
      const r = runUpdate(prepared, withReference(samples, batch), objective, ctx);
      expect(r.applied).toBe(1);
      expect(r.metrics['kl/ref']).toBeCloseTo(expectedKl, 5);
      expect(r.metrics['loss/total'] - r.metrics['loss/policy']).toBeCloseTo(coef * expectedKl, 5);
      expect(r.metrics['loss/policy']).toBeCloseTo((await computeObjective(batch, objective)).loss, 5);
      for (const o of optimizers.values()) o.dispose();
      policies.dispose();
    }
  });

  it('reports every metric of a micro-batched update as one pass does, for every variant (the means add up, the extremes take the extreme)', () => {
    for (const algorithm of ALGORITHMS) {
      const [one, split] = [0, 2].map((microBatchRows) => {
        const { policies, samples, batch } = synthetic(11);
        const objective = objectiveConfig({ algorithm });
        const { ctx, optimizers } = context(policies, { epochs: 2, miniBatches: 1, microBatchRows });
        const r = runUpdate(prepareObjectiveBatch(batch, objective), samples, objective, ctx);
        for (const o of optimizers.values()) o.dispose();
        policies.dispose();
        return r.metrics;
      });
      expect(split['update/passes'], algorithm).toBeGreaterThan(one['update/passes']);
      expect(one['ratio/max'], algorithm).toBeGreaterThan(one['ratio/min']); // the second epoch moved the ratios
      for (const [k, v] of Object.entries(one)) if (k !== 'update/passes') expect(split[k], `${algorithm} ${k}`).toBeCloseTo(v, 4);
    }
  });

  it("reports the step's extreme ratios over all its optimizer steps (not the mean of each one's extremes)", () => {
    const { policies, samples, batch } = synthetic(5);
    const objective = objectiveConfig({});
    // One epoch of two mini-batches: each event's ratio is read in exactly one optimizer step.
    const { ctx, optimizers } = context(policies, { epochs: 1, miniBatches: 2 });
    const r = runUpdate(prepareObjectiveBatch(batch, objective), samples, objective, ctx);
    expect(r.applied).toBe(2);
    const ratios = [...r.events.values()].map((e) => e.ratio);
    // The first mini-batch scores before any step (every ratio 1); the second after one.
    expect(ratios.some((x) => Math.abs(x - 1) > 1e-4)).toBe(true);
    expect(r.metrics['ratio/min']).toBeCloseTo(Math.min(...ratios), 5);
    expect(r.metrics['ratio/max']).toBeCloseTo(Math.max(...ratios), 5);
    for (const o of optimizers.values()) o.dispose();
    policies.dispose();
  });

  it('refuses a KL penalty without reference log-probs (never the old log-probs in their place)', () => {
    const { policies, samples, batch } = synthetic(8);
    const objective = objectiveConfig({});
    const prepared = prepareObjectiveBatch(batch, objective);
    const { ctx, optimizers } = context(policies, { epochs: 1, miniBatches: 1 }, { coef: 0.5 });
    const before = tf.memory().numTensors;
    expect(() => runUpdate(prepared, samples, objective, ctx)).toThrow(
      /kl\.coef is 0\.5 but member sample \d+ \(policy \S+\) has no reference log-probs \(MemberSample\.refLogp\)/,
    );
    expect(tf.memory().numTensors).toBe(before);
    for (const p of policies.policies()) expect(p.version).toBe(0);
    for (const o of optimizers.values()) o.dispose();
    policies.dispose();
  });

  it('leaks no tensors, and the policies and optimizers free all of theirs when disposed', () => {
    const start = tf.memory().numTensors;
    const { policies, samples, batch } = synthetic(5);
    const objective = objectiveConfig({ algorithm: 'grpo_token' });
    const prepared = prepareObjectiveBatch(batch, objective);
    const { ctx, optimizers } = context(policies, { epochs: 1, miniBatches: 2 });
    runUpdate(prepared, samples, objective, ctx);
    const before = tf.memory().numTensors;
    runUpdate(prepared, samples, objective, ctx);
    runUpdate(prepared, samples, objectiveConfig({ algorithm: 'srpo', dualClip: 3 }), ctx);
    expect(tf.memory().numTensors).toBe(before);
    for (const o of optimizers.values()) o.dispose();
    policies.dispose();
    expect(tf.memory().numTensors).toBe(start);
  });
});
