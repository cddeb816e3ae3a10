/**
 * Per-role FULL fine-tuning of a Hugging Face model (src/core/policies/hf.ts, memoryCheck.ts) on
 * the tiny transformers-made Qwen3: one frozen base loaded once (the KL reference), one trainable
 * copy of every weight per role cloned from it; an update moves only the acting role's copy; the
 * checkpoint is one float32 transformers folder per role and a resumed run equals the
 * uninterrupted one; the memory check counts one copy per role and refuses, before loading, a
 * run that does not fit, naming the figures and pointing to LoRA. Export of a role's folder goes
 * through the engine: test/engine/hfRunFullDropout.test.ts.
 */
import * as tf from '@tensorflow/tfjs';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../src/core/models/backend';
import { readHfConfig } from '../../../src/core/models/hf/config';
import { hfParameterCount } from '../../../src/core/models/hf/memory';
import { mulberry32 } from '../../../src/core/models/random';
import type { HfPolicies } from '../../../src/core/policies/hf';
import { hfMemoryPlan, MEMORY_ENV, residentBytes } from '../../../src/core/policies/memoryCheck';
import { openPolicies } from '../../../src/core/policies/registry';
import type { Policies } from '../../../src/core/policies/types';
import { objectiveConfig, prepareObjectiveBatch, type ObjectiveBatch } from '../../../src/core/srpo';
import { checkpointDir } from '../../../src/core/train/checkpoints';
import { AdamW } from '../../../src/core/train/optimizer';
import { Trainer } from '../../../src/core/train/trainer';
import { runUpdate, type MemberSample } from '../../../src/core/train/update';
import { hfRunConfig, MIXED_MATH, tinyQwenFolder } from './hfFixture';

