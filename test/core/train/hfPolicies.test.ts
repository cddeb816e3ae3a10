/**
 * The trainer's policy abstraction on a real (tiny, transformers-made) Qwen3 checkpoint:
 * LoRA adapters over one frozen base, shared and per-role; the step-0 policy equal to the base;
 * an update moving every adapter factor of the trained policies and nothing else (the base and
 * the other roles' adapters unchanged); micro-batches with the mini-batch's denominators giving
 * the same update as one pass; chat prompts rendered by the model's template from the roles'
 * system messages; checkpoints in peft's format that resume exactly; the bad inputs of issue 14
 * point 7 refused with errors that say what to change. Also which folder a run opens
 * (policies.init, or with init null a seeded lab folder of the configured shape) and a resume of a
 * checkpoint of the removed lab Transformer refused, saying what to do.
 */
import * as tf from '@tensorflow/tfjs';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertPresetModelFolder, presetConfig } from '../../../src/core/config';
import { labShapeOf } from '../../../src/core/config/labShape';
import { initBackend } from '../../../src/core/models/backend';
import { readHfConfig } from '../../../src/core/models/hf/config';
import { scoreChunkRows } from '../../../src/core/models/hf/memory';
import { labModelDir } from '../../../src/core/models/hf/labCache';
import { readLoraAdapter } from '../../../src/core/models/hf/loraFiles';
import { mulberry32 } from '../../../src/core/models/random';
import { HfPolicies } from '../../../src/core/policies/hf';
import { checkModelFits, MEMORY_ENV } from '../../../src/core/policies/memoryCheck';
import { hfModelDir, openPolicies } from '../../../src/core/policies/registry';
import type { Policies } from '../../../src/core/policies/types';
import { objectiveConfig, prepareObjectiveBatch, type ObjectiveBatch } from '../../../src/core/srpo';
import { checkpointDir, savePoliciesCheckpoint } from '../../../src/core/train/checkpoints';
import { AdamW } from '../../../src/core/train/optimizer';
import { memoryMetrics, Trainer } from '../../../src/core/train/trainer';
import { runUpdate, type MemberSample } from '../../../src/core/train/update';
import { CHAT_SYSTEM_PROMPTS } from '../../../src/core/workflows/chatPrompts';
import { INSTRUCTION_NAMES } from '../../../src/core/workflows/prompts';
import { hfRunConfig, LORA, MIXED_MATH, tinyQwenFolder } from './hfFixture';

