/**
 * Differentiable building blocks shared by the Hugging Face model family (hf/model.ts and
 * hf/layers.ts): rmsNorm, the trainable linear, the one-hot embedding, and the two layout helpers
 * of the wasm attention (`permute`, `channelProduct`), written for tfjs's wasm backend, where a
 * plain 2-D matMul without transpose flags is far faster than a flagged or batched one: every
 * weight product here is a plain 2-D `matMul`, backward passes are written by hand
 * (`tf.customGrad`) with explicit transposes, attention products are depthwise convolutions
 * (`channelProduct`), and each op saves only what its backward needs (memory: see
 * `linearTransposed`). Why, the kernel facts and the traps to avoid:
 * docs/decisions/011-wasm-kernel-rules.md.
 *
 * On the native backend (tfjs name `tensorflow`) those tricks are slower than tfjs's own
 * gradients, so `linear` picks its form per backend from `TRAINING_KERNELS`
 * (docs/decisions/012-training-kernels-per-backend.md); the attention's per-backend forms are
 * hf/layers.ts `HF_TRAINING_KERNELS` (`npm run bench -- layer-variants` times both registries'
 * variants). The one-hot embedding stays everywhere. `KERNEL_BACKENDS` names the backends every
 * per-backend registry covers.
 *
 * Not a layer library: no state, no variables (hf/model.ts owns those). Call inside tf.tidy.
 * Tests: test/core/models/layers.test.ts (each custom gradient against tfjs's own autodiff, and
 * every backend's variant of an op against the others on the backend the tests run on).
 */
import * as tf from '@tensorflow/tfjs';

type Grad = tf.GradSaveFunc;

/**
 * y = x @ w. Backward: dx = dy @ w^T, dw = x^T @ dy, both plain 2-D products.
 *
 * Memory rules of tfjs that every op here follows: what a backward pass needs must go through
 * `save` (the engine keeps a clone; on wasm it shares the buffer: ./wasmKernels.ts), because a
 * tf.tidy around the forward pass (model.forward has one) disposes every other intermediate,
 * inputs included. And every backward runs inside its own tf.tidy: tfjs calls a custom gradient
 * eagerly outside any scope, so its intermediates would otherwise live until the whole backward
 * pass ends (they did: most of the old training-step peak).
 */
export const linearTransposed = tf.customGrad((...args) => {
  const [x, w, save] = args as [tf.Tensor2D, tf.Tensor2D, Grad];
  save([x, w]);
  return {
    value: tf.matMul(x, w), // [N, dout]
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
      tf.tidy(() => {
        const [xs, ws] = saved as [tf.Tensor2D, tf.Tensor2D];
        return [tf.matMul(dy as tf.Tensor2D, tf.transpose(ws)), tf.matMul(tf.transpose(xs), dy as tf.Tensor2D)];
      }),
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
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
      tf.tidy(() => {
        const [oh] = saved as [tf.Tensor2D];
        return [tf.zerosLike(oh), tf.matMul(tf.transpose(oh), dy as tf.Tensor2D)];
      }),
  };
}) as (onehot: tf.Tensor2D, w: tf.Tensor2D) => tf.Tensor2D;

/** Rows of `table` for integer ids, differentiable with respect to the table. */
export function embed(ids: tf.Tensor1D, table: tf.Tensor2D): tf.Tensor2D {
  return oneHotProduct(tf.oneHot(ids, table.shape[0]).toFloat() as tf.Tensor2D, table); // [N, d]
}

/** Column sums [N, d] -> [d] as a plain 2-D product ones[1, N] @ x: wasm reduces over a non-last axis by transposing first (slow). */
export function colSum(x: tf.Tensor2D): tf.Tensor1D {
  return tf.reshape(tf.matMul(tf.ones([1, x.shape[0]]), x), [x.shape[1]]) as tf.Tensor1D; // [d]
}

/**
 * RMSNorm (Zhang & Sennrich 2019): x / sqrt(mean(x^2) + eps) * g. Chosen over LayerNorm: one
 * reduction instead of two and no bias, fewer elementwise kernels per block on wasm; modern
 * decoder-only models (Llama, nanochat) use it with no loss in quality.
 *
 * One custom-gradient op that saves only x and g: tfjs's autodiff of the five kernels kept a copy
 * of each intermediate, and reduced the gain's gradient over rows with a transposing Sum.
 * Backward, recomputing r = rsqrt(mean(x^2) + eps), with xh = x r, G = dy g:
 * dx = r (G - xh mean(G xh)), dg = colSum(dy xh).
 */
export function rmsNorm(x: tf.Tensor2D, gain: tf.Tensor1D, eps: number): tf.Tensor2D {
  const op = tf.customGrad((...args) => {
    const [xi, gi, save] = args as [tf.Tensor2D, tf.Tensor1D, Grad];
    save([xi, gi]);
    return {
      value: rmsNormValue(xi, gi, eps), // [N, d]
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
        tf.tidy(() => {
          const [x, g0] = saved as [tf.Tensor2D, tf.Tensor1D];
          const r = rmsScale(x, eps); // [N, 1]
          const xh = tf.mul(x, r); // [N, d]
          const g = tf.mul(dy, g0); // [N, d]
          const dx = tf.mul(r, tf.sub(g, tf.mul(xh, tf.mean(tf.mul(g, xh), -1, true))));
          return [dx, colSum(tf.mul(dy, xh) as tf.Tensor2D)];
        }),
    };
  }) as (x: tf.Tensor2D, g: tf.Tensor1D) => tf.Tensor2D;
  return op(x, gain);
}

