// Memory-saving training paths of the HF family: per-layer activation recomputation
// (model.ts `recompute`, one custom-gradient op per decoder layer that re-runs the layer in its
// backward) and the lean head ops of the scorer (layers.ts `headLogprob` / `headEntropy`, which
// keep only the rows and recompute the logits). Each against the plain path on seeded random
// models (gradients within 1e-5), peak tensor bytes, and leaks.
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { headEntropy, headLogprob } from '../../../../src/core/models/hf/layers';
import { scoreHf } from '../../../../src/core/models/hf/logprobs';
import { HfModel, leftPadLayout } from '../../../../src/core/models/hf/model';
import type { HfModelConfig } from '../../../../src/core/models/hf/types';
import { maxAbsDiff, memorySource, randomHfConfig, randomIds, randomLora, randomQwen2Config, randomWeights } from './randomModel';

const CFG = { r: 3, alpha: 6, rslora: false, targetModules: ['all-linear'], dropout: 0 };

/** Gradients of a log-prob objective (with entropy) with and without recomputation, by variable name. */
function gradsBoth(model: HfModel, vars: tf.Variable[], adapter: string | null | undefined, pairs: { prompt: number[]; completion: number[] }[]) {
  const run = (recompute: boolean) => {
    model.recompute = recompute;
    const { value, grads } = tf.variableGrads(() => {
      const s = scoreHf(model, pairs, { adapter, entropy: true, chunkRows: 3 });
      return tf.add(tf.sum(tf.mul(s.logp, tf.linspace(-1, 2, s.logp.size).reshape(s.logp.shape))), tf.mul(tf.sum(s.entropy!), 0.3)) as tf.Scalar;
    }, vars);
    const out = { value: value.dataSync()[0], grads: new Map(Object.entries(grads).map(([k, g]) => [k, g.dataSync().slice() as Float32Array])) };
    tf.dispose([value, ...Object.values(grads)]);
    return out;
  };
  const plain = run(false);
  const re = run(true);
  model.recompute = false;
  return { plain, re };
}

function expectSameGrads(plain: ReturnType<typeof gradsBoth>['plain'], re: ReturnType<typeof gradsBoth>['re']) {
  expect(re.value).toBeCloseTo(plain.value, 4);
  expect([...re.grads.keys()].sort()).toEqual([...plain.grads.keys()].sort());
  let nonZero = 0;
  for (const [k, g] of plain.grads) {
    expect(maxAbsDiff(re.grads.get(k)!, g), k).toBeLessThan(1e-5 * Math.max(1, ...[...g].map(Math.abs)));
    if (g.some((v) => Math.abs(v) > 1e-4)) nonZero++;
  }
  expect(nonZero).toBeGreaterThan(plain.grads.size / 2); // the comparison is not of zeros
}

const batch = [
  { prompt: randomIds(3, 1), completion: randomIds(5, 2) },
  { prompt: randomIds(5, 3), completion: randomIds(2, 4) },
];

