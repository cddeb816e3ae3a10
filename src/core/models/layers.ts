/**
 * The differentiable building blocks of the lab's transformer (rmsNorm, selfAttention, linear,
 * mlp, the one-hot embedding), written for tfjs's wasm backend, where a plain 2-D matMul without
 * transpose flags is far faster than a flagged or batched one: every weight product here is a
 * plain 2-D `matMul`, backward passes are written by hand (`tf.customGrad`) with explicit
 * transposes, training attention products are depthwise convolutions (`channelProduct`), and each
 * op saves only what its backward needs (memory: see `linearTransposed`). Why, the kernel facts
 * and the traps to avoid: docs/decisions/011-wasm-kernel-rules.md.
 *
 * On the native backend (tfjs name `tensorflow`) those tricks are slower than tfjs's own
 * gradients, so `selfAttention` and `linear` pick their form per backend from `TRAINING_KERNELS`
 * (docs/decisions/012-training-kernels-per-backend.md; `npm run bench -- layer-variants`). The
 * one-hot embedding stays everywhere.
 *
 * Not a layer library: no state, no variables (transformer.ts owns those). Call inside tf.tidy.
 * Tests: test/core/models/layers.test.ts (each custom gradient against tfjs's own autodiff, and
 * every backend's variant of an op against the others on the backend the tests run on).
 */
import * as tf from '@tensorflow/tfjs';

type Grad = tf.GradSaveFunc;

/**
 * y = x @ w. Backward: dx = dy @ w^T, dw = x^T @ dy, both plain 2-D products.
 *
 * Memory rules of tfjs that every op here follows: what a backward pass needs must go through
 * `save` (the engine keeps a clone; on wasm a real copy, cheap next to the products), because a
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

const GELU_C = Math.sqrt(2 / Math.PI);
const GELU_A = 0.044715;

/**
 * GELU, tanh approximation (GPT-2): 0.5 x (1 + tanh(z)), z = c (x + 0.044715 x^3), computed as
 * the identical x * sigmoid(2z) (0.5 (1 + tanh(z)) = sigmoid(2z) exactly): wasm's Tanh is a
 * scalar loop (~25 ms per 1M elements, measured) while Sigmoid is vectorised (~1 ms). Same
 * function, so checkpoints keep their meaning; values differ from the tanh form by float rounding
 * only (~1e-7). x*x*x rather than pow, which is slow on wasm.
 */
export function gelu(x: tf.Tensor2D): tf.Tensor2D {
  return tf.mul(x, geluGate(x)); // [N, m]
}

function geluGate(x: tf.Tensor): tf.Tensor {
  return tf.sigmoid(tf.mul(tf.add(x, tf.mul(tf.mul(tf.mul(x, x), x), GELU_A)), 2 * GELU_C));
}

/** The MLP's value without the custom-gradient wrapper (inference). */
export function mlpValue(h: tf.Tensor2D, wfc: tf.Tensor2D, wproj: tf.Tensor2D): tf.Tensor2D {
  return tf.matMul(gelu(tf.matMul(h, wfc)), wproj); // [N, d]
}

/**
 * The MLP of a block, y = gelu(h @ wfc) @ wproj, as one custom-gradient op that keeps only its
 * inputs and the pre-activation u = h @ wfc for the backward pass (gelu(u) and its derivative are recomputed:
 * elementwise, cheap next to the products) instead of autodiff's half-dozen [N, m] intermediates.
 * gelu'(u) = s + u s (1 - s) 2c (1 + 3a u^2) with s = sigmoid(2c (u + a u^3)).
 */