/** rmsNorm's value without the custom-gradient wrapper (inference: fewer scopes per decoding step). */
export function rmsNormValue(x: tf.Tensor2D, gain: tf.Tensor1D, eps: number): tf.Tensor2D {
  return tf.mul(tf.mul(x, rmsScale(x, eps)), gain); // [N, d]
}

function rmsScale(x: tf.Tensor2D, eps: number): tf.Tensor {
  return tf.rsqrt(tf.add(tf.mean(tf.mul(x, x), -1, true), eps)); // [N, 1]
}

/**
 * x (any shape with `shape`'s size) viewed as `shape`, transposed by `perm`, reshaped to `out`
 * (default: the permuted shape). Axes of size 1 are dropped before the transpose (wasm's
 * Transpose fails with "divide by zero" on some permutations with size-1 axes, e.g. B = 1), and
 * a permutation that is then the identity is a plain reshape.
 */
export function permute(x: tf.Tensor, shape: number[], perm: number[], out: number[] = perm.map((i) => shape[i])): tf.Tensor {
  const kept = shape.flatMap((n, i) => (n === 1 ? [] : [i]));
  const p = perm.filter((i) => shape[i] !== 1).map((i) => kept.indexOf(i));
  if (x.size === 0 || p.every((v, i) => v === i)) return tf.reshape(x, out);
  return tf.reshape(
    tf.transpose(
      tf.reshape(
        x,
        kept.map((i) => shape[i]),
      ),
      p,
    ),
    out,
  );
}

/**
 * Per-channel products as one depthwise convolution: out[p, c, m] = sum_k x[p, k, c] f[k, c, m],
 * x [P, K, C], f [K, C, M] -> [P, C, M]. With channels c = (batch, head) this is a batched
 * matmul of C independent [P, K] @ [K, M] products; wasm runs depthwiseConv2d with a channel
 * multiplier through XNNPACK at ~8 GFLOP/s against ~2.5 for a batched 3-D matMul (measured,
 * [256 x 64 x 32] @ [32 x 64]: 8 ms vs 25 ms, identical values).
 */
export function channelProduct(x: tf.Tensor3D, f: tf.Tensor3D): tf.Tensor3D {
  const [P, K, C] = x.shape;
  const M = f.shape[2];
  const out = tf.depthwiseConv2d(tf.reshape(x, [1, P, K, C]) as tf.Tensor4D, tf.reshape(f, [1, K, C, M]) as tf.Tensor4D, 1, 'valid'); // [1, P, 1, C*M]
  return tf.reshape(out, [P, C, M]) as tf.Tensor3D;
}

/** y = x @ w with matMul's own gradient (transpose flags): the native backend runs those fast. */
export function linearFlags(x: tf.Tensor2D, w: tf.Tensor2D): tf.Tensor2D {
  return tf.matMul(x, w); // [N, dout]
}

type LinearFn = (x: tf.Tensor2D, w: tf.Tensor2D) => tf.Tensor2D;

/** The training ops whose fastest form depends on the backend's kernels. */
export interface TrainingKernels {
  /** y = x @ w for a trained weight (dx and dw). */
  linear: LinearFn;
}

/** tfjs backend names (`tf.getBackend()`) the lab runs on: wasm, cpu, tensorflow (tfjs-node and tfjs-node-gpu). */
export const KERNEL_BACKENDS = ['wasm', 'cpu', 'tensorflow'] as const;
export type KernelBackend = (typeof KERNEL_BACKENDS)[number];

const WASM_KERNELS: TrainingKernels = { linear: linearTransposed };

/**
 * Per backend, measured (header): wasm keeps its tricks; cpu (tfjs's plain JS reference backend,
 * never chosen for speed) runs the same code as wasm; tensorflow takes the plain kernels.
 */
export const TRAINING_KERNELS = {
  wasm: WASM_KERNELS,
  cpu: WASM_KERNELS,
  tensorflow: { linear: linearFlags },
} satisfies Record<KernelBackend, TrainingKernels>;

/** The training kernels for a tfjs backend (default: the one in use); an unknown name is an error listing the known ones. */
export function trainingKernels(backend: string = tf.getBackend()): TrainingKernels {
  if (!Object.hasOwn(TRAINING_KERNELS, backend)) {
    throw new Error(`layers.ts: no training kernels for tfjs backend "${backend}"; known: ${KERNEL_BACKENDS.join(', ')}`);
  }
  return TRAINING_KERNELS[backend as KernelBackend];
}

/** y = x @ w of the training path, in the backend's form (`TRAINING_KERNELS`). */
export function linear(x: tf.Tensor2D, w: tf.Tensor2D): tf.Tensor2D {
  return trainingKernels().linear(x, w); // [N, dout]
}
