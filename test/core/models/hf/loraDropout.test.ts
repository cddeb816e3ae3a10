// LoRA dropout (src/core/models/hf/loraDropout.ts, model.ts `hidden(..., dropout)`): peft's
// y = x W + scale * (dropout(x) A^T) B^T in the training forward only. The masks (inverted, rate p,
// reproducible, one per row key and target, independent of batching and padding); p = 0 is the
// plain path bit for bit; with p > 0 the training forward differs from the eval forward and equals
// the float64 reference given the same masks; gradients with fixed masks against finite
// differences of that reference; recomputation redraws the same masks; no leaks.
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { scoreHf, scoreHfData } from '../../../../src/core/models/hf/logprobs';
import { loraDropoutMask, withLoraDropout, type LoraDropout } from '../../../../src/core/models/hf/loraDropout';
import { HfModel } from '../../../../src/core/models/hf/model';
import type { HfModelConfig, LoraPair } from '../../../../src/core/models/hf/types';
import { mulberry32 } from '../../../../src/core/models/random';
import { logSoftmax64, maxAbsDiff, memorySource, randomIds, randomQwen2Config, randomWeights, reference64, weightShapes } from './randomModel';

/** Seeded peft-layout pairs on all seven linears of every layer (non-zero B, so A has a gradient). */
function allLinearPairs(c: HfModelConfig, r: number, scale: number, seed: number): LoraPair[] {
  const rand = mulberry32(seed);
  const fill = (n: number) => Float32Array.from({ length: n }, () => (rand() - 0.5) * 0.6);
  return weightShapes(c)
    .filter((w) => w.name.endsWith('_proj.weight'))
    .map(({ name, shape: [out, inF] }) => ({ target: name, a: fill(r * inF), b: fill(out * r), r, inFeatures: inF, outFeatures: out, scale }));
}

const BATCH = [
  { prompt: randomIds(3, 1), completion: randomIds(4, 2) },
  { prompt: randomIds(5, 3), completion: randomIds(2, 4) },
];
const L = 5 + 4 - 1; // columns scoreHf reads for BATCH: longest prompt + longest completion - 1
const DROP: LoraDropout = { p: 0.3, seed: 7, rowKeys: [11, 42] };

function setup() {
  const config = randomQwen2Config();
  const weights = randomWeights(config, 21);
  const model = HfModel.fromSource(config, memorySource(config, weights), { trainable: 'lora' });
  const pairs = allLinearPairs(config, 2, 1.5, 3);
  model.loadAdapter('role', pairs);
  return { config, weights, model, pairs };
}

/** Float64 log-probs of row b's completion with the masks `d` would draw for it (its row key alone: a row's mask does not depend on its batch). */
function referenceRow(s: ReturnType<typeof setup>, b: number, d: LoraDropout | null, pairs = s.pairs): number[] {
  const { prompt, completion } = BATCH[b];
  const seq = [...prompt, ...completion];
  const inOf = new Map(pairs.map((p) => [p.target, p.inFeatures]));
  const masks = new Map<string, Float32Array>();
  const mask = d
    ? (target: string, t: number) => {
        const n = inOf.get(target)!;
        if (!masks.has(target)) masks.set(target, loraDropoutMask({ ...d, rowKeys: [d.rowKeys[b]] }, target, seq.length, n));
        return masks.get(target)!.subarray(t * n, (t + 1) * n);
      }
    : undefined;
  const rows = reference64(s.config, s.weights, seq, pairs, mask);
  return completion.map((tok, j) => logSoftmax64(rows[prompt.length - 1 + j])[tok]);
}

const trimmed = (logp: number[][]) => logp.map((row, b) => row.slice(0, BATCH[b].completion.length));