export const mlp = tf.customGrad((...args) => {
  const [h, wfc, wproj, save] = args as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D, Grad];
  const u = tf.matMul(h, wfc) as tf.Tensor2D; // [N, m]
  save([h, wfc, wproj, u]);
  return {
    value: tf.matMul(gelu(u), wproj), // [N, d]
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
      tf.tidy(() => {
        const [hs, wfcs, wprojs, us] = saved as tf.Tensor2D[];
        const s = geluGate(us); // [N, m]
        const g = tf.mul(us, s) as tf.Tensor2D; // gelu(u)
        // (dy^T g)^T rather than g^T dy: transposes [N, d] and [d, m] instead of the 4x larger g [N, m].
        const dwproj = tf.transpose(tf.matMul(tf.transpose(dy as tf.Tensor2D), g)); // [m, d]
        const dg = tf.matMul(dy as tf.Tensor2D, tf.transpose(wprojs)); // [N, m]
        const u2 = tf.mul(us, us);
        const slope = tf.mul(tf.mul(tf.mul(us, tf.mul(s, tf.sub(1, s))), tf.add(tf.mul(u2, 3 * GELU_A), 1)), 2 * GELU_C);
        const du = tf.mul(dg, tf.add(s, slope)) as tf.Tensor2D; // [N, m]
        return [tf.matMul(du, tf.transpose(wfcs)), tf.matMul(tf.transpose(hs), du), dwproj];
      }),
  };
}) as (h: tf.Tensor2D, wfc: tf.Tensor2D, wproj: tf.Tensor2D) => tf.Tensor2D;

/** Rows [B*T, H*hd] to heads [B*H, T, hd] (a [0, 2, 1, 3] transpose, a permutation wasm does fast). */
export function toHeads(x: tf.Tensor2D, B: number, T: number, H: number): tf.Tensor3D {
  const hd = x.shape[1] / H;
  return tf.reshape(tf.transpose(tf.reshape(x, [B, T, H, hd]), [0, 2, 1, 3]), [B * H, T, hd]) as tf.Tensor3D;
}

/** Heads [B*H, T, hd] back to rows [B*T, H*hd]. */
export function mergeHeads(yh: tf.Tensor3D, B: number, T: number): tf.Tensor2D {
  const [, , hd] = yh.shape;
  const H = yh.shape[0] / B;
  return tf.reshape(tf.transpose(tf.reshape(yh, [B, H, T, hd]), [0, 2, 1, 3]), [B * T, H * hd]) as tf.Tensor2D;
}

/**
 * Softmax attention of queries already scaled by 1/sqrt(hd): att = softmax(q k^T + bias),
 * y = att v. q, k, v [B*H, T, hd]; bias [1 or B, 1, T, T] (0 or MASKED), broadcast by the add.
 */
