// Named LoRA adapters over one frozen base (src/core/models/hf/model.ts addAdapter / loadAdapter /
// readAdapter / adapterVariables / removeAdapter, and the `adapter` choice of every entry point):
// peft's initialisation (step 0 equals the base), per-role training that moves only its own
// adapter, `adapter: null` as the base alone (the KL reference), round trips, memory that does
// not copy the base, gradients against finite differences of the float64 reference, leaks.
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { scoreHf, scoreHfData } from '../../../../src/core/models/hf/logprobs';
import { HF_LINEAR_MODULES, loraParameterCount } from '../../../../src/core/models/hf/memory';
import { HfModel, type HfAdapterConfig } from '../../../../src/core/models/hf/model';
import { sampleHf } from '../../../../src/core/models/hf/sampler';
import type { HfModelConfig, LoraPair } from '../../../../src/core/models/hf/types';
import { logSoftmax64, maxAbsDiff, memorySource, randomHfConfig, randomIds, randomQwen2Config, randomWeights, reference64, weightShapes } from './randomModel';
import { mulberry32 } from '../../../../src/core/models/random';

const CFG: HfAdapterConfig = { r: 4, alpha: 8, rslora: false, targetModules: ['q_proj', 'v_proj', 'down_proj'], dropout: 0 };

function loadBase(config: HfModelConfig, trainable: boolean | 'lora' = 'lora', seed = 3) {
  const weights = randomWeights(config, seed);
  return { model: HfModel.fromSource(config, memorySource(config, weights), { trainable }), weights };
}

function logits(model: HfModel, ids: number[], adapter?: string | null): Float32Array {
  const out = tf.tidy(() => model.forward(tf.tensor2d(ids, [1, ids.length], 'int32'), undefined, adapter));
  const v = out.dataSync() as Float32Array;
  out.dispose();
  return v;
}

/** Seeded peft-layout pairs on every one of the seven linears of every layer (non-zero B). */
function allLinearPairs(c: HfModelConfig, r: number, scale: number, seed: number): LoraPair[] {
  const rand = mulberry32(seed);
  const fill = (n: number) => Float32Array.from({ length: n }, () => (rand() - 0.5) * 0.6);
  return weightShapes(c)
    .filter((w) => w.name.endsWith('_proj.weight'))
    .map(({ name, shape: [out, inF] }) => ({ target: name, a: fill(r * inF), b: fill(out * r), r, inFeatures: inF, outFeatures: out, scale }));
}

const pairsOf = (ids: number[][]) => ids.map((s) => ({ prompt: s.slice(0, 3), completion: s.slice(3) }));