let dir: string;
beforeAll(async () => {
  await initBackend({ requested: 'wasm' });
  dir = tinyQwenFolder();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PER_ROLE_FULL = { sharing: 'per-role', adapter: null } as const;
const read = (vars: ReadonlyMap<string, tf.Variable>) => new Map([...vars].map(([n, v]) => [n, Float32Array.from(v.dataSync())]));
const ROLE_IDS = ['router', 'solver', 'verifier', 'aggregator', 'searcher', 'answerer'];

/** A synthetic step of solver events only (sampled and old-scored by the solver's policy). */
function solverStep(p: Policies, seed: number) {
  const rand = mulberry32(seed);
  const samples: MemberSample[] = [];
  const batch: ObjectiveBatch = { events: [], members: [] };
  for (let e = 0; e < 6; e++) {
    const k = e % 3 === 0 ? 2 : 1;
    batch.events.push({ id: `e${e}`, group: `t${e % 2}/solver`, reward: e < 3 ? 1 : 0, expectedK: k });
    const prompt = p.promptIds('solver', { role: 'solver', instruction: 'solver', prompt: `What is ${e} + ${Math.floor(rand() * 9)}?` }, 6);
    for (const row of p.sample(
      'solver',
      Array.from({ length: k }, () => prompt),
      { maxNewTokens: 6, temperature: 1, topP: 1, seed: seed * 100 + e },
    )) {
      samples.push({ policyId: 'solver', promptTokens: prompt, outputTokens: row.ids });
      batch.members.push({ event: `e${e}`, role: 'solver', logpCur: [], logpOld: [], mask: [] });
    }
  }
  const scored = p.scoreData(
    'solver',
    samples.map((s) => ({ prompt: s.promptTokens, completion: s.outputTokens })),
    'current',
  );
  batch.members.forEach((m, i) => Object.assign(m, { logpCur: scored.logp[i], logpOld: scored.logp[i], mask: scored.logp[i].map(() => 1) }));
  return { samples, batch };
}

describe('per-role full fine-tuning of a Hugging Face model', () => {
  it('one frozen base, one trainable copy per role starting equal to it; an update moves only the acting role; the reference stays the base', () => {
    const p = openPolicies(hfRunConfig(dir, { policies: PER_ROLE_FULL, kl: { coef: 0.1 } }), { baseDir: '/' }) as HfPolicies;
    try {
      expect(p.ids()).toEqual(ROLE_IDS);
      expect([...p.model.params.values()].every((v) => !v.trainable)).toBe(true);
      expect(p.describe()).toMatch(/full fine-tuning per role: 6 trainable copies of every weight beside one frozen base/);
      const base = read(p.model.params);
      const before = new Map(ROLE_IDS.map((id) => [id, read(p.trainable(id))]));
      const seen = new Set<string>();
      for (const id of ROLE_IDS) {
        const vars = p.trainable(id);
        expect(vars.size, id).toBe(p.model.params.size);
        for (const [name, v] of vars) {
          expect(v.trainable, `${id} ${name}`).toBe(true);
          expect(seen.has(v.name), `${id} ${name} is its own variable`).toBe(false);
          seen.add(v.name);
          expect(before.get(id)!.get(name), `${id} ${name} starts as the base`).toEqual(base.get(name));
        }
      }
      const step = solverStep(p, 3);
      const rows = step.samples.slice(0, 3).map((s) => ({ prompt: s.promptTokens, completion: s.outputTokens }));
      const ref0 = p.scoreData('solver', rows, 'reference').logp;
      expect(p.scoreData('solver', rows, 'current').logp).toEqual(ref0); // step 0: the copy is the base
      const config = hfRunConfig(dir, { update: { epochs: 1, miniBatches: 1 }, optimizer: { lr: 1e-3 } });
      const optimizers = new Map(p.policies().map((q) => [q.id, new AdamW(p.trainable(q.id), config.optimizer)]));
      const objective = objectiveConfig({});
      const n0 = tf.memory().numTensors;
      const r = runUpdate(prepareObjectiveBatch(step.batch, objective), step.samples, objective, { policies: p, optimizers, config, padId: p.padId, seed: 5 });
      expect(tf.memory().numTensors).toBe(n0);
      for (const o of optimizers.values()) o.dispose();
      expect(r.applied).toBe(1);
      expect(r.metrics['grad/norm']).toBeGreaterThan(0);
      const moved = [...read(p.trainable('solver'))].filter(([n, v]) => v.some((x, i) => x !== before.get('solver')!.get(n)![i])).map(([n]) => n);
      expect(moved.length).toBe(p.model.params.size); // every weight of the acting role
      for (const id of ROLE_IDS.filter((x) => x !== 'solver')) expect(read(p.trainable(id)), `${id} untouched`).toEqual(before.get(id));
      expect(read(p.model.params)).toEqual(base);
      expect(p.get('solver').version).toBe(1);
      expect(p.get('verifier').version).toBe(0);
      expect(p.scoreData('solver', rows, 'reference').logp).toEqual(ref0);
      expect(p.scoreData('solver', rows, 'current').logp).not.toEqual(ref0);
      expect(p.scoreData('verifier', rows, 'current').logp).toEqual(ref0);
    } finally {
      p.dispose();
    }
  });

  it('checkpoints one float32 transformers folder per role; a resumed run equals the uninterrupted one', async () => {
    const runDir = mkdtempSync(join(tmpdir(), 'srpo-hf-prf-'));
    const resumedRunDir = mkdtempSync(join(tmpdir(), 'srpo-hf-prf-'));
    const config = hfRunConfig(dir, { steps: 2, policies: PER_ROLE_FULL, workflow: MIXED_MATH, optimizer: { lr: 1e-3 } });
    const straight = new Trainer({ config, runDir, baseDir: '/' });
    try {
      await straight.step(0);
      const ckpt = checkpointDir(runDir, 0);
      expect(JSON.parse(readFileSync(join(ckpt, 'policies.json'), 'utf8'))).toMatchObject({ modelKind: 'hf', sharing: 'per-role', policies: ROLE_IDS });
      for (const id of ROLE_IDS) {
        expect(JSON.parse(readFileSync(join(ckpt, id, 'policy.json'), 'utf8'))).toMatchObject({ policyId: id, kind: 'full' });
        expect(JSON.parse(readFileSync(join(ckpt, id, 'config.json'), 'utf8')).dtype).toBe('float32');
        expect(readHfConfig(join(ckpt, id)).hiddenSize).toBe(32);
      }
      expect(existsSync(join(ckpt, 'solver', 'optimizer.safetensors'))).toBe(true);
      const versionsAt0 = straight.policies.policies().map((q) => q.version);
      expect(versionsAt0.some((v) => v > 0)).toBe(true);
      const s1 = await straight.step(1);
      expect(s1.metrics['grad/norm']).toBeGreaterThan(0); // not vacuous: the step really trained
      const resumed = new Trainer({ config, runDir: resumedRunDir, baseDir: '/', resume: { dir: ckpt, step: 0 } });
      try {
        expect(resumed.policies.policies().map((q) => q.version)).toEqual(versionsAt0);
        const r1 = await resumed.step(1);
        const strip = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('time/') && !k.startsWith('memory/')));
        expect(strip(r1.metrics)).toEqual(strip(s1.metrics));
        for (const id of ROLE_IDS) expect(read(resumed.policies.trainable(id)), id).toEqual(read(straight.policies.trainable(id)));
      } finally {
        resumed.dispose();
      }
    } finally {
      straight.dispose();
      rmSync(runDir, { recursive: true, force: true });
      rmSync(resumedRunDir, { recursive: true, force: true });
    }
  });

  it('the memory check counts the frozen base plus one full copy, AdamW and gradient per role, and refuses before loading with the figures and LoRA as the way out', () => {
    const config = readHfConfig(dir);
    const w = hfParameterCount(config) * 4; // bytes of one float32 copy
    const plan = hfMemoryPlan({ sharing: 'per-role', lora: null, reference: true });
    expect(plan).toEqual({ policies: 6, lora: null, referenceCopy: false, ownCopies: true }); // the frozen base is the reference: no second load
    expect(residentBytes(config, plan)).toEqual({ base: w, trainable: 6 * (w + 2 * w + w), total: w + 24 * w });
    // Shared full fine-tuning: the base is the policy (+ its frozen reference with a KL penalty).
    expect(residentBytes(config, hfMemoryPlan({ sharing: 'shared', lora: null, reference: true }))).toEqual({ base: 2 * w, trainable: 3 * w, total: 5 * w });

    const before = tf.memory().numTensors;
    const limit = String(10 * w); // shared full fits, six copies do not
    process.env[MEMORY_ENV] = limit;
    try {
      expect(() => openPolicies(hfRunConfig(dir, { policies: PER_ROLE_FULL, kl: { coef: 0.1 } }), { baseDir: '/' })).toThrow(
        new RegExp(
          `model ${dir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} does not fit the wasm backend's memory: it needs at least ${((25 * w) / 1e9).toFixed(2).replace('.', '\\.')} GB resident .* for 6 per-role full copies of the model \\(per-role full fine-tuning\\)\\), the backend has ${((10 * w) / 1e9).toFixed(2).replace('.', '\\.')} GB \\(SRPO_LAB_MEMORY_BYTES\\).*Try policies\\.adapter\\.kind=lora \\(one frozen base, one small adapter per role\\)`,
        ),
      );
      expect(tf.memory().numTensors).toBe(before); // refused before a weight was read
      const shared = openPolicies(hfRunConfig(dir, { policies: { sharing: 'shared', adapter: null }, kl: { coef: 0.1 } }), { baseDir: '/' });
      shared.dispose();
    } finally {
      delete process.env[MEMORY_ENV];
    }
  });
});