describe('the masks', () => {
  it('are inverted dropout at rate p: entries 0 or 1/(1-p), about a fraction p dropped', () => {
    const m = loraDropoutMask({ p: 0.25, seed: 1, rowKeys: [1, 2, 3] }, 'model.layers.0.self_attn.q_proj.weight', 50, 40); // [3*50, 40]
    expect(m.length).toBe(3 * 50 * 40);
    const keep = Math.fround(1 / 0.75);
    expect(m.every((v) => v === 0 || v === keep)).toBe(true);
    const dropped = m.filter((v) => v === 0).length / m.length;
    expect(Math.abs(dropped - 0.25)).toBeLessThan(0.02);
  });

  it('are reproducible for the same seed, row key and target, and differ for another of any of them', () => {
    const d = { p: 0.5, seed: 9, rowKeys: [4, 5] };
    const q = 'model.layers.1.self_attn.q_proj.weight';
    const base = loraDropoutMask(d, q, 6, 16);
    expect([...loraDropoutMask(d, q, 6, 16)]).toEqual([...base]);
    const differs = (a: Float32Array) => a.filter((v, i) => v !== base[i]).length / a.length;
    expect(differs(loraDropoutMask({ ...d, seed: 10 }, q, 6, 16))).toBeGreaterThan(0.3);
    expect(differs(loraDropoutMask({ ...d, rowKeys: [4, 6] }, q, 6, 16).subarray(96))).toBeGreaterThan(0); // row 1 changed...
    expect([...loraDropoutMask({ ...d, rowKeys: [4, 6] }, q, 6, 16).subarray(0, 96)]).toEqual([...base.subarray(0, 96)]); // ...row 0 did not
    expect(differs(loraDropoutMask(d, 'model.layers.1.self_attn.k_proj.weight', 6, 16))).toBeGreaterThan(0.3); // q and k draw their own
  });

  it("a row's mask depends on its key, not on its batch companions nor on the padding on either side", () => {
    const q = 'model.layers.0.mlp.down_proj.weight';
    const alone = loraDropoutMask({ p: 0.4, seed: 3, rowKeys: [8] }, q, 4, 24); // [4, 24]
    const batched = loraDropoutMask({ p: 0.4, seed: 3, rowKeys: [2, 8, 5] }, q, 9, 24); // [3*9, 24]
    expect([...batched.subarray(9 * 24, 9 * 24 + 4 * 24)]).toEqual([...alone]);
    // Left padding (the scorer pads prompts to the longest): the row's tokens keep their masks, its pad columns are dropped.
    const leftPadded = loraDropoutMask({ p: 0.4, seed: 3, rowKeys: [2, 8, 5] }, q, 9, 24, [0, 3, 0]);
    expect([...leftPadded.subarray(9 * 24, 12 * 24)].every((v) => v === 0)).toBe(true);
    expect([...leftPadded.subarray(12 * 24, 12 * 24 + 4 * 24)]).toEqual([...alone]);
    expect([...leftPadded.subarray(0, 9 * 24)]).toEqual([...batched.subarray(0, 9 * 24)]);
  });
});

