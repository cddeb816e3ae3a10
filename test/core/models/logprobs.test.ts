import * as tf from '@tensorflow/tfjs';
import { afterAll, describe, expect, it } from 'vitest';
import { scoreCompletions, scoreCompletionsData } from '../../../src/core/models/logprobs';
import { Transformer } from '../../../src/core/models/transformer';
import { microConfig, randomIds } from './helpers';

/** Slow reference: one unpadded row at a time, log-softmax in float64 in JS. */
function reference(model: Transformer, prompt: number[], completion: number[]): { logp: number[]; entropy: number[] } {
  const seq = [...prompt, ...completion];
  const y = model.forward(tf.tensor2d(seq.slice(0, -1), [1, seq.length - 1], 'int32'));
  const logits = (y.arraySync() as number[][][])[0];
  y.dispose();
  const logp: number[] = [];
  const entropy: number[] = [];
  completion.forEach((tok, j) => {
    const z = logits[prompt.length - 1 + j];
    const m = Math.max(...z);
    const lse = m + Math.log(z.reduce((a, v) => a + Math.exp(v - m), 0));
    logp.push(z[tok] - lse);
    entropy.push(-z.reduce((a, v) => a + Math.exp(v - lse) * (v - lse), 0));
  });
  return { logp, entropy };
}

describe('scoreCompletions', () => {
  const model = new Transformer(microConfig());
  afterAll(() => model.dispose());
  const pairs = [
    { prompt: randomIds(3, 1), completion: randomIds(6, 2) },
    { prompt: randomIds(8, 3), completion: randomIds(2, 4) },
    { prompt: randomIds(1, 5), completion: [] },
  ];

  it('matches a per-row float64 reference on a right-padded batch, zero on padding', () => {
    const s = scoreCompletionsData(model, pairs);
    expect(s.logp.map((r) => r.length)).toEqual([6, 6, 6]);
    pairs.forEach((p, r) => {
      const ref = reference(model, p.prompt, p.completion);
      for (let j = 0; j < 6; j++) {
        const real = j < p.completion.length;
        expect(s.mask[r][j]).toBe(real ? 1 : 0);
        expect(s.logp[r][j]).toBeCloseTo(real ? ref.logp[j] : 0, 4);
        expect(s.entropy[r][j]).toBeCloseTo(real ? ref.entropy[j] : 0, 4);
      }
    });
  });

  it('is differentiable with respect to every parameter', () => {
    const { grads, value } = tf.variableGrads(() => tf.neg(tf.sum(scoreCompletions(model, pairs).logp)) as tf.Scalar, model.variables());
    for (const [name, g] of Object.entries(grads))
      expect(
        tf.tidy(() => tf.sum(tf.abs(g)).dataSync()[0]),
        name,
      ).toBeGreaterThan(0);
    tf.dispose([value, ...Object.values(grads)]);
  });

  it('rejects an empty prompt and a sequence beyond the context', () => {
    expect(() => scoreCompletions(model, [{ prompt: [], completion: [1] }])).toThrow(/row 0 has an empty prompt/);
    expect(() => scoreCompletions(model, [{ prompt: randomIds(40, 1), completion: randomIds(30, 2) }])).toThrow(/contextLength is 64/);
  });
});
