/**
 * LoRA dropout through the trainer's policy abstraction (src/core/policies/hf.ts `score`,
 * train/update.ts's training noise) on the tiny transformers-made Qwen3: only the update's
 * gradient pass drops (old log-probs, the KL reference and sampling never do); dropout 0 is the
 * plain forward bit for bit; micro-batches draw the same masks as one pass (rows keyed by member);
 * a resumed run equals the uninterrupted one; checkpoints carry lora_dropout in
 * adapter_config.json. The masks and the forward against the float64 reference:
 * test/core/models/hf/loraDropout.test.ts.
 */
import * as tf from '@tensorflow/tfjs';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../src/core/models/backend';
import { mulberry32 } from '../../../src/core/models/random';
import type { HfPolicies } from '../../../src/core/policies/hf';
import { openPolicies } from '../../../src/core/policies/registry';
import type { Policies } from '../../../src/core/policies/types';
import { objectiveConfig, prepareObjectiveBatch, type ObjectiveBatch } from '../../../src/core/srpo';
import { checkpointDir } from '../../../src/core/train/checkpoints';
import { AdamW } from '../../../src/core/train/optimizer';
import { Trainer } from '../../../src/core/train/trainer';
import { runUpdate, type MemberSample } from '../../../src/core/train/update';
import { hfRunConfig, LORA, MIXED_MATH, tinyQwenFolder } from './hfFixture';