describe('addAdapter: peft initialisation', () => {
  it('step 0 equals the base exactly (logits, scores, greedy samples), B is zero, A within +-1/sqrt(in)', () => {
    const config = randomHfConfig();
    const { model } = loadBase(config);
    try {
      const ids = randomIds(8, 1);
      const base = logits(model, ids, null);
      model.addAdapter('solver', { ...CFG, targetModules: ['all-linear'] }, 7);
      expect([...logits(model, ids, 'solver')]).toEqual([...base]);
      const pairs = pairsOf([ids]);
      expect(scoreHfData(model, pairs, { adapter: 'solver' }).logp).toEqual(scoreHfData(model, pairs, { adapter: null }).logp);
      const prompts = [randomIds(4, 2), randomIds(2, 3)];
      expect(sampleHf(model, prompts, { maxNewTokens: 5, temperature: 0, seed: 1, adapter: 'solver' })).toEqual(
        sampleHf(model, prompts, { maxNewTokens: 5, temperature: 0, seed: 1, adapter: null }),
      );
      const read = model.readAdapter('solver');
      expect(read.length).toBe(config.numLayers * 7);
      for (const p of read) {
        expect(p.b.every((v) => v === 0)).toBe(true);
        const bound = 1 / Math.sqrt(p.inFeatures);
        expect(p.a.every((v) => Math.abs(v) <= bound)).toBe(true);
        expect(p.scale).toBe(8 / 4);
      }
      // Uniform on (-bound, bound): variance bound^2 / 3 (checked over every A value, scaled to unit bound).
      const unit = read.flatMap((p) => [...p.a].map((v) => v * Math.sqrt(p.inFeatures)));
      const mean = unit.reduce((s, v) => s + v, 0) / unit.length;
      const variance = unit.reduce((s, v) => s + v * v, 0) / unit.length;
      expect(unit.length).toBeGreaterThan(1000);
      expect(Math.abs(mean)).toBeLessThan(0.05);
      expect(Math.abs(variance - 1 / 3)).toBeLessThan(0.03);
    } finally {
      model.dispose();
    }
  });

  it('is seeded: the same seed gives the same A, another seed another; rsLoRA scales by alpha / sqrt(r)', () => {
    const config = randomHfConfig();
    const { model } = loadBase(config);
    try {
      model.addAdapter('a', CFG, 1);
      model.addAdapter('b', CFG, 1);
      model.addAdapter('c', { ...CFG, rslora: true }, 2);
      const [a, b, c] = ['a', 'b', 'c'].map((n) => model.readAdapter(n));
      expect(a.map((p) => [...p.a])).toEqual(b.map((p) => [...p.a]));
      expect(maxAbsDiff(a[0].a, c[0].a)).toBeGreaterThan(1e-3);
      expect(c[0].scale).toBeCloseTo(8 / 2, 12);
      expect(a.map((p) => p.target)).toEqual(
        [0, 1].flatMap((l) => [
          `model.layers.${l}.self_attn.q_proj.weight`,
          `model.layers.${l}.self_attn.v_proj.weight`,
          `model.layers.${l}.mlp.down_proj.weight`,
        ]),
      );
    } finally {
      model.dispose();
    }
  });

  it('refuses a module the model lacks (naming it and the valid ones), dropout outside [0, 1), a name in use, bad r/alpha, a trainable base; nothing is created', () => {
    const config = randomHfConfig();
    const { model } = loadBase(config);
    const full = loadBase(config, true).model;
    try {
      model.addAdapter('x', CFG, 1);
      const n = tf.memory().numTensors;
      expect(() => model.addAdapter('y', { ...CFG, targetModules: ['q_proj', 'c_attn'] }, 1)).toThrow(
        /"c_attn".*valid: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj/,
      );
      expect(() => model.addAdapter('y', { ...CFG, targetModules: ['lm_head'] }, 1)).toThrow(/"lm_head"/);
      expect(() => model.addAdapter('y', { ...CFG, dropout: 1 }, 1)).toThrow(/lora dropout 1 must be in \[0, 1\)/);
      expect(() => model.addAdapter('y', { ...CFG, dropout: -0.1 }, 1)).toThrow(/lora dropout -0\.1 must be in \[0, 1\)/);
      expect(() => model.addAdapter('x', CFG, 1)).toThrow(/adapter "x" exists/);
      expect(() => model.addAdapter('y', { ...CFG, r: 0 }, 1)).toThrow(/r 0/);
      expect(() => model.addAdapter('y', { ...CFG, alpha: -1 }, 1)).toThrow(/alpha -1/);
      expect(() => full.addAdapter('y', CFG, 1)).toThrow(/trainable.*full fine-tuning/);
      expect(tf.memory().numTensors).toBe(n);
      expect(model.adapterNames()).toEqual(['x']);
    } finally {
      model.dispose();
      full.dispose();
    }
  });
});

