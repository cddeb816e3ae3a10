// Teacher-forced log-probs of the HF family (src/core/models/hf/logprobs.ts) against the float64
// reference's log-softmax, chunked vs unchunked heads, and gradients flowing to LoRA factors.
import * as tf from '@tensorflow/tfjs';
import { afterAll, describe, expect, it } from 'vitest';
import { HfModel } from '../../../../src/core/models/hf/model';
import { scoreHf, scoreHfData, sequenceLogprobs } from '../../../../src/core/models/hf/logprobs';
import {
  FIXTURES,
  loadFixture,
  logSoftmax64,
  memorySource,
  randomQwen2Config,
  randomHfConfig,
  randomIds,
  randomLora,
  randomWeights,
  reference64,
} from './randomModel';

describe('scoreHf', () => {
  const config = randomHfConfig();
  const weights = randomWeights(config, 3);
  const model = HfModel.fromSource(config, memorySource(config, weights));
  afterAll(() => model.dispose());
  const pairs = [
    { prompt: randomIds(3, 1), completion: randomIds(5, 2) },
    { prompt: randomIds(7, 3), completion: randomIds(2, 4) },
    { prompt: randomIds(1, 5), completion: [] },
    { prompt: randomIds(4, 6), completion: randomIds(6, 7) },
  ];

  /** Reference log-probs and entropies of a pair's completion tokens. */
  const expected = (p: { prompt: number[]; completion: number[] }) => {
    const seq = [...p.prompt, ...p.completion];
    const logits = reference64(config, weights, seq);
    return p.completion.map((tok, j) => {
      const lsm = logSoftmax64(logits[p.prompt.length - 1 + j]);
      return { logp: lsm[tok], entropy: -lsm.reduce((s, v) => s + Math.exp(v) * v, 0) };
    });
  };

  it('log-probs and entropies equal the float64 reference within 1e-4; mask marks real completion tokens', () => {
    const s = scoreHfData(model, pairs, { entropy: true });
    expect(s.logp.map((r) => r.length)).toEqual([6, 6, 6, 6]);
    expect(scoreHfData(model, pairs).entropy).toBeUndefined(); // on request only
    pairs.forEach((p, r) => {
      const ref = expected(p);
      expect(s.mask[r]).toEqual([...Array(p.completion.length).fill(1), ...Array(6 - p.completion.length).fill(0)]);
      ref.forEach((e, j) => {
        expect(Math.abs(s.logp[r][j] - e.logp)).toBeLessThan(1e-4);
        expect(Math.abs(s.entropy![r][j] - e.entropy)).toBeLessThan(1e-4);
      });
      for (let j = p.completion.length; j < 6; j++) expect(Math.abs(s.logp[r][j])).toBe(0); // masked (0 or -0)
    });
    expect(Math.min(...s.logp.flat())).toBeLessThan(-1); // peaked model, unlikely targets: not a flat comparison
  });

  it('a head computed one row at a time equals the whole head', () => {
    const whole = scoreHfData(model, pairs);
    const chunked = scoreHfData(model, pairs, { chunkRows: 1 });
    const odd = scoreHfData(model, pairs, { chunkRows: 5 });
    whole.logp.flat().forEach((v, i) => {
      expect(Math.abs(chunked.logp.flat()[i] - v)).toBeLessThan(1e-6);
      expect(Math.abs(odd.logp.flat()[i] - v)).toBeLessThan(1e-6);
    });
  });

  it('a trained head (one-hot pick) gives the log-probs of a frozen head (column gather), tied and untied', () => {
    for (const c of [config, randomQwen2Config()]) {
      const w = c === config ? weights : randomWeights(c, 3);
      const frozen = HfModel.fromSource(c, memorySource(c, w));
      const trained = HfModel.fromSource(c, memorySource(c, w), { trainable: true });
      try {
        const a = scoreHfData(frozen, pairs).logp.flat();
        const b = scoreHfData(trained, pairs).logp.flat();
        a.forEach((v, i) => expect(Math.abs(v - b[i])).toBeLessThan(1e-5));
      } finally {
        frozen.dispose();
        trained.dispose();
      }
    }
  });

  it('sequenceLogprobs gives n-1 values for n ids, equal to the reference', () => {
    const ids = randomIds(9, 12);
    const got = sequenceLogprobs(model, ids);
    expect(got.length).toBe(8);
    const logits = reference64(config, weights, ids);
    got.forEach((v, t) => expect(Math.abs(v - logSoftmax64(logits[t])[ids[t + 1]])).toBeLessThan(1e-4));
    expect(sequenceLogprobs(model, [5])).toEqual([]);
  });

  it('names the row of a bad pair', () => {
    expect(() => scoreHf(model, [{ prompt: [], completion: [1] }])).toThrow(/row 0/);
    expect(() => scoreHf(model, [pairs[0], { prompt: [1], completion: [40] }])).toThrow(/row 1 has id 40/);
  });
});