let dir: string;
beforeAll(async () => {
  await initBackend({ requested: 'wasm' });
  dir = tinyQwenFolder();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DROPOUT = { ...LORA, dropout: 0.2 };
const read = (vars: ReadonlyMap<string, tf.Variable>) => new Map([...vars].map(([n, v]) => [n, Float32Array.from(v.dataSync())]));

/** Every lora_B set to seeded non-zero values, so the adapters (and their dropout) move the log-probs. */
function perturbB(p: Policies, id: string, seed: number): void {
  const rand = mulberry32(seed);
  for (const [name, v] of p.trainable(id))
    if (name.endsWith('lora_B'))
      v.assign(
        tf.tensor(
          Float32Array.from({ length: v.size }, () => rand() - 0.5),
          v.shape,
        ),
      );
}

function rowsFor(p: Policies) {
  const prompt = p.promptIds('shared', { role: 'solver', instruction: 'solver', prompt: 'What is 2 + 3?' }, 6);
  return [
    { prompt, completion: [40, 41, 42, 302] },
    { prompt, completion: [50, 51] },
  ];
}

function scoreRows(p: Policies, rows: ReturnType<typeof rowsFor>, noise?: { seed: number; rowKeys: number[] }): number[][] {
  const t = p.score('shared', rows, 4, noise);
  const v = t.arraySync() as number[][];
  t.dispose();
  return v.map((r, i) => r.slice(0, rows[i].completion.length));
}

/** A synthetic step of solver events, sampled and scored (old log-probs) by the policies. */
function syntheticStep(p: Policies, seed: number) {
  const rand = mulberry32(seed);
  const samples: MemberSample[] = [];
  const batch: ObjectiveBatch = { events: [], members: [] };
  for (let e = 0; e < 6; e++) {
    const k = e % 3 === 0 ? 2 : 1;
    batch.events.push({ id: `e${e}`, group: `t${e % 2}/solver`, reward: e < 3 ? 1 : 0, expectedK: k });
    const prompt = p.promptIds('shared', { role: 'solver', instruction: 'solver', prompt: `What is ${e} + ${Math.floor(rand() * 9)}?` }, 6);
    for (const row of p.sample(
      'shared',
      Array.from({ length: k }, () => prompt),
      { maxNewTokens: 6, temperature: 1, topP: 1, seed: seed * 100 + e },
    )) {
      samples.push({ policyId: 'shared', promptTokens: prompt, outputTokens: row.ids });
      batch.members.push({ event: `e${e}`, role: 'solver', logpCur: [], logpOld: [], mask: [] });
    }
  }
  const scored = p.scoreData(
    'shared',
    samples.map((s) => ({ prompt: s.promptTokens, completion: s.outputTokens })),
    'current',
  );
  batch.members.forEach((m, i) => Object.assign(m, { logpCur: scored.logp[i], logpOld: scored.logp[i], mask: scored.logp[i].map(() => 1) }));
  return { samples, batch };
}

function update(p: Policies, step: ReturnType<typeof syntheticStep>, microBatchRows: number) {
  const config = hfRunConfig(dir, { update: { epochs: 1, miniBatches: 1, microBatchRows }, optimizer: { lr: 1e-4 } });
  const optimizers = new Map(p.policies().map((q) => [q.id, new AdamW(p.trainable(q.id), config.optimizer)]));
  const objective = objectiveConfig({});
  const r = runUpdate(prepareObjectiveBatch(step.batch, objective), step.samples, objective, { policies: p, optimizers, config, padId: p.padId, seed: 5 });
  for (const o of optimizers.values()) o.dispose();
  return r;
}

describe('LoRA dropout in the trainer (policies/hf.ts, train/update.ts)', () => {
  it("only the update's gradient pass drops: old log-probs and the reference score without it; dropout 0 is the plain forward bit for bit", () => {
    const withDrop = openPolicies(hfRunConfig(dir, { policies: { adapter: DROPOUT }, kl: { coef: 0.1 } }), { baseDir: '/' }) as HfPolicies;
    const without = openPolicies(hfRunConfig(dir, { policies: { adapter: LORA }, kl: { coef: 0.1 } }), { baseDir: '/' }) as HfPolicies;
    try {
      perturbB(withDrop, 'shared', 1);
      perturbB(without, 'shared', 1);
      const rows = rowsFor(withDrop);
      const noise = { seed: 3, rowKeys: [0, 1] };
      const plain = scoreRows(withDrop, rows);
      const train = scoreRows(withDrop, rows, noise);
      expect(train).not.toEqual(plain);
      expect(Math.max(...train.flatMap((r, i) => r.map((v, j) => Math.abs(v - plain[i][j]))))).toBeGreaterThan(1e-4);
      expect(scoreRows(withDrop, rows, noise)).toEqual(train); // the same noise draws the same masks
      expect(scoreRows(withDrop, rows, { ...noise, seed: 4 })).not.toEqual(train);
      // The old log-probs (scoreData 'current') are the forward without dropout, as the sampler's policy.
      expect(withDrop.scoreData('shared', rows, 'current').logp).toEqual(plain);
      expect(withDrop.scoreData('shared', rows, 'reference').logp).toEqual(without.scoreData('shared', rows, 'reference').logp);
      // dropout 0: the update's noise changes nothing, bit for bit.
      expect(scoreRows(without, rows, noise)).toEqual(scoreRows(without, rows));
      expect(scoreRows(without, rows)).toEqual(plain); // the same B, so the same function without dropout
    } finally {
      withDrop.dispose();
      without.dispose();
    }
  });

  it('micro-batches draw the same masks as one pass (rows keyed by member): the same update; and not the dropout-free one', () => {
    const run = (adapter: typeof LORA | typeof DROPOUT, rows: number) => {
      const p = openPolicies(hfRunConfig(dir, { policies: { adapter } }), { baseDir: '/' }) as HfPolicies;
      try {
        perturbB(p, 'shared', 2);
        const r = update(p, syntheticStep(p, 7), rows);
        return { loss: r.metrics['loss/total'], norm: r.metrics['grad/norm'], weights: read(p.trainable('shared')) };
      } finally {
        p.dispose();
      }
    };
    const one = run(DROPOUT, 0);
    const split = run(DROPOUT, 2);
    const plain = run(LORA, 0);
    expect(split.loss).toBeCloseTo(one.loss, 5);
    expect(split.norm).toBeCloseTo(one.norm, 4);
    expect(one.norm).toBeGreaterThan(0);
    let moved = 0;
    for (const [name, v] of one.weights) {
      const w = split.weights.get(name)!;
      v.forEach((x, i) => expect(Math.abs(x - w[i]), name).toBeLessThan(1e-5));
      const q = plain.weights.get(name)!;
      moved = Math.max(moved, ...v.map((x, i) => Math.abs(x - q[i])));
    }
    expect(moved).toBeGreaterThan(1e-6); // dropout changed the update
    expect(Math.abs(one.norm - plain.norm)).toBeGreaterThan(1e-6 * plain.norm);
  });

  it('a resumed run equals the uninterrupted one (masks seeded from run seed, step, epoch and member); checkpoints say lora_dropout', async () => {
    const runDir = mkdtempSync(join(tmpdir(), 'srpo-hf-drop-'));
    const resumedRunDir = mkdtempSync(join(tmpdir(), 'srpo-hf-drop-'));
    const config = hfRunConfig(dir, { steps: 2, policies: { adapter: DROPOUT }, workflow: MIXED_MATH });
    const straight = new Trainer({ config, runDir, baseDir: '/' });
    try {
      await straight.step(0);
      const ckpt = checkpointDir(runDir, 0);
      expect(JSON.parse(readFileSync(join(ckpt, 'shared', 'adapter_config.json'), 'utf8')).lora_dropout).toBe(0.2);
      const s1 = await straight.step(1);
      expect(s1.metrics['grad/norm']).toBeGreaterThan(0); // not vacuous: the step really trained
      const resumed = new Trainer({ config, runDir: resumedRunDir, baseDir: '/', resume: { dir: ckpt, step: 0 } });
      try {
        const r1 = await resumed.step(1);
        const strip = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('time/') && !k.startsWith('memory/')));
        expect(strip(r1.metrics)).toEqual(strip(s1.metrics));
        expect(read(resumed.policies.trainable('shared'))).toEqual(read(straight.policies.trainable('shared')));
      } finally {
        resumed.dispose();
      }
    } finally {
      straight.dispose();
      rmSync(runDir, { recursive: true, force: true });
      rmSync(resumedRunDir, { recursive: true, force: true });
    }
  });
});
