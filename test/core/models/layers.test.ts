// The kernels models/layers.ts shares with the Hugging Face family: each hand-written backward
// pass against tfjs's own autodiff of the same function, and each backend's variant of an op
// (layers.ts TRAINING_KERNELS) on the backend the tests run on.
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { channelProduct, embed, linear, linearFlags, linearTransposed, permute, rmsNorm, rmsNormValue, trainingKernels } from '../../../src/core/models/layers';
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
  for (const [name, lin] of [
    ['linear', linear],
    ['linearTransposed', linearTransposed],
    ['linearFlags', linearFlags],
  ] as const) {
    it(`${name}: value and gradients equal matMul autodiff`, () => {
      const x = tf.randomNormal([5, 4], 0, 1, 'float32', 1);
      const w = tf.randomNormal([4, 3], 0, 1, 'float32', 2);
      expect(
        maxAbsDiff(
          values(() => lin(x as tf.Tensor2D, w as tf.Tensor2D)),
          values(() => tf.matMul(x as tf.Tensor2D, w as tf.Tensor2D)),
        ),
      ).toBeLessThan(1e-5);
      const a = grads((p, q) => lin(p as tf.Tensor2D, q as tf.Tensor2D), [x, w]);
      const b = grads((p, q) => tf.matMul(p as tf.Tensor2D, q as tf.Tensor2D), [x, w]);
      for (let i = 0; i < 2; i++) expect(maxAbsDiff(a[i], b[i])).toBeLessThan(1e-5);
      tf.dispose([x, w]);
    });
  }

  it('trainingKernels: wasm and cpu keep the custom linear, tensorflow takes the plain one; an unknown backend is named', () => {
    expect(trainingKernels('wasm')).toEqual({ linear: linearTransposed });
    expect(trainingKernels('cpu')).toEqual({ linear: linearTransposed });
    expect(trainingKernels('tensorflow')).toEqual({ linear: linearFlags });
    expect(() => trainingKernels('webgl')).toThrow(/"webgl".*wasm, cpu, tensorflow/);
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

// The other custom-gradient ops (layers.ts): value and gradients against tfjs autodiff of the
// plain compositions they replace, and no tensors left behind by their backward passes.
const refRmsNorm = (x: tf.Tensor, g: tf.Tensor, eps: number) => tf.mul(tf.div(x, tf.sqrt(tf.add(tf.mean(tf.mul(x, x), -1, true), eps))), g);

function values(f: () => tf.Tensor): Float32Array {
  const t = tf.tidy(f);
  const out = t.dataSync() as Float32Array;
  t.dispose();
  return out;
}

describe('block ops', () => {
  it('rmsNorm: value and gradients equal autodiff of the plain formula', () => {
    const x = tf.randomNormal([6, 8], 0, 1, 'float32', 7);
    const g = tf.randomNormal([8], 1, 0.3, 'float32', 8);
    expect(
      maxAbsDiff(
        values(() => rmsNorm(x as tf.Tensor2D, g as tf.Tensor1D, 1e-5)),
        values(() => refRmsNorm(x, g, 1e-5)),
      ),
    ).toBeLessThan(1e-5);
    const a = grads((p, q) => rmsNorm(p as tf.Tensor2D, q as tf.Tensor1D, 1e-5), [x, g]);
    const b = grads((p, q) => refRmsNorm(p, q, 1e-5), [x, g]);
    for (let i = 0; i < 2; i++) expect(maxAbsDiff(a[i], b[i])).toBeLessThan(1e-4);
    expect(
      maxAbsDiff(
        values(() => rmsNormValue(x as tf.Tensor2D, g as tf.Tensor1D, 1e-5)),
        values(() => refRmsNorm(x, g, 1e-5)),
      ),
    ).toBeLessThan(1e-5);
    tf.dispose([x, g]);
  });

  it('channelProduct equals per-channel matMuls', () => {
    const x = tf.randomNormal([5, 3, 4], 0, 1, 'float32', 12); // [P, K, C]
    const f = tf.randomNormal([3, 4, 6], 0, 1, 'float32', 13); // [K, C, M]
    const ref = () => tf.transpose(tf.matMul(tf.transpose(x, [2, 0, 1]), tf.transpose(f, [1, 0, 2])), [1, 0, 2]); // [P, C, M]
    expect(
      maxAbsDiff(
        values(() => channelProduct(x as tf.Tensor3D, f as tf.Tensor3D)),
        values(ref),
      ),
    ).toBeLessThan(1e-5);
    tf.dispose([x, f]);
  });

  it('permute handles size-1 and empty axes', () => {
    const x = tf.randomNormal([1, 3, 1, 2], 0, 1, 'float32', 14);
    expect(
      maxAbsDiff(
        values(() => permute(x, [1, 3, 1, 2], [3, 0, 2, 1])),
        values(() => tf.transpose(x, [3, 0, 2, 1])),
      ),
    ).toBe(0);
    expect(values(() => permute(tf.zeros([0, 4]), [1, 0, 2, 2], [1, 0, 3, 2], [0, 4])).length).toBe(0);
    x.dispose();
  });

  it('the custom backward passes leave no tensors behind', () => {
    const h = tf.randomNormal([6, 4], 0, 1, 'float32', 19);
    const w = tf.randomNormal([4, 4], 0, 0.5, 'float32', 20);
    const table = tf.randomNormal([9, 4], 0, 0.5, 'float32', 21);
    const ids = tf.tensor1d([1, 8, 0, 3, 3, 5], 'int32');
    const g = tf.ones([4]);
    const f = () =>
      tf.sum(rmsNorm(linearTransposed(tf.add(h, embed(ids, table as tf.Tensor2D)) as tf.Tensor2D, w as tf.Tensor2D), g as tf.Tensor1D, 1e-5)) as tf.Scalar;
    // f reads the very tensors it is differentiated against, so every custom backward runs.
    const run = () => tf.dispose(tf.grads(() => f())([h, w, table, g]));
    run();
    const n = tf.memory().numTensors;
    run();
    expect(tf.memory().numTensors).toBe(n);
    tf.dispose([h, w, table, ids, g]);
  });
});