describe('scoreHf gradients', () => {
  it('flow to the LoRA factors only, and a step along them raises the scored log-prob', () => {
    const config = randomHfConfig();
    const model = HfModel.fromSource(config, memorySource(config, randomWeights(config, 3)), { lora: randomLora(config, 2, 0.5, 4), trainable: true });
    try {
      const pairs = [{ prompt: randomIds(3, 1), completion: randomIds(4, 2) }];
      const total = () => tf.tidy(() => tf.sum(scoreHf(model, pairs).logp).dataSync()[0]);
      const before = total();
      const { grads } = tf.variableGrads(() => tf.sum(scoreHf(model, pairs).logp) as tf.Scalar);
      expect(Object.keys(grads).length).toBe(model.variables().length);
      expect(Object.keys(grads).every((n) => /lora_[AB]$/.test(n))).toBe(true);
      for (const v of model.variables()) tf.tidy(() => v.assign(tf.add(v, tf.mul(grads[v.name], 1e-3))));
      tf.dispose(Object.values(grads));
      expect(total()).toBeGreaterThan(before);
    } finally {
      model.dispose();
    }
  });

  it('a smoke run of SGD steps (no variable list: every trainable variable) moves every LoRA factor and no base weight', () => {
    const config = randomQwen2Config();
    const model = HfModel.fromSource(config, memorySource(config, randomWeights(config, 3)), { lora: randomLora(config, 2, 0.5, 4), trainable: true });
    const snapshot = () =>
      new Map(
        [
          ...model.params,
          ...[...model.lora].flatMap(
            ([n, l]) =>
              [
                [`${n}.A`, l.a],
                [`${n}.B`, l.b],
              ] as const,
          ),
        ].map(([n, v]) => [n, v.dataSync().slice()]),
      );
    try {
      const pairs = [{ prompt: randomIds(3, 1), completion: randomIds(4, 2) }];
      const before = snapshot();
      const opt = tf.train.sgd(1e-2);
      const losses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const loss = opt.minimize(() => tf.neg(tf.mean(scoreHf(model, pairs).logp)) as tf.Scalar, true)!;
        losses.push(loss.dataSync()[0]);
        loss.dispose();
      }
      opt.dispose();
      expect(losses.every(Number.isFinite)).toBe(true);
      expect(losses[2]).toBeLessThan(losses[0]);
      const after = snapshot();
      for (const [name, v] of before) {
        const moved = v.some((x, i) => x !== after.get(name)![i]);
        expect(moved, name).toBe(!model.params.has(name));
      }
    } finally {
      model.dispose();
    }
  });
});

describe('sequenceLogprobs on the fixtures made with transformers', () => {
  for (const f of FIXTURES) {
    it(`${f.name}: equal transformers' log-probs (expected.json) within 1e-4`, () => {
      const { model, expected } = loadFixture(f);
      try {
        for (const seq of expected.sequences) {
          const got = sequenceLogprobs(model, seq.ids);
          expect(got.length).toBe(seq.ids.length - 1);
          got.forEach((v, t) => expect(Math.abs(v - seq.logprobs[t])).toBeLessThan(1e-4));
        }
      } finally {
        model.dispose();
      }
    });
  }
});
