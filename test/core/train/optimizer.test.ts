/**
 * AdamW (src/core/train/optimizer.ts): one update against the formula worked by hand, and no
 * tensor left behind by construction, updates or dispose.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { AdamW } from '../../../src/core/train/optimizer';

describe('AdamW', () => {
  it('first update: p - lr * (g / (|g| + eps)) - lr * wd * p, bias-corrected (hand-worked)', () => {
    const p = tf.variable(tf.tensor1d([1, -2]), true);
    const opt = new AdamW(new Map([['p', p]]), { lr: 0.1, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01 });
    const g = tf.tensor1d([0.5, -4]);
    opt.apply(new Map([['p', g]]));
    // Step 1: m = 0.1 g, v = 0.001 g^2; stepSize = lr sqrt(1 - 0.999) / (1 - 0.9) = lr sqrt(0.001) / 0.1;
    // update = stepSize * m / (sqrt(v) + eps) ~= lr * sign(g); decoupled decay lr * wd * p.
    const got = Array.from(p.dataSync());
    expect(got[0]).toBeCloseTo(1 - 0.1 - 0.1 * 0.01 * 1, 5);
    expect(got[1]).toBeCloseTo(-2 + 0.1 - 0.1 * 0.01 * -2, 5);
    g.dispose();
    opt.dispose();
    p.dispose();
  });

  it('leaves no tensor behind: construction, two updates and dispose', () => {
    const before = tf.memory().numTensors;
    const params = new Map<string, tf.Variable>();
    tf.tidy(() => {
      params.set('a', tf.variable(tf.ones([3, 2]), true));
      params.set('b', tf.variable(tf.zeros([4]), true));
    });
    const opt = new AdamW(params, { lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0 });
    // 2 parameters + 2 moments each, nothing else.
    expect(tf.memory().numTensors - before).toBe(6);
    for (let i = 0; i < 2; i++) {
      const grads = new Map([
        ['a', tf.fill([3, 2], 0.5)],
        ['b', tf.fill([4], -1)],
      ]);
      opt.apply(grads);
      for (const g of grads.values()) g.dispose();
    }
    expect(tf.memory().numTensors - before).toBe(6);
    opt.dispose();
    for (const p of params.values()) p.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });
});