export function attendHeads(q: tf.Tensor3D, k: tf.Tensor3D, v: tf.Tensor3D, bias: tf.Tensor4D, B: number): { att: tf.Tensor3D; y: tf.Tensor3D } {
  const [BH, T] = q.shape;
  const scores = tf.reshape(tf.matMul(q, k, false, true), [B, BH / B, T, T]); // [B, H, T, T]
  const att = tf.reshape(tf.softmax(tf.add(scores, bias), -1), [BH, T, T]) as tf.Tensor3D; // [B*H, T, T]
  return { att, y: tf.matMul(att, v) }; // y [B*H, T, hd]
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

/**
 * Multi-head causal self-attention of normed rows h [B*T, d] with projections wq, wk, wv [d, d]
 * -> heads' output [B*T, d] (before wo), as one custom-gradient op (the training path).
 *
 * Every per-(batch, head) product is a `channelProduct` (depthwise convolution) over C = B*H
 * channels, in "time-major" layouts: rows [B, T, H, hd] are [T, C, hd] after a [1, 0, 2, 3]
 * transpose (a permutation wasm does fast), probabilities are kept as att [T(query), C, T(key)]
 * so the softmax runs over the last axis. It keeps h, the weights, q (scaled by 1/sqrt(hd)), k,
 * v (rows) and att for the backward pass, instead of autodiff's copies of scores, bias sums and
 * softmax internals, and the three weight gradients share one transpose of h. (Not one fused
 * [d, 3d] product: splitting its output on wasm cost more than it saved, measured.)
 * Backward: dAtt = dY v^T, dS = att (dAtt - rowsum(dAtt att)), dq = dS k / sqrt(hd),
 * dk = dS^T q_scaled, dv = att^T dY. `bias` [1, 1, T, T] (causal; 0 or MASKED) is a constant.
 */
export function selfAttentionChannels(
  h: tf.Tensor2D,
  wq: tf.Tensor2D,
  wk: tf.Tensor2D,
  wv: tf.Tensor2D,
  bias: tf.Tensor4D,
  B: number,
  T: number,
  H: number,
): tf.Tensor2D {
  if (bias.shape[0] !== 1) throw new Error('selfAttentionChannels: bias must be [1, 1, T, T] (shared by every row)');
  if (B * T === 0) return tf.matMul(h, wv); // no rows: [0, d] (wasm's Transpose fails on empty tensors)
  const hd = wq.shape[1] / H;
  const C = B * H;
  const scale = 1 / Math.sqrt(hd);
  const r4 = [B, T, H, hd];
  const timeMajor = (x: tf.Tensor) => permute(x, r4, [1, 0, 2, 3], [T, C, hd]) as tf.Tensor3D; // [T, C, hd]
  const featMajor = (x: tf.Tensor) => permute(x, r4, [1, 3, 0, 2], [T, hd, C]) as tf.Tensor3D; // [T, hd, C]
  const keyMajor = (x: tf.Tensor) => permute(x, r4, [3, 0, 2, 1], [hd, C, T]) as tf.Tensor3D; // [hd, C, T]
  const toRows = (y: tf.Tensor3D) => permute(y, [T, B, H, hd], [1, 0, 2, 3], [B * T, H * hd]) as tf.Tensor2D; // [T, C, hd] -> [B*T, d]
  const att3 = [T, C, T];
  const op = tf.customGrad((...args) => {
    const [x, q0, k0, v0, save] = args as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D, tf.Tensor2D, Grad];
    const qs = tf.mul(tf.matMul(x, q0), scale) as tf.Tensor2D; // [B*T, d]
    const k = tf.matMul(x, k0); // [B*T, d]
    const v = tf.matMul(x, v0); // [B*T, d]
    const scores = channelProduct(featMajor(qs), keyMajor(k)); // [T, C, T]: scores[t, c, s]
    const att = tf.softmax(tf.add(scores, tf.reshape(bias, [T, 1, T])), -1) as tf.Tensor3D; // [T, C, T]
    const y = channelProduct(permute(att, att3, [0, 2, 1]) as tf.Tensor3D, timeMajor(v)); // [T, C, hd]
    save([x, q0, k0, v0, qs, k, v, att]);
    return {
      value: toRows(y), // [B*T, d]
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
        tf.tidy(() => {
          const [xs, wqs, wks, wvs, qS, kS, vS] = saved as tf.Tensor2D[];
          const a = saved[7] as tf.Tensor3D; // [T, C, T]
          const dAtt = channelProduct(featMajor(dy), keyMajor(vS)); // [T, C, T]
          const dS = tf.mul(a, tf.sub(dAtt, tf.sum(tf.mul(dAtt, a), -1, true))) as tf.Tensor3D; // [T, C, T]
          const dq = tf.mul(toRows(channelProduct(permute(dS, att3, [0, 2, 1]) as tf.Tensor3D, timeMajor(kS))), scale) as tf.Tensor2D;
          const dk = toRows(channelProduct(permute(dS, att3, [2, 0, 1]) as tf.Tensor3D, timeMajor(qS)));
          const dv = toRows(channelProduct(permute(a, att3, [2, 0, 1]) as tf.Tensor3D, timeMajor(dy)));
          const xT = tf.transpose(xs); // [d, B*T]
          const dx = tf.addN([tf.matMul(dq, tf.transpose(wqs)), tf.matMul(dk, tf.transpose(wks)), tf.matMul(dv, tf.transpose(wvs))]);
          return [dx, tf.matMul(xT, dq), tf.matMul(xT, dk), tf.matMul(xT, dv)];
        }),
    };
  }) as (x: tf.Tensor2D, wq: tf.Tensor2D, wk: tf.Tensor2D, wv: tf.Tensor2D) => tf.Tensor2D;
  return op(h, wq, wk, wv);
}

