// Each hand-written backward pass against tfjs's own autodiff of the same function.
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { bmm, embed, linear } from '../../../src/core/models/layers';
import { maxAbsDiff } from './helpers';

/** Gradients of sum(f(xs) * W) for a fixed, non-uniform weight W (so every output matters differently). */
function grads(f: (...xs: tf.Tensor[]) => tf.Tensor, xs: tf.Tensor[]): Float32Array[] {
  const gs = tf.tidy(() =>
    tf.grads((...a: tf.Tensor[]) => {
      const y = f(...a);
      return tf.sum(tf.mul(y, tf.sin(tf.reshape(tf.range(0, y.size), y.shape))));
    })(xs),
  );
  const out = gs.map((g) => g.dataSync() as Float32Array);
  tf.dispose(gs);
  return out;
}

describe('custom-gradient layers', () => {
  it('linear: value and gradients equal matMul autodiff', () => {
    const x = tf.randomNormal([5, 4], 0, 1, 'float32', 1);
    const w = tf.randomNormal([4, 3], 0, 1, 'float32', 2);
    const a = grads((p, q) => linear(p as tf.Tensor2D, q as tf.Tensor2D), [x, w]);
    const b = grads((p, q) => tf.matMul(p as tf.Tensor2D, q as tf.Tensor2D), [x, w]);
    for (let i = 0; i < 2; i++) expect(maxAbsDiff(a[i], b[i])).toBeLessThan(1e-5);
    tf.dispose([x, w]);
  });

  it('bmm: gradients equal batched matMul autodiff', () => {
    const x = tf.randomNormal([3, 5, 4], 0, 1, 'float32', 3);
    const w = tf.randomNormal([3, 4, 2], 0, 1, 'float32', 4);
    const a = grads((p, q) => bmm(p as tf.Tensor3D, q as tf.Tensor3D), [x, w]);
    const b = grads((p, q) => tf.matMul(p as tf.Tensor3D, q as tf.Tensor3D), [x, w]);
    for (let i = 0; i < 2; i++) expect(maxAbsDiff(a[i], b[i])).toBeLessThan(1e-5);
    tf.dispose([x, w]);
  });

  it('embed: rows of the table, and the gradient adds dy into the looked-up rows', () => {
    const table = tf.randomNormal([6, 3], 0, 1, 'float32', 5);
    const ids = tf.tensor1d([2, 0, 2], 'int32');
    const rows = tf.tidy(() => embed(ids, table as tf.Tensor2D));
    expect(maxAbsDiff(rows.dataSync(), tf.tidy(() => tf.gather(table, ids)).dataSync())).toBe(0);
    const g = tf.tidy(() => tf.grad((t: tf.Tensor) => tf.sum(embed(ids, t as tf.Tensor2D)))(table));
    expect(Array.from(g.dataSync())).toEqual([1, 1, 1, 0, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    tf.dispose([table, ids, rows, g]);
  });
});
