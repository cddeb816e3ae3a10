/**
 * The differentiable building blocks of the transformer, written for the tfjs wasm backend
 * (shared/design/TOOLCHAIN.md): there a plain 2-D matmul runs at ~30-40 GFLOP/s, while a matmul
 * with transpose flags or a batched 3-D one runs at 2-4. So every product here is a plain 2-D
 * `matMul` without flags, and the backward passes are written by hand (`tf.customGrad`) with
 * explicit `tf.transpose`s instead of tfjs's default gradients, which use transpose flags.
 *
 * Not a layer library: no state, no variables (transformer.ts owns those). Call inside tf.tidy.
 * Tests: test/core/models/layers.test.ts (each custom gradient against tfjs's own autodiff).
 */
import * as tf from '@tensorflow/tfjs';

type Grad = tf.GradSaveFunc;

/** y = x @ w. Backward: dx = dy @ w^T, dw = x^T @ dy, both plain 2-D products. */
export const linear = tf.customGrad((...args) => {
  const [x, w, save] = args as [tf.Tensor2D, tf.Tensor2D, Grad];
  save([x, w]);
  return {
    value: tf.matMul(x, w), // [N, dout]
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [xs, ws] = saved as [tf.Tensor2D, tf.Tensor2D];
      return [tf.matMul(dy as tf.Tensor2D, tf.transpose(ws)), tf.matMul(tf.transpose(xs), dy as tf.Tensor2D)];
    },
  };
}) as (x: tf.Tensor2D, w: tf.Tensor2D) => tf.Tensor2D;

/**
 * Embedding lookup as a product with one-hot rows, y = onehot @ w: wasm has no kernel for the
 * gradient of `gather`. The one-hot input is data, so its gradient is zero (not computed).
 */
export const oneHotProduct = tf.customGrad((...args) => {
  const [onehot, w, save] = args as [tf.Tensor2D, tf.Tensor2D, Grad];
  save([onehot]);
  return {
    value: tf.matMul(onehot, w), // [N, d]
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [oh] = saved as [tf.Tensor2D];
      return [tf.zerosLike(oh), tf.matMul(tf.transpose(oh), dy as tf.Tensor2D)];
    },
  };
}) as (onehot: tf.Tensor2D, w: tf.Tensor2D) => tf.Tensor2D;

/** Rows of `table` for integer ids, differentiable with respect to the table. */
export function embed(ids: tf.Tensor1D, table: tf.Tensor2D): tf.Tensor2D {
  return oneHotProduct(tf.oneHot(ids, table.shape[0]).toFloat() as tf.Tensor2D, table); // [N, d]
}

/**
 * Batched product a[i] @ b[i] with a hand-written backward: da = dy @ b^T, db = a^T @ dy, with
 * explicit transposes. Used for attention only. On wasm a batched 3-D matMul takes a naive path
 * (~1.8 GFLOP/s, measured) but every alternative measured was no faster: a loop of 2-D products
 * needs per-entry slices, and wasm's Slice/Unpack/SplitV copy the whole input on every call
 * (~2-4 ms each for a [128, 64, 64] tensor), and broadcast-multiply-sum costs the same.
 */
export const bmm = tf.customGrad((...args) => {
  const [a, b, save] = args as [tf.Tensor3D, tf.Tensor3D, Grad];
  save([a, b]);
  return {
    value: tf.matMul(a, b), // [G, M, N]
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [as, bs] = saved as [tf.Tensor3D, tf.Tensor3D];
      const d = dy as tf.Tensor3D;
      return [tf.matMul(d, tf.transpose(bs, [0, 2, 1])), tf.matMul(tf.transpose(as, [0, 2, 1]), d)];
    },
  };
}) as (a: tf.Tensor3D, b: tf.Tensor3D) => tf.Tensor3D;

/**
 * RMSNorm (Zhang & Sennrich 2019): x / sqrt(mean(x^2) + eps) * g. Chosen over LayerNorm: one
 * reduction instead of two and no bias, fewer elementwise kernels per block on wasm; modern
 * decoder-only models (Llama, nanochat) use it with no loss in quality.
 */
export function rmsNorm(x: tf.Tensor2D, gain: tf.Tensor1D, eps: number): tf.Tensor2D {
  const ms = tf.mean(tf.mul(x, x), -1, true); // [N, 1]
  return tf.mul(tf.mul(x, tf.rsqrt(tf.add(ms, eps))), gain); // [N, d]
}

const GELU_C = Math.sqrt(2 / Math.PI);

/** GELU, tanh approximation (GPT-2); x*x*x rather than pow, which is slow on wasm. */
export function gelu(x: tf.Tensor2D): tf.Tensor2D {
  const cube = tf.mul(tf.mul(x, x), x);
  const inner = tf.mul(tf.add(x, tf.mul(cube, 0.044715)), GELU_C);
  return tf.mul(tf.mul(x, 0.5), tf.add(tf.tanh(inner), 1)); // [N, m]
}