describe('per-layer recomputation: gradients equal the stored-activation path within 1e-5', () => {
  it('LoRA: two named adapters on all linears, gradients of one', () => {
    const config = randomQwen2Config();
    const model = HfModel.fromSource(config, memorySource(config, randomWeights(config, 1)), { trainable: 'lora', lora: randomLora(config, 2, 0.5, 2) });
    try {
      model.addAdapter('role', CFG, 5);
      const opt = tf.train.sgd(0.5); // one step first, so B is non-zero and A has a gradient
      opt.minimize(() => tf.neg(tf.sum(scoreHf(model, batch, { adapter: 'role' }).logp)) as tf.Scalar, false, model.adapterVariables('role'));
      opt.dispose();
      const { plain, re } = gradsBoth(model, model.adapterVariables('role'), 'role', batch);
      expectSameGrads(plain, re);
    } finally {
      model.dispose();
    }
  });

  for (const [label, config] of [
    ['qwen3, tied embedding (trained one-hot path), q/k norms, GQA', randomHfConfig()],
    ['qwen2, untied head, q/k/v biases', randomQwen2Config()],
  ] as [string, HfModelConfig][]) {
    it(`full fine-tuning, ${label}: every base weight`, () => {
      const model = HfModel.fromSource(config, memorySource(config, randomWeights(config, 2)), { trainable: true });
      try {
        const { plain, re } = gradsBoth(model, model.variables(), undefined, batch);
        expect(plain.grads.size).toBe(model.params.size);
        expectSameGrads(plain, re);
      } finally {
        model.dispose();
      }
    });
  }

  it('left-padded rows through forward (key bias and per-row positions are saved and reused by the backward)', () => {
    const config = randomHfConfig();
    const model = HfModel.fromSource(config, memorySource(config, randomWeights(config, 3)), { trainable: 'lora' });
    try {
      model.loadAdapter('role', randomLora(config, 2, 0.5, 4));
      const pads = [0, 3];
      const T = 7;
      const ids = tf.tensor2d([...randomIds(7, 1), 0, 0, 0, ...randomIds(4, 2)], [2, T], 'int32');
      const R = tf.randomNormal([2, T, config.vocabSize], 0, 1, 'float32', 3);
      const run = (recompute: boolean) => {
        model.recompute = recompute;
        const { value, grads } = tf.variableGrads(
          () => tf.sum(tf.mul(model.forward(ids, leftPadLayout(pads, T), 'role'), R)) as tf.Scalar,
          model.adapterVariables('role'),
        );
        const out = new Map(Object.entries(grads).map(([k, g]) => [k, g.dataSync().slice()]));
        tf.dispose([value, ...Object.values(grads)]);
        return out;
      };
      const plain = run(false);
      const re = run(true);
      for (const [k, g] of plain) expect(maxAbsDiff(re.get(k)!, g), k).toBeLessThan(1e-5 * Math.max(1, ...[...g].map(Math.abs)));
      tf.dispose([ids, R]);
    } finally {
      model.recompute = false;
      model.dispose();
    }
  });

  it('the forward value is unchanged by recomputation (and inference ignores it)', () => {
    const config = randomHfConfig();
    const model = HfModel.fromSource(config, memorySource(config, randomWeights(config, 4)), { trainable: 'lora', recompute: true });
    try {
      expect(model.recompute).toBe(true);
      const ids = tf.tensor2d(randomIds(6, 1), [1, 6], 'int32');
      const a = tf.tidy(() => model.forward(ids)).dataSync();
      model.recompute = false;
      const b = tf.tidy(() => model.forward(ids)).dataSync();
      expect(maxAbsDiff(a, b)).toBeLessThan(1e-6);
      ids.dispose();
    } finally {
      model.dispose();
    }
  });
});

describe('peak memory of a LoRA training step', () => {
  it('recomputation keeps less than the stored-activation path, and the gap grows with depth', async () => {
    const peak = async (numLayers: number, recompute: boolean) => {
      const config = randomHfConfig({ numLayers, hiddenSize: 32, intermediateSize: 64, vocabSize: 64 });
      const model = HfModel.fromSource(config, memorySource(config, randomWeights(config, 1)), { trainable: 'lora', recompute });
      try {
        model.addAdapter('role', CFG, 1);
        const pairs = [0, 1].map((i) => ({ prompt: randomIds(4, i), completion: randomIds(28, 10 + i, 1, 64) }));
        const step = () => {
          const { value, grads } = tf.variableGrads(
            () => tf.neg(tf.sum(scoreHf(model, pairs, { adapter: 'role' }).logp)) as tf.Scalar,
            model.adapterVariables('role'),
          );
          tf.dispose([value, ...Object.values(grads)]);
        };
        step();
        const start = tf.memory().numBytes;
        const info = await tf.profile(step);
        return info.peakBytes - start;
      } finally {
        model.dispose();
      }
    };
    const [plain2, re2, plain6, re6] = [await peak(2, false), await peak(2, true), await peak(6, false), await peak(6, true)];
    expect(re6).toBeLessThan(0.5 * plain6);
    expect(plain6 - re6).toBeGreaterThan(plain2 - re2); // what recomputation saves grows with the layers it does not keep
    expect(re6 - re2).toBeLessThan(0.5 * (plain6 - plain2)); // per extra layer it keeps far less
  });
});