describe('one frozen base, several adapters', () => {
  it('two adapters trained on different data differ from each other and from the base; the base and the other adapter are untouched; every trained factor moved', () => {
    const config = randomQwen2Config();
    const { model } = loadBase(config);
    try {
      model.addAdapter('solver', CFG, 1);
      model.addAdapter('verifier', CFG, 2);
      const snap = (vars: tf.Variable[]) => new Map(vars.map((v) => [v.name, v.dataSync().slice() as Float32Array]));
      const base0 = snap([...model.params.values()]);
      const ids = randomIds(8, 4);
      const baseLogits = logits(model, ids, null);
      const train = (name: string, seq: number[][], others: Map<string, Float32Array>) => {
        const before = snap(model.adapterVariables(name));
        const opt = tf.train.adam(0.05);
        const loss = () => tf.neg(tf.mean(scoreHf(model, pairsOf(seq), { adapter: name }).logp)) as tf.Scalar;
        for (let i = 0; i < 3; i++) opt.minimize(loss, false, model.adapterVariables(name));
        opt.dispose();
        for (const [n, v] of snap(model.adapterVariables(name))) expect(maxAbsDiff(v, before.get(n)!), `${n} moved`).toBeGreaterThan(0);
        for (const [n, v] of snap([...others.keys()].map((k) => model.variables().find((x) => x.name === k)!)))
          expect([...v], `${n} untouched`).toEqual([...others.get(n)!]);
      };
      const verifier0 = snap(model.adapterVariables('verifier'));
      train('solver', [randomIds(8, 5), randomIds(8, 6)], verifier0);
      const solver1 = snap(model.adapterVariables('solver'));
      train('verifier', [randomIds(8, 7), randomIds(8, 8)], solver1);
      for (const [n, v] of snap([...model.params.values()])) expect([...v], `base ${n}`).toEqual([...base0.get(n)!]);
      const s = logits(model, ids, 'solver');
      const v = logits(model, ids, 'verifier');
      expect(maxAbsDiff(s, v)).toBeGreaterThan(1e-3);
      expect(maxAbsDiff(s, baseLogits)).toBeGreaterThan(1e-3);
      expect([...logits(model, ids, null)]).toEqual([...baseLogits]); // adapters off after training == the base
    } finally {
      model.dispose();
    }
  });

  it('adapter: null equals a model loaded without adapters (forward, scores, samples); undefined picks "default"', () => {
    const config = randomHfConfig();
    const weights = randomWeights(config, 9);
    const plain = HfModel.fromSource(config, memorySource(config, weights));
    const pairs = allLinearPairs(config, 2, 0.5, 4);
    const adapted = HfModel.fromSource(config, memorySource(config, weights), { lora: pairs, trainable: 'lora' });
    try {
      adapted.addAdapter('other', CFG, 3);
      const ids = randomIds(7, 2);
      expect([...logits(adapted, ids, null)]).toEqual([...logits(plain, ids)]);
      expect(maxAbsDiff(logits(adapted, ids), logits(plain, ids))).toBeGreaterThan(1e-2); // undefined: the 'default' adapter, which moves the logits
      expect([...logits(adapted, ids)]).toEqual([...logits(adapted, ids, 'default')]);
      const sp = pairsOf([ids, randomIds(6, 3)]);
      expect(scoreHfData(adapted, sp, { adapter: null })).toEqual(scoreHfData(plain, sp));
      const prompts = [randomIds(3, 5), randomIds(5, 6)];
      expect(sampleHf(adapted, prompts, { maxNewTokens: 6, seed: 4, adapter: null })).toEqual(sampleHf(plain, prompts, { maxNewTokens: 6, seed: 4 }));
      expect(() => logits(adapted, ids, 'nobody')).toThrow(/no adapter "nobody"; adapters: default, other/);
      expect(() => sampleHf(adapted, prompts, { maxNewTokens: 2, seed: 1, adapter: 'nobody' })).toThrow(/no adapter "nobody"/);
    } finally {
      plain.dispose();
      adapted.dispose();
    }
  });

  it('each adapter matches the float64 reference with its own pairs', () => {
    const config = randomQwen2Config();
    const { model, weights } = loadBase(config, false);
    try {
      const p1 = allLinearPairs(config, 2, 0.5, 1);
      const p2 = allLinearPairs(config, 3, 0.25, 2);
      model.loadAdapter('one', p1);
      model.loadAdapter('two', p2);
      const ids = randomIds(6, 9);
      for (const [name, p] of [
        ['one', p1],
        ['two', p2],
      ] as const) {
        const ref = reference64(config, weights, ids, p).flatMap((r) => [...r]);
        expect(maxAbsDiff(logits(model, ids, name), ref)).toBeLessThan(1e-4);
      }
    } finally {
      model.dispose();
    }
  });

  it('readAdapter / loadAdapter round trip (a copy gives equal logits); loading over an existing name assigns in place', () => {
    const config = randomHfConfig();
    const { model } = loadBase(config);
    try {
      const pairs = allLinearPairs(config, 2, 0.5, 5);
      model.loadAdapter('a', pairs);
      const back = model.readAdapter('a');
      back.forEach((p, i) => expect({ ...p, a: [...p.a], b: [...p.b] }).toEqual({ ...pairs[i], a: [...pairs[i].a], b: [...pairs[i].b] }));
      model.loadAdapter('copy', back);
      const ids = randomIds(6, 1);
      expect([...logits(model, ids, 'copy')]).toEqual([...logits(model, ids, 'a')]);
      const vars = model.adapterVariables('copy');
      const other = allLinearPairs(config, 2, 0.5, 6);
      model.loadAdapter('copy', other);
      expect(model.adapterVariables('copy')).toEqual(vars); // the same variables (optimizer slots stay bound)
      expect(maxAbsDiff(logits(model, ids, 'copy'), logits(model, ids, 'a'))).toBeGreaterThan(1e-2);
      expect(model.readAdapter('copy').map((p) => [...p.a])).toEqual(other.map((p) => [...p.a]));
      expect(() => model.loadAdapter('copy', allLinearPairs(config, 3, 0.5, 6))).toThrow(/other targets or ranks/);
    } finally {
      model.dispose();
    }
  });
});

describe('memory: the base exists once', () => {
  it('each adapter adds exactly its factors (peft count x 4 bytes), never base bytes; removeAdapter frees them', () => {
    const config = randomHfConfig({ numLayers: 3 });
    const { model } = loadBase(config);
    try {
      const baseBytes = [...model.params.values()].reduce((s, v) => s + v.size * 4, 0);
      const start = tf.memory().numBytes;
      const perAdapter = loraParameterCount(config, CFG.r, CFG.targetModules) * 4;
      for (const [i, name] of ['a', 'b', 'c'].entries()) {
        model.addAdapter(name, CFG, i);
        expect(tf.memory().numBytes - start).toBe((i + 1) * perAdapter);
      }
      expect(3 * perAdapter).toBeLessThan(baseBytes);
      model.removeAdapter('b');
      expect(tf.memory().numBytes - start).toBe(2 * perAdapter);
      expect(model.adapterNames()).toEqual(['a', 'c']);
      expect(() => model.removeAdapter('b')).toThrow(/no adapter "b"/);
    } finally {
      model.dispose();
    }
  });
});