let dir: string;
beforeAll(async () => {
  await initBackend({ requested: 'wasm' }); // the CPU backend takes minutes for ~400-token chat prompts
  dir = tinyQwenFolder();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const read = (vars: ReadonlyMap<string, tf.Variable>) => new Map([...vars].map(([n, v]) => [n, Float32Array.from(v.dataSync())]));
const baseValues = (p: HfPolicies) => new Map([...p.model.params].map(([n, v]) => [n, Float32Array.from(v.dataSync())]));

/** A synthetic step over the given roles: prompts from the chat template, sampled ids, rewards that differ within groups. */
function syntheticStep(policies: Policies, roles: ('solver' | 'verifier')[], seed: number) {
  const rand = mulberry32(seed);
  const samples: MemberSample[] = [];
  const batch: ObjectiveBatch = { events: [], members: [] };
  for (let e = 0; e < 6; e++) {
    const role = roles[e % roles.length];
    const k = e % 3 === 0 ? 2 : 1;
    batch.events.push({ id: `e${e}`, group: `t${e % 2}/${role}`, reward: e < 3 ? 1 : 0, expectedK: k });
    const policyId = policies.policyFor(role).id;
    const prompt = policies.promptIds(policyId, { role, instruction: role, prompt: `What is ${e} + ${Math.floor(rand() * 9)}?` }, 6);
    const rows = policies.sample(
      policyId,
      Array.from({ length: k }, () => prompt),
      { maxNewTokens: 6, temperature: 1, topP: 1, seed: seed * 100 + e },
    );
    for (const row of rows) {
      samples.push({ policyId, promptTokens: prompt, outputTokens: row.ids });
      batch.members.push({ event: `e${e}`, role, logpCur: [], logpOld: [], mask: [] });
    }
  }
  for (const id of policies.ids()) {
    const idx = samples.map((s, i) => (s.policyId === id ? i : -1)).filter((i) => i >= 0);
    if (!idx.length) continue;
    const scored = policies.scoreData(
      id,
      idx.map((i) => ({ prompt: samples[i].promptTokens, completion: samples[i].outputTokens })),
      'current',
    );
    idx.forEach((i, r) => Object.assign(batch.members[i], { logpCur: scored.logp[r], logpOld: scored.logp[r], mask: scored.logp[r].map(() => 1) }));
  }
  return { samples, batch };
}

function update(policies: Policies, step: ReturnType<typeof syntheticStep>, u: { epochs: number; miniBatches: number; microBatchRows?: number }) {
  const config = hfRunConfig(dir, { update: u, optimizer: { lr: 1e-4 } }); // small: a large first step clips every ratio of the second
  const optimizers = new Map(policies.policies().map((p) => [p.id, new AdamW(policies.trainable(p.id), config.optimizer)]));
  const objective = objectiveConfig({});
  const numTensors = tf.memory().numTensors;
  const r = runUpdate(prepareObjectiveBatch(step.batch, objective), step.samples, objective, { policies, optimizers, config, padId: policies.padId, seed: 5 });
  const leaked = tf.memory().numTensors - numTensors;
  for (const o of optimizers.values()) o.dispose();
  return Object.assign(r, { leaked });
}

describe('Hugging Face policies (LoRA over one frozen base)', () => {
  it('opens the folder policies.init names, or with init null a seeded lab folder of the configured shape', () => {
    expect(hfModelDir(hfRunConfig(dir), '/')).toBe(dir);
    const lab = hfRunConfig(dir, { policies: { adapter: null, init: null, modelOverrides: { dModel: 32, nLayers: 1, nHeads: 2, contextLength: 64 } } });
    expect(hfModelDir(lab, '/')).toBe(labModelDir(labShapeOf(lab), lab.seed));
    const p = openPolicies(lab, { baseDir: '/' }) as HfPolicies;
    try {
      // The lab's character model in the family: Llama-style, d32 x 1, full heads, the 108-token character vocabulary.
      expect(p.modelKind).toBe('hf');
      expect(p.config).toMatchObject({ architecture: 'llama', hiddenSize: 32, numLayers: 1, numHeads: 2, numKvHeads: 2, vocabSize: 108, maxPositions: 128 });
      expect(p.tokenizer.vocabSize).toBe(108);
      const ids = p.promptIds('shared', { role: 'verifier', instruction: 'verifier', prompt: 'Check 1+1=2.' }, 6);
      expect(p.tokenizer.decode(ids)).toBe('<bos><verifier>Check 1+1=2.');
    } finally {
      p.dispose();
    }
  });

  it('refuses to resume a checkpoint of the removed lab Transformer, saying what to do, and an unknown model kind', () => {
    const root = mkdtempSync(join(tmpdir(), 'srpo-lab-ckpt-'));
    try {
      writeFileSync(join(root, 'policies.json'), JSON.stringify({ modelKind: 'lab', sharing: 'shared', policies: [] }));
      expect(() => openPolicies(hfRunConfig(dir), { baseDir: '/', resumeDir: root })).toThrow(
        /model kind "lab".*do not convert.*start a new run from the same preset/,
      );
      writeFileSync(join(root, 'policies.json'), JSON.stringify({ modelKind: 'gpt2' }));
      expect(() => openPolicies(hfRunConfig(dir), { baseDir: '/', resumeDir: root })).toThrow(/policies\.json: field "modelKind" is "gpt2"; valid: hf/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('starts equal to the base: adapters added as peft does (B = 0) score exactly as the base', () => {
    const p = openPolicies(hfRunConfig(dir, { policies: { sharing: 'per-role' }, kl: { coef: 0.1 }, update: { tapeBudgetMB: 3 } }), {
      baseDir: '/',
    }) as HfPolicies;
    try {
      expect(p.model.adapterNames()).toEqual(['router', 'solver', 'verifier', 'aggregator', 'searcher', 'answerer']);
      expect(p.model.tapeBudgetBytes).toBe(3 * 2 ** 20); // update.tapeBudgetMB reaches the scorer's model
      const prompt = p.promptIds('solver', { role: 'solver', instruction: 'solver', prompt: 'What is 2 + 3?' }, 6);
      const rows = [{ prompt, completion: [40, 41, 42, 302] }];
      const cur = p.scoreData('solver', rows, 'current').logp[0];
      const ref = p.scoreData('solver', rows, 'reference').logp[0];
      expect(cur).toEqual(ref);
      // Not vacuous: a nonzero B makes them differ.
      const [b] = [...p.trainable('solver')].filter(([n]) => n.endsWith('lora_B')).map(([, v]) => v);
      b.assign(tf.onesLike(b));
      expect(p.scoreData('solver', rows, 'current').logp[0]).not.toEqual(ref);
    } finally {
      p.dispose();
    }
  });

  it('scores more rows than one chunk (memory.ts scoreChunkRows) as it scores them in parts: no row lost, shifted or cut', () => {
    const p = openPolicies(hfRunConfig(dir), { baseDir: '/' }) as HfPolicies;
    try {
      const prompt = p.promptIds('shared', { role: 'solver', instruction: 'solver', prompt: 'What is 2 + 3?' }, 6);
      const n = scoreChunkRows(p.config, prompt.length + 5) + 6; // one full chunk and 6 rows more
      const rows = Array.from({ length: n }, (_, i) => ({ prompt: prompt.slice(i % 3), completion: [40 + (i % 7), 41, 42, 302, 40].slice(0, 2 + (i % 4)) }));
      const all = p.scoreData('shared', rows, 'current');
      const parts = [rows.slice(0, 5), rows.slice(5, n - 3), rows.slice(n - 3)].map((r) => p.scoreData('shared', r, 'current'));
      const joined = { logp: parts.flatMap((s) => s.logp), entropy: parts.flatMap((s) => s.entropy) };
      expect(all.logp.map((r) => r.length)).toEqual(rows.map((r) => r.completion.length));
      all.logp.forEach((row, i) => row.forEach((v, t) => expect(v).toBeCloseTo(joined.logp[i][t], 5)));
      all.entropy.forEach((row, i) => row.forEach((v, t) => expect(v).toBeCloseTo(joined.entropy[i][t], 5)));
    } finally {
      p.dispose();
    }
  });

  it('renders each role as system + user messages through the chat template, with enable_thinking', () => {
    for (const name of INSTRUCTION_NAMES) expect(CHAT_SYSTEM_PROMPTS[name].length, name).toBeGreaterThan(40);
    expect(CHAT_SYSTEM_PROMPTS.solver).toContain('\\boxed{}');
    expect(CHAT_SYSTEM_PROMPTS.verifier).toContain('<verdict>accept</verdict>');
    expect(CHAT_SYSTEM_PROMPTS.searcher).toContain('<search>');
    expect(CHAT_SYSTEM_PROMPTS.router).toContain('<solvers>N</solvers>');
    // The fixture's template has no enable_thinking: a copy gets Qwen3's rule for it (an empty think block when false).
    const thinkDir = tinyQwenFolder();
    const template = join(thinkDir, 'chat_template.jinja');
    writeFileSync(
      template,
      readFileSync(template, 'utf8') +
        "{%- if add_generation_prompt and enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}",
    );
    const think = openPolicies(
      hfRunConfig(thinkDir, { workflow: { name: 'math', options: { solvers: { mode: 'fixed', k: 2 }, maxLoops: 1 }, enableThinking: false } }),
      { baseDir: '/' },
    ) as HfPolicies;
    try {
      const ids = think.promptIds('shared', { role: 'verifier', instruction: 'verifier', prompt: 'Problem: 1+1' }, 4);
      const text = think.tokenizer.decode(ids);
      expect(text).toContain(CHAT_SYSTEM_PROMPTS.verifier);
      expect(
        text.startsWith(`<|im_start|>system\n${CHAT_SYSTEM_PROMPTS.verifier}<|im_end|>\n<|im_start|>user\nProblem: 1+1<|im_end|>\n<|im_start|>assistant\n`),
      ).toBe(true);
      expect(text.endsWith('<think>\n\n</think>\n\n')).toBe(true); // enable_thinking false
    } finally {
      think.dispose();
    }
  });

  it('an update moves every adapter factor of the trained roles, and nothing else', () => {
    // update.tapeBudgetMB null (math-quick, the fixture's preset, sets 2560).
    const p = openPolicies(hfRunConfig(dir, { policies: { sharing: 'per-role' }, update: { epochs: 1, miniBatches: 1, tapeBudgetMB: null } }), {
      baseDir: '/',
    }) as HfPolicies;
    try {
      // update.tapeBudgetMB null: the backend's default (memory.ts TAPE_PROFILES; test:native runs this file on tfjs-node).
      expect(p.model.tapeBudgetBytes).toBe((tf.getBackend() === 'tensorflow' ? 4096 : 512) * 2 ** 20);
      const base = baseValues(p);
      const before = new Map(p.ids().map((id) => [id, read(p.trainable(id))]));
      const step = syntheticStep(p, ['solver', 'verifier'], 1);
      const r = update(p, step, { epochs: 2, miniBatches: 1 }); // two optimizer steps: A moves once B is nonzero
      expect(r.leaked).toBe(0);
      expect(r.applied).toBe(2);
      expect(Number.isFinite(r.metrics['loss/total'])).toBe(true);
      for (const id of p.ids()) {
        const after = read(p.trainable(id));
        expect(after.size).toBe(2 * 3 * 2); // 2 layers x 3 target modules x (A, B)
        if (process.env.HFDEBUG) console.log(id, [...after].map(([name, v]) => `${name}:${v.some((x, i) => x !== before.get(id)!.get(name)![i])}`).join(' '));
        for (const [name, v] of after) {
          const changed = v.some((x, i) => x !== before.get(id)!.get(name)![i]);
          expect(changed, `${id} ${name}`).toBe(id === 'solver' || id === 'verifier');
        }
      }
      expect(p.get('solver').version).toBe(2);
      expect(p.get('router').version).toBe(0);
      for (const [name, v] of p.model.params) expect(Float32Array.from(v.dataSync()), name).toEqual(base.get(name));
    } finally {
      p.dispose();
    }
  });

  it('micro-batches with the mini-batch denominators give the same update as one pass', () => {
    const results = [0, 2].map((rows) => {
      const p = openPolicies(hfRunConfig(dir), { baseDir: '/' }) as HfPolicies;
      try {
        const step = syntheticStep(p, ['solver', 'verifier'], 7);
        const r = update(p, step, { epochs: 1, miniBatches: 1, microBatchRows: rows });
        return { loss: r.metrics['loss/total'], norm: r.metrics['grad/norm'], weights: read(p.trainable('shared')) };
      } finally {
        p.dispose();
      }
    });
    expect(results[1].loss).toBeCloseTo(results[0].loss, 5);
    expect(results[1].norm).toBeCloseTo(results[0].norm, 4);
    expect(results[0].norm).toBeGreaterThan(0);
    for (const [name, v] of results[0].weights) {
      const w = results[1].weights.get(name)!;
      v.forEach((x, i) => expect(Math.abs(x - w[i]), name).toBeLessThan(1e-5));
    }
  });

  it('packs micro-batches to the tape budget: every row scored once (no re-run forward), each pass within it, the same update as one pass', () => {
    const run = (budget: (p: HfPolicies, longest: number) => number) => {
      const p = openPolicies(hfRunConfig(dir, { policies: { sharing: 'per-role' } }), { baseDir: '/' }) as HfPolicies;
      try {
        const step = syntheticStep(p, ['solver', 'verifier'], 9);
        const longest = Math.max(...step.samples.map((s) => s.promptTokens.length)) + Math.max(...step.samples.map((s) => s.outputTokens.length)) - 1;
        p.model.tapeBudgetBytes = budget(p, longest);
        const tape = p.gradientTape('solver');
        expect(tape.budgetBytes).toBe(p.model.tapeBudgetBytes);
        const passes: { rows: number; bytes: number }[] = [];
        const hidden = p.model.hidden.bind(p.model);
        p.model.hidden = (ids, ...rest) => {
          const [rows, seqLen] = ids.shape as [number, number];
          passes.push({ rows, bytes: tape.passBytes(rows, seqLen) });
          return hidden(ids, ...rest);
        };
        const r = update(p, step, { epochs: 1, miniBatches: 1 });
        expect(r.leaked).toBe(0);
        return { r, passes, members: step.samples.length, budget: p.model.tapeBudgetBytes, weights: read(p.trainable('solver')) };
      } finally {
        p.dispose();
      }
    };
    const whole = run(() => 0); // 0: never bounded, one pass per policy
    // A budget of about three rows of the longest prompt: the mini-batch's 6 events (9 rows) cannot pass at once.
    const packed = run((p, longest) => p.gradientTape('solver').passBytes(3, longest));
    expect(whole.passes).toHaveLength(2); // solver and verifier, one forward each
    expect(packed.passes.length).toBeGreaterThan(2);
    expect(whole.r.metrics['update/passes']).toBe(1);
    expect(packed.r.metrics['update/passes']).toBeGreaterThan(1); // micro-batches, each one forward per policy in it
    expect(packed.r.metrics['update/passes']).toBeLessThanOrEqual(packed.passes.length);
    expect(packed.passes.reduce((a, x) => a + x.rows, 0)).toBe(packed.members); // each row scored once: no forward re-run in a backward
    // Passes of one micro-batch share its tape: each pass alone within the budget.
    for (const x of packed.passes) expect(x.bytes).toBeLessThanOrEqual(packed.budget);
    expect(packed.r.metrics['loss/total']).toBeCloseTo(whole.r.metrics['loss/total'], 5);
    expect(packed.r.metrics['grad/norm']).toBeCloseTo(whole.r.metrics['grad/norm'], 4);
    expect(whole.r.metrics['grad/norm']).toBeGreaterThan(0);
    // Every metric as one pass reports it: the objective's means add up over micro-batches (each a share of the whole), the extremes take the extreme.
    expect(whole.r.metrics['ratio/mean']).toBeCloseTo(1, 3);
    for (const [k, v] of Object.entries(whole.r.metrics)) if (k !== 'update/passes') expect(packed.r.metrics[k], k).toBeCloseTo(v, 4);
    for (const [name, v] of whole.weights) {
      const w = packed.weights.get(name)!;
      v.forEach((x, i) => expect(Math.abs(x - w[i]), name).toBeLessThan(1e-5));
    }
  });

  it('checkpoints each policy as a peft adapter and resumes to the same weights, versions and optimizer', async () => {
    const runDir = mkdtempSync(join(tmpdir(), 'srpo-hf-run-'));
    const config = hfRunConfig(dir, { steps: 2, policies: { sharing: 'per-role' }, workflow: MIXED_MATH });
    const straight = new Trainer({ config, runDir, baseDir: '/' });
    const resumedRunDir = mkdtempSync(join(tmpdir(), 'srpo-hf-run-'));
    try {
      const s0 = await straight.step(0);
      const ckpt = checkpointDir(runDir, 0);
      expect(s0.checkpoint).toBe(ckpt);
      expect(JSON.parse(readFileSync(join(ckpt, 'policies.json'), 'utf8'))).toMatchObject({ modelKind: 'hf', sharing: 'per-role' });
      const adapter = readLoraAdapter(join(ckpt, 'solver'), readHfConfig(dir));
      expect(adapter.config).toMatchObject({ r: LORA.r, alpha: LORA.alpha, targetModules: [...LORA.targetModules].sort(), baseModel: dir });
      expect(adapter.pairs).toHaveLength(6);
      expect(existsSync(join(ckpt, 'solver', 'optimizer.safetensors'))).toBe(true);
      const versionsAt0 = straight.policies.policies().map((p) => p.version);
      expect(versionsAt0.some((v) => v > 0)).toBe(true);
      const s1 = await straight.step(1);
      const resumed = new Trainer({ config, runDir: resumedRunDir, baseDir: '/', resume: { dir: ckpt, step: 0 } });
      try {
        expect(resumed.startStep).toBe(1);
        expect(resumed.policies.policies().map((p) => p.version)).toEqual(versionsAt0);
        const r1 = await resumed.step(1);
        expect(s1.metrics['grad/norm']).toBeGreaterThan(0); // not vacuous: the step really trained
        const strip = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('time/') && !k.startsWith('memory/')));
        expect(strip(r1.metrics)).toEqual(strip(s1.metrics));
        for (const id of straight.policies.ids()) expect(read(resumed.policies.trainable(id))).toEqual(read(straight.policies.trainable(id)));
      } finally {
        resumed.dispose();
      }
    } finally {
      straight.dispose();
      rmSync(runDir, { recursive: true, force: true });
      rmSync(resumedRunDir, { recursive: true, force: true });
    }
  });

  it('full fine-tuning (adapter null): an update moves the base itself; its checkpoint is a float32 transformers folder that resumes exactly', () => {
    const config = hfRunConfig(dir, { policies: { adapter: null } });
    const p = openPolicies(config, { baseDir: '/' }) as HfPolicies;
    const root = mkdtempSync(join(tmpdir(), 'srpo-hf-full-'));
    try {
      expect(p.model.adapterNames()).toEqual([]);
      const before = read(p.trainable('shared'));
      expect(before.size).toBe(p.model.params.size);
      const r = update(p, syntheticStep(p, ['solver', 'verifier'], 3), { epochs: 1, miniBatches: 1 });
      expect(r.applied).toBe(1);
      const after = read(p.trainable('shared'));
      const moved = [...after].filter(([n, v]) => v.some((x, i) => x !== before.get(n)![i])).map(([n]) => n);
      expect(moved.length).toBe(p.model.params.size);
      savePoliciesCheckpoint(root, p, new Map());
      const saved = readHfConfig(join(root, 'shared'));
      expect(saved.hiddenSize).toBe(p.config.hiddenSize);
      expect(JSON.parse(readFileSync(join(root, 'shared', 'config.json'), 'utf8')).dtype).toBe('float32');
      const back = openPolicies(config, { baseDir: '/', resumeDir: root }) as HfPolicies;
      try {
        expect(read(back.trainable('shared'))).toEqual(after);
        expect(back.get('shared').version).toBe(1);
      } finally {
        back.dispose();
      }
    } finally {
      p.dispose();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('real-model presets: paper shapes, LoRA, and --set policies.init=PATH required; any preset takes a model folder', () => {
    // Resolvable without a folder (the New run page lists and shows them); creating a run needs one.
    expect(() => assertPresetModelFolder('math-qwen3-0.6b', presetConfig('math-qwen3-0.6b'))).toThrow(
      /preset "math-qwen3-0\.6b" trains a Hugging Face model: name its folder with --set policies\.init=PATH/,
    );
    expect(() => assertPresetModelFolder('math-qwen3-1.7b-per-role', presetConfig('math-qwen3-1.7b-per-role'))).toThrow(/--set policies\.init=PATH/);
    expect(() => assertPresetModelFolder('math-quick', presetConfig('math-quick'))).not.toThrow();
    for (const [name, sharing] of [
      ['math-qwen3-0.6b', 'shared'],
      ['math-qwen3-0.6b-per-role', 'per-role'],
      ['math-qwen3-1.7b', 'shared'],
      ['math-qwen3-1.7b-per-role', 'per-role'],
      ['search-qwen2.5-1.5b', 'shared'],
    ] as const) {
      const c = presetConfig(name, { policies: { init: dir } });
      expect(c.policies, name).toMatchObject({ init: dir, sharing, adapter: { kind: 'lora', r: 16, alpha: 32, dropout: 0 } });
      expect(c.eval.n, name).toBe(16);
      expect(c.rollout.groupSize, name).toBe(8);
      expect(
        Object.values(c.workflow.options).find((o) => (o as { mode?: string })?.mode === 'router'),
        name,
      ).toMatchObject({ maxK: 3 });
      expect(c.update.recompute && c.update.microBatchRows > 0, name).toBe(true);
      expect(hfModelDir(c, '/'), name).toBe(dir);
    }
    // math-quick (the lab's own model) on a model folder, LoRA by one --set: the folder decides the shape.
    const quick = presetConfig('math-quick', { policies: { init: dir, adapter: { kind: 'lora' } } });
    expect(quick.policies.adapter).toEqual({
      kind: 'lora',
      r: 16,
      alpha: 32,
      targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
      rslora: false,
      dropout: 0,
    });
    expect(hfModelDir(quick, '/')).toBe(dir);
  });

  it('reports GPU memory in the step metrics where the backend exposes it', () => {
    const base = { numTensors: 3, numDataBuffers: 3, numBytes: 1200, unreliable: false, reasons: [] };
    expect(memoryMetrics(base)).toEqual({ 'memory/tensors': 3 }); // wasm: no device figure
    expect(memoryMetrics({ ...base, numBytesInGPU: 4096, numBytesInGPUAllocated: 8192 } as never)).toEqual({
      'memory/tensors': 3,
      'memory/gpu_bytes': 4096,
      'memory/gpu_allocated_bytes': 8192,
    });
  });

  it('refuses bad input before loading, saying what to change', () => {
    const before = tf.memory().numTensors;
    expect(() => openPolicies(hfRunConfig(dir, { policies: { adapter: { ...LORA, targetModules: ['q_proj', 'c_attn'] } } }), { baseDir: '/' })).toThrow(
      /target module "c_attn" is not a linear of qwen3; valid: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj/,
    );
    // Per-role full fine-tuning (one copy of the model per role) is refused when the copies do not fit, pointing to LoRA (hfPerRoleFull.test.ts).
    process.env[MEMORY_ENV] = '1000000';
    try {
      expect(() => openPolicies(hfRunConfig(dir, { policies: { sharing: 'per-role', adapter: null } }), { baseDir: '/' })).toThrow(
        /6 per-role full copies.*policies\.adapter\.kind=lora/,
      );
    } finally {
      delete process.env[MEMORY_ENV];
    }
    expect(() => openPolicies(hfRunConfig('/nonexistent/qwen3'), { baseDir: '/' })).toThrow(
      /field "policies\.init" = "\/nonexistent\/qwen3": model folder \/nonexistent\/qwen3 does not exist/,
    );
    expect(tf.memory().numTensors).toBe(before);
    const config = readHfConfig(dir);
    expect(() =>
      checkModelFits(dir, config, { policies: 6, lora: { r: 2, targetModules: ['q_proj'] }, referenceCopy: false }, 'cpu', { [MEMORY_ENV]: '1000' }),
    ).toThrow(/does not fit the cpu backend's memory: it needs at least 0\.00 GB resident .* the backend has 0\.00 GB \(SRPO_LAB_MEMORY_BYTES\)/);
    expect(() => checkModelFits(dir, config, { policies: 1, lora: null, referenceCopy: false }, 'cpu', { [MEMORY_ENV]: '1e12' })).not.toThrow();
  });
});
