// Each hand-written backward pass against tfjs's own autodiff of the same function, and each
// backend's variant of an op (layers.ts TRAINING_KERNELS) on the backend the tests run on.
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import {
  channelProduct,
  embed,
  gelu,
  linear,
  linearFlags,
  linearTransposed,
  mlp,
  permute,
  rmsNorm,
  selfAttention,
  selfAttentionBatched,
  selfAttentionChannels,
  trainingKernels,
} from '../../../src/core/models/layers';
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

  it('trainingKernels: wasm and cpu keep the custom ops, tensorflow takes the plain kernels; an unknown backend is named', () => {
    expect(trainingKernels('wasm')).toEqual({ selfAttention: selfAttentionChannels, linear: linearTransposed });
    expect(trainingKernels('cpu')).toEqual({ selfAttention: selfAttentionChannels, linear: linearTransposed });
    expect(trainingKernels('tensorflow')).toEqual({ selfAttention: selfAttentionBatched, linear: linearFlags });
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

// The block's custom-gradient ops (layers.ts): value and gradients against tfjs autodiff of the
// plain compositions they replace, and no tensors left behind by their backward passes.
const GELU_C = Math.sqrt(2 / Math.PI);
const refGelu = (x: tf.Tensor) => tf.mul(tf.mul(x, 0.5), tf.add(tf.tanh(tf.mul(tf.add(x, tf.mul(tf.mul(tf.mul(x, x), x), 0.044715)), GELU_C)), 1));
const refRmsNorm = (x: tf.Tensor, g: tf.Tensor, eps: number) => tf.mul(tf.div(x, tf.sqrt(tf.add(tf.mean(tf.mul(x, x), -1, true), eps))), g);

/** Causal attention of heads via plain batched products (the previous implementation). */
function refAttention(h: tf.Tensor2D, wq: tf.Tensor2D, wk: tf.Tensor2D, wv: tf.Tensor2D, B: number, T: number, H: number): tf.Tensor2D {
  const d = wq.shape[1];
  const hd = d / H;
  const heads = (x: tf.Tensor) => tf.reshape(tf.transpose(tf.reshape(x, [B, T, H, hd]), [0, 2, 1, 3]), [B * H, T, hd]) as tf.Tensor3D;
  const [q, k, v] = [wq, wk, wv].map((w) => heads(tf.matMul(h, w)));
  const mask = tf.tensor2d(
    Array.from({ length: T * T }, (_, i) => (i % T > Math.floor(i / T) ? -1e9 : 0)),
    [T, T],
  );
  const att = tf.softmax(tf.add(tf.div(tf.matMul(q, tf.transpose(k, [0, 2, 1])), Math.sqrt(hd)), mask), -1) as tf.Tensor3D;
  const y = tf.matMul(att, v);
  return tf.reshape(tf.transpose(tf.reshape(y, [B, H, T, hd]), [0, 2, 1, 3]), [B * T, d]) as tf.Tensor2D;
}

function causal(T: number): tf.Tensor4D {
  return tf.tensor4d(
    Array.from({ length: T * T }, (_, i) => (i % T > Math.floor(i / T) ? -1e9 : 0)),
    [1, 1, T, T],
  );
}

function values(f: () => tf.Tensor): Float32Array {
  const t = tf.tidy(f);
  const out = t.dataSync() as Float32Array;
  t.dispose();
  return out;
}

describe('block ops', () => {
  it('gelu (sigmoid form) equals the tanh form', () => {
    const x = tf.randomNormal([7, 5], 0, 3, 'float32', 6);
    expect(
      maxAbsDiff(
        values(() => gelu(x as tf.Tensor2D)),
        values(() => refGelu(x)),
      ),
    ).toBeLessThan(1e-5);
    x.dispose();
  });

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
    tf.dispose([x, g]);
  });

  it('mlp: value and gradients equal autodiff of gelu(h wfc) wproj (tanh form)', () => {
    const h = tf.randomNormal([6, 4], 0, 1, 'float32', 9);
    const wfc = tf.randomNormal([4, 10], 0, 1, 'float32', 10);
    const wproj = tf.randomNormal([10, 4], 0, 1, 'float32', 11);
    const ref = (p: tf.Tensor, q: tf.Tensor, r: tf.Tensor) =>
      tf.matMul(refGelu(tf.matMul(p as tf.Tensor2D, q as tf.Tensor2D)) as tf.Tensor2D, r as tf.Tensor2D);
    expect(
      maxAbsDiff(
        values(() => mlp(h as tf.Tensor2D, wfc as tf.Tensor2D, wproj as tf.Tensor2D)),
        values(() => ref(h, wfc, wproj)),
      ),
    ).toBeLessThan(1e-4);
    const a = grads((p, q, r) => mlp(p as tf.Tensor2D, q as tf.Tensor2D, r as tf.Tensor2D), [h, wfc, wproj]);
    const b = grads(ref, [h, wfc, wproj]);
    for (let i = 0; i < 3; i++) expect(maxAbsDiff(a[i], b[i])).toBeLessThan(1e-3);
    tf.dispose([h, wfc, wproj]);
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

  for (const [name, attention] of [
    ['selfAttention', selfAttention],
    ['selfAttentionChannels', selfAttentionChannels],
    ['selfAttentionBatched', selfAttentionBatched],
  ] as const) {
    for (const [B, T, H] of [
      [3, 5, 2],
      [1, 4, 1],
      [2, 1, 2],
    ]) {
      it(`${name} (B=${B}, T=${T}, H=${H}): value and gradients equal autodiff of batched-matMul attention`, () => {
        const d = 4 * H;
        const h = tf.randomNormal([B * T, d], 0, 1, 'float32', 15);
        const ws = [16, 17, 18].map((s) => tf.randomNormal([d, d], 0, 0.5, 'float32', s));
        const bias = causal(T);
        const mine = (p: tf.Tensor, q: tf.Tensor, r: tf.Tensor, s: tf.Tensor) =>
          attention(p as tf.Tensor2D, q as tf.Tensor2D, r as tf.Tensor2D, s as tf.Tensor2D, bias, B, T, H);
        const ref = (p: tf.Tensor, q: tf.Tensor, r: tf.Tensor, s: tf.Tensor) =>
          refAttention(p as tf.Tensor2D, q as tf.Tensor2D, r as tf.Tensor2D, s as tf.Tensor2D, B, T, H);
        const w3 = ws as [tf.Tensor, tf.Tensor, tf.Tensor];
        expect(
          maxAbsDiff(
            values(() => mine(h, ...w3)),
            values(() => ref(h, ...w3)),
          ),
        ).toBeLessThan(1e-5);
        const a = grads(mine as (...xs: tf.Tensor[]) => tf.Tensor, [h, ...ws]);
        const b = grads(ref as (...xs: tf.Tensor[]) => tf.Tensor, [h, ...ws]);
        for (let i = 0; i < 4; i++) expect(maxAbsDiff(a[i], b[i])).toBeLessThan(1e-4);
        tf.dispose([h, ...ws, bias]);
      });
    }
  }

  it('the custom backward passes leave no tensors behind', () => {
    const h = tf.randomNormal([6, 4], 0, 1, 'float32', 19);
    const w = [20, 21, 22, 23].map((s) => tf.randomNormal([4, 4], 0, 0.5, 'float32', s));
    const wfc = tf.randomNormal([4, 8], 0, 0.5, 'float32', 24);
    const wproj = tf.randomNormal([8, 4], 0, 0.5, 'float32', 25);
    const g = tf.ones([4]);
    const bias = causal(3);
    const f = () =>
      tf.sum(
        mlp(
          rmsNorm(
            tf.add(
              h,
              linear(selfAttention(h as tf.Tensor2D, w[0] as tf.Tensor2D, w[1] as tf.Tensor2D, w[2] as tf.Tensor2D, bias, 2, 3, 2), w[3] as tf.Tensor2D),
            ) as tf.Tensor2D,
            g as tf.Tensor1D,
            1e-5,
          ),
          wfc as tf.Tensor2D,
          wproj as tf.Tensor2D,
        ),
      ) as tf.Scalar;
    // f reads the very tensors it is differentiated against, so every custom backward runs.
    const run = () => tf.dispose(tf.grads(() => f())([h, ...w, wfc, wproj, g]));
    run();
    const n = tf.memory().numTensors;
    run();
    expect(tf.memory().numTensors).toBe(n);
    tf.dispose([h, ...w, wfc, wproj, g, bias]);
  });
});