describe('the training forward', () => {
  it('p = 0 is the plain path bit for bit (no mask, no copy of the adapter)', () => {
    const s = setup();
    try {
      const off = { ...DROP, p: 0 };
      const adapter = new Map([['w', { drop: undefined }]]);
      expect(withLoraDropout(adapter, off, 2, L)).toBe(adapter);
      expect(withLoraDropout(adapter, undefined, 2, L)).toBe(adapter);
      expect(scoreHfData(s.model, BATCH, { adapter: 'role', dropout: off })).toEqual(scoreHfData(s.model, BATCH, { adapter: 'role' }));
    } finally {
      s.model.dispose();
    }
  });

  it('p > 0 differs from the eval forward and equals the float64 reference with the same masks (1e-4)', () => {
    const s = setup();
    try {
      const train = trimmed(scoreHfData(s.model, BATCH, { adapter: 'role', dropout: DROP }).logp);
      const evalLogp = trimmed(scoreHfData(s.model, BATCH, { adapter: 'role' }).logp);
      BATCH.forEach((_, b) => {
        expect(maxAbsDiff(train[b], referenceRow(s, b, DROP)), `row ${b}`).toBeLessThan(1e-4);
        expect(maxAbsDiff(evalLogp[b], referenceRow(s, b, null)), `row ${b} eval`).toBeLessThan(1e-4);
        // Not vacuous: dropout moves the log-probs, and another draw moves them elsewhere.
        expect(maxAbsDiff(train[b], evalLogp[b]), `row ${b} train vs eval`).toBeGreaterThan(1e-3);
        expect(maxAbsDiff(train[b], referenceRow(s, b, { ...DROP, seed: 8 })), `row ${b} other seed`).toBeGreaterThan(1e-3);
      });
      // The same call again draws the same masks.
      expect(trimmed(scoreHfData(s.model, BATCH, { adapter: 'role', dropout: DROP }).logp)).toEqual(train);
      // Adapters off (the KL reference) never drop, whatever the option.
      expect(scoreHfData(s.model, BATCH, { adapter: null, dropout: DROP })).toEqual(scoreHfData(s.model, BATCH, { adapter: null }));
    } finally {
      s.model.dispose();
    }
  });

  it('gradients with fixed masks match finite differences of the float64 reference (2e-3)', () => {
    const s = setup();
    try {
      const R = [randomIds(4, 6, 0, 1000).map((v) => v / 500 - 1), randomIds(4, 7, 0, 1000).map((v) => v / 500 - 1)];
      const Rt = tf.tensor2d(R.map((r) => r.slice(0, 4)));
      const probe = (ps: LoraPair[]) => BATCH.reduce((sum, _, b) => sum + referenceRow(s, b, DROP, ps).reduce((a, lp, j) => a + R[b][j] * lp, 0), 0);
      const vars = s.model.adapterVariables('role');
      const { grads } = tf.variableGrads(() => {
        const sc = scoreHf(s.model, BATCH, { adapter: 'role', dropout: DROP, minCompletionLength: 4 });
        return tf.sum(tf.mul(sc.logp, Rt)) as tf.Scalar;
      }, vars);
      let checked = 0;
      for (const [pi, p] of s.pairs.entries()) {
        if (pi % 3 !== 0) continue; // a third of the targets, every module kind across the layers
        for (const which of ['a', 'b'] as const) {
          const v = vars[2 * pi + (which === 'a' ? 0 : 1)];
          const g = grads[v.name].dataSync();
          const [rows, cols] = v.shape as [number, number]; // stored transposed: A^T [in, r], B^T [r, out]
          for (const flat of [0, Math.floor(g.length / 2), g.length - 1]) {
            const [i, j] = [Math.floor(flat / cols), flat % cols];
            const bump = (delta: number) => {
              const arr = Float32Array.from(p[which]);
              arr[j * rows + i] += delta;
              return probe(s.pairs.map((q) => (q === p ? { ...q, [which]: arr } : q)));
            };
            const h = 1e-4;
            const fd = (bump(h) - bump(-h)) / (2 * h);
            expect(Math.abs(g[flat] - fd), `${v.name}[${flat}]: ${g[flat]} vs ${fd}`).toBeLessThan(2e-3 * Math.max(1, Math.abs(fd)));
            checked++;
          }
        }
      }
      expect(checked).toBeGreaterThanOrEqual(4 * 6);
      // Not vacuous: A's gradient sees the mask (a dropped input feature has a zero row in dA at that position only, so compare with the eval gradient).
      const evalGrads = tf.variableGrads(
        () => tf.sum(tf.mul(scoreHf(s.model, BATCH, { adapter: 'role', minCompletionLength: 4 }).logp, Rt)) as tf.Scalar,
        vars,
      ).grads;
      expect(maxAbsDiff(grads[vars[0].name].dataSync(), evalGrads[vars[0].name].dataSync())).toBeGreaterThan(1e-3);
      tf.dispose([Rt, ...Object.values(grads), ...Object.values(evalGrads)]);
    } finally {
      s.model.dispose();
    }
  });

  it('per-layer recomputation redraws the same masks: value and gradients equal the stored path (1e-5)', () => {
    const s = setup();
    try {
      const vars = s.model.adapterVariables('role');
      const run = (recompute: boolean) => {
        s.model.recompute = recompute;
        const { value, grads } = tf.variableGrads(() => tf.sum(scoreHf(s.model, BATCH, { adapter: 'role', dropout: DROP }).logp) as tf.Scalar, vars);
        const out = { value: value.dataSync()[0], grads: vars.map((v) => grads[v.name].dataSync().slice() as Float32Array) };
        tf.dispose([value, ...Object.values(grads)]);
        return out;
      };
      const plain = run(false);
      const re = run(true);
      expect(re.value).toBeCloseTo(plain.value, 4);
      plain.grads.forEach((g, i) => expect(maxAbsDiff(re.grads[i], g), vars[i].name).toBeLessThan(1e-5 * Math.max(1, ...[...g].map(Math.abs))));
      expect(plain.grads.filter((g) => g.some((v) => Math.abs(v) > 1e-4)).length).toBeGreaterThan(vars.length / 2);
    } finally {
      s.model.recompute = false;
      s.model.dispose();
    }
  });

  it('training steps with dropout (stored and recomputed) leave tf.memory().numTensors unchanged', () => {
    const s = setup();
    try {
      const opt = tf.train.sgd(1e-2);
      const step = () =>
        opt.minimize(
          () => tf.neg(tf.sum(scoreHf(s.model, BATCH, { adapter: 'role', dropout: DROP }).logp)) as tf.Scalar,
          false,
          s.model.adapterVariables('role'),
        );
      step();
      const n = tf.memory().numTensors;
      step();
      s.model.recompute = true;
      step();
      expect(tf.memory().numTensors).toBe(n);
      opt.dispose();
    } finally {
      s.model.dispose();
    }
  });

  it('refuses row keys that do not match the batch', () => {
    const s = setup();
    try {
      expect(() => scoreHf(s.model, BATCH, { adapter: 'role', dropout: { ...DROP, rowKeys: [1] } })).toThrow(/LoRA dropout: 1 row keys for a batch of 2 rows/);
    } finally {
      s.model.dispose();
    }
  });
});