describe('lean head ops against autodiff of the plain log-softmax', () => {
  for (const trained of [false, true]) {
    it(`${trained ? 'trained' : 'frozen'} head: values and gradients (rows${trained ? ' and head' : ''}) within 1e-5 relative`, () => {
      const [n, d, V] = [5, 6, 11];
      const h = tf.randomNormal([n, d], 0, 1, 'float32', 1) as tf.Tensor2D;
      const w = tf.variable(tf.randomNormal([d, V], 0, 1, 'float32', 2), trained) as unknown as tf.Tensor2D & tf.Variable;
      const ids = tf.tensor1d([0, 10, 3, 3, 7], 'int32');
      const R = tf.randomNormal([n], 0, 1, 'float32', 3);
      const lean = (x: tf.Tensor2D) => tf.add(tf.sum(tf.mul(headLogprob(x, w, ids), R)), tf.sum(headEntropy(x, w))) as tf.Scalar;
      const plain = (x: tf.Tensor2D) => {
        const z = tf.matMul(x, w);
        const lsm = tf.logSoftmax(z);
        const lp = tf.sum(tf.mul(lsm, tf.oneHot(ids, V).toFloat()), -1);
        const ent = tf.neg(tf.sum(tf.mul(tf.exp(lsm), lsm), -1));
        return tf.add(tf.sum(tf.mul(lp, R)), tf.sum(ent)) as tf.Scalar;
      };
      const both = (f: (x: tf.Tensor2D) => tf.Scalar) => {
        const dh = tf.grad((x: tf.Tensor) => f(x as tf.Tensor2D))(h);
        const out = {
          v: f(h).dataSync()[0],
          dh: dh.dataSync().slice() as Float32Array,
          dw: trained
            ? (tf
                .variableGrads(() => f(h), [w])
                .grads[w.name].dataSync()
                .slice() as Float32Array)
            : null,
        };
        return out;
      };
      const a = both(lean);
      const b = both(plain);
      expect(a.v).toBeCloseTo(b.v, 4);
      const rel = (x: Float32Array) => 1e-5 * Math.max(1, ...[...x].map(Math.abs)); // float32 rounding of both paths
      expect(maxAbsDiff(a.dh, b.dh)).toBeLessThan(rel(b.dh));
      expect(b.dh.some((v) => Math.abs(v) > 1e-2)).toBe(true);
      if (trained) expect(maxAbsDiff(a.dw!, b.dw!)).toBeLessThan(rel(b.dw!));
      tf.dispose([h, w, ids, R]);
    });
  }
});

describe('no leaks with recomputation', () => {
  it('Adam steps leave tf.memory().numTensors unchanged, and a plain gradient afterwards still works (the engine tape is restored)', () => {
    const config = randomHfConfig();
    const model = HfModel.fromSource(config, memorySource(config, randomWeights(config, 5)), { trainable: 'lora', recompute: true });
    try {
      model.addAdapter('role', CFG, 1);
      const opt = tf.train.adam(1e-2);
      const loss = () => tf.neg(tf.sum(scoreHf(model, batch, { adapter: 'role', entropy: true }).logp)) as tf.Scalar;
      opt.minimize(loss, false, model.adapterVariables('role'));
      const n = tf.memory().numTensors;
      opt.minimize(loss, false, model.adapterVariables('role'));
      opt.minimize(loss, false, model.adapterVariables('role'));
      expect(tf.memory().numTensors).toBe(n);
      const x = tf.scalar(3);
      const g = tf.grad((v: tf.Tensor) => tf.mul(v, v))(x);
      expect(g.dataSync()[0]).toBe(6);
      tf.dispose([x, g]);
      expect(tf.memory().numTensors).toBe(n);
      opt.dispose();
    } finally {
      model.dispose();
    }
  });
});