/**
 * The same attention as `selfAttentionChannels` in plain kernels with tfjs's own gradients: q, k,
 * v products, heads [B*H, T, hd], scores by a batched matMul with a transpose flag, softmax,
 * att v, heads back to rows. The native backend's batched matMul is fast, so this is its training
 * path; autodiff keeps more intermediates (scores, softmax output, the heads) than the custom op.
 */
export function selfAttentionBatched(
  h: tf.Tensor2D,
  wq: tf.Tensor2D,
  wk: tf.Tensor2D,
  wv: tf.Tensor2D,
  bias: tf.Tensor4D,
  B: number,
  T: number,
  H: number,
): tf.Tensor2D {
  const hd = wq.shape[1] / H;
  const heads = (w: tf.Tensor2D) => toHeads(tf.matMul(h, w), B, T, H); // [B*H, T, hd]
  const q = tf.mul(heads(wq), 1 / Math.sqrt(hd)) as tf.Tensor3D; // [B*H, T, hd]
  return mergeHeads(attendHeads(q, heads(wk), heads(wv), bias, B).y, B, T); // [B*T, d]
}

/** y = x @ w with matMul's own gradient (transpose flags): the native backend runs those fast. */
export function linearFlags(x: tf.Tensor2D, w: tf.Tensor2D): tf.Tensor2D {
  return tf.matMul(x, w); // [N, dout]
}

type SelfAttentionFn = typeof selfAttentionChannels;
type LinearFn = (x: tf.Tensor2D, w: tf.Tensor2D) => tf.Tensor2D;

/** The training ops whose fastest form depends on the backend's kernels. */
export interface TrainingKernels {
  selfAttention: SelfAttentionFn;
  linear: LinearFn;
}

/** tfjs backend names (`tf.getBackend()`) the lab runs on: wasm, cpu, tensorflow (tfjs-node and tfjs-node-gpu). */
export const KERNEL_BACKENDS = ['wasm', 'cpu', 'tensorflow'] as const;
export type KernelBackend = (typeof KERNEL_BACKENDS)[number];

const WASM_KERNELS: TrainingKernels = { selfAttention: selfAttentionChannels, linear: linearTransposed };

/**
 * Per backend, measured (header): wasm keeps its tricks; cpu (tfjs's plain JS reference backend,
 * never chosen for speed) runs the same code as wasm; tensorflow takes the plain kernels.
 */
export const TRAINING_KERNELS = {
  wasm: WASM_KERNELS,
  cpu: WASM_KERNELS,
  tensorflow: { selfAttention: selfAttentionBatched, linear: linearFlags },
} satisfies Record<KernelBackend, TrainingKernels>;

/** The training kernels for a tfjs backend (default: the one in use); an unknown name is an error listing the known ones. */
export function trainingKernels(backend: string = tf.getBackend()): TrainingKernels {
  if (!Object.hasOwn(TRAINING_KERNELS, backend)) {
    throw new Error(`layers.ts: no training kernels for tfjs backend "${backend}"; known: ${KERNEL_BACKENDS.join(', ')}`);
  }
  return TRAINING_KERNELS[backend as KernelBackend];
}

/**
 * Multi-head causal self-attention of the training path: normed rows h [B*T, d] -> heads' output
 * [B*T, d] (before wo), in the backend's form (`TRAINING_KERNELS`). bias [1, 1, T, T].
 */
export function selfAttention(
  h: tf.Tensor2D,
  wq: tf.Tensor2D,
  wk: tf.Tensor2D,
  wv: tf.Tensor2D,
  bias: tf.Tensor4D,
  B: number,
  T: number,
  H: number,
): tf.Tensor2D {
  return trainingKernels().selfAttention(h, wq, wk, wv, bias, B, T, H); // [B*T, d]
}

/** y = x @ w of the training path, in the backend's form (`TRAINING_KERNELS`). */
export function linear(x: tf.Tensor2D, w: tf.Tensor2D): tf.Tensor2D {
  return trainingKernels().linear(x, w); // [N, dout]
}
