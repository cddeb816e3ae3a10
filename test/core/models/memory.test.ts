// Leak tests (STYLE.md 7): sampling, scoring and a training step leave tf.memory().numTensors unchanged.
import * as tf from '@tensorflow/tfjs';
import { afterAll, describe, expect, it } from 'vitest';
import { scoreCompletions, scoreCompletionsData } from '../../../src/core/models/logprobs';
import { sample } from '../../../src/core/models/sampler';
import { Transformer } from '../../../src/core/models/transformer';
import { trainStep } from '../../../src/core/models/warmstart';
import { microConfig, randomIds } from './helpers';

describe('no tensor leaks', () => {
  const model = new Transformer(microConfig());
  afterAll(() => model.dispose());
  const prompts = [randomIds(3, 1), randomIds(7, 2)];
  const pairs = prompts.map((p, i) => ({ prompt: p, completion: randomIds(5, 10 + i) }));

  it('sampling (KV cache and full), including rows that stop early', () => {
    sample(model, prompts, { maxNewTokens: 3, seed: 1 }); // warm-up
    const n = tf.memory().numTensors;
    sample(model, prompts, { maxNewTokens: 6, seed: 2, endId: 50 });
    sample(model, prompts, { maxNewTokens: 6, seed: 2, decode: 'full' });
    expect(tf.memory().numTensors).toBe(n);
  });

  it('scoring', () => {
    const n = tf.memory().numTensors;
    scoreCompletionsData(model, pairs);
    const s = scoreCompletions(model, pairs);
    tf.dispose(Object.values(s));
    expect(tf.memory().numTensors).toBe(n);
  });

  it('a training step (after the optimiser has made its slots) and optimiser disposal', () => {
    const n0 = tf.memory().numTensors;
    const opt = tf.train.adam(1e-3);
    trainStep(model, pairs, opt);
    const n1 = tf.memory().numTensors;
    trainStep(model, pairs, opt);
    expect(tf.memory().numTensors).toBe(n1);
    opt.dispose();
    expect(tf.memory().numTensors).toBe(n0);
  });
});