describe('LoRA gradients of a named adapter against finite differences of the float64 reference', () => {
  it('rsLoRA on all seven linears: d(sum_t R_t log p_t)/d(A, B) within 2e-3', () => {
    const config = randomQwen2Config();
    const weights = randomWeights(config, 21);
    const model = HfModel.fromSource(config, memorySource(config, weights), { trainable: 'lora' });
    try {
      model.addAdapter('unused', CFG, 1); // another adapter in memory must not matter
      const pairs = allLinearPairs(config, 2, 8 / Math.sqrt(2), 3);
      model.loadAdapter('role', pairs);
      const seq = randomIds(7, 5);
      const R = randomIds(4, 6, 0, 1000).map((v) => v / 500 - 1); // weights of the 4 completion log-probs
      const probe = (ps: LoraPair[]) => {
        const rows = reference64(config, weights, seq, ps);
        return R.reduce((s, r, j) => s + r * logSoftmax64(rows[2 + j])[seq[3 + j]], 0);
      };
      const vars = model.adapterVariables('role');
      const { grads } = tf.variableGrads(() => {
        const s = scoreHf(model, pairsOf([seq]), { adapter: 'role' });
        return tf.sum(tf.mul(s.logp, tf.tensor2d([R]))) as tf.Scalar;
      }, vars);
      let checked = 0;
      for (const [pi, p] of pairs.entries()) {
        if (pi % 3 !== 0) continue; // a third of the targets, every module kind across the layers
        for (const which of ['a', 'b'] as const) {
          const v = vars[2 * pi + (which === 'a' ? 0 : 1)];
          const g = grads[v.name].dataSync();
          const [rows, cols] = v.shape as [number, number]; // stored transposed: A^T [in, r], B^T [r, out]
          for (const flat of [0, g.length - 1]) {
            const [i, j] = [Math.floor(flat / cols), flat % cols];
            const bump = (delta: number) => {
              const arr = Float32Array.from(p[which]);
              arr[j * rows + i] += delta;
              return probe(pairs.map((q) => (q === p ? { ...q, [which]: arr } : q)));
            };
            const h = 1e-4;
            const fd = (bump(h) - bump(-h)) / (2 * h);
            expect(Math.abs(g[flat] - fd), `${v.name}[${flat}]: ${g[flat]} vs ${fd}`).toBeLessThan(2e-3 * Math.max(1, Math.abs(fd)));
            checked++;
          }
        }
      }
      expect(checked).toBeGreaterThanOrEqual(4 * 4);
      expect(Object.values(grads).some((g) => g.dataSync().some((x) => Math.abs(x) > 1e-3))).toBe(true);
      tf.dispose(Object.values(grads));
    } finally {
      model.dispose();
    }
  });
});

describe('no leaks', () => {
  it('add / load / remove adapters, a failed load, and training steps on a named adapter leave tf.memory().numTensors unchanged', () => {
    const config = randomHfConfig();
    const { model } = loadBase(config);
    try {
      const n0 = tf.memory().numTensors;
      model.addAdapter('tmp', CFG, 1);
      model.loadAdapter('tmp', model.readAdapter('tmp'));
      model.removeAdapter('tmp');
      const bad = allLinearPairs(config, 2, 1, 1);
      bad[bad.length - 1] = { ...bad[bad.length - 1], inFeatures: 5 };
      expect(() => model.loadAdapter('bad', bad)).toThrow(/another base/);
      expect(tf.memory().numTensors).toBe(n0);
      model.addAdapter('role', CFG, 2);
      const opt = tf.train.adam(1e-2);
      const loss = () => tf.neg(tf.sum(scoreHf(model, pairsOf([randomIds(7, 1)]), { adapter: 'role', entropy: true }).logp)) as tf.Scalar;
      opt.minimize(loss, false, model.adapterVariables('role'));
      const n = tf.memory().numTensors;
      opt.minimize(loss, false, model.adapterVariables('role'));
      sampleHf(model, [randomIds(3, 2)], { maxNewTokens: 3, seed: 1, adapter: 'role' });
      scoreHfData(model, pairsOf([randomIds(6, 2)]), { adapter: null });
      expect(tf.memory().numTensors).toBe(n);
      opt.dispose();
    } finally {
      model.dispose();
    }
  });

  it('every module name addAdapter accepts is one memory.ts counts (the two lists agree)', () => {
    expect([...HF_LINEAR_MODULES]).toEqual(['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj']);
  });
});
