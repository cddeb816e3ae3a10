/**
 * The scorer's head ops of the Hugging Face model family (split from ./layers.ts, which
 * re-exports them), and the lookup of head columns they share with a tied embedding
 * (`gatherColumns`): log p(id | h) and the entropy of the next-token distribution for
 * final-normed rows h [n, d] and the head w [d, V], each one custom-gradient op that keeps only h (and a [n]
 * log-sum-exp) for its backward and recomputes the [n, V] logits there, instead of the tape
 * holding the logits, their exponentials and the log-softmax for the whole backward. Same wasm
 * rules as ./layers.ts (plain 2-D products, explicit transposes, every backward in its own tf.tidy).
 * Not here: the head product itself (model.ts `logitsOf`), chunking over rows (logprobs.ts).
 * Tests: test/core/models/hf/recompute.test.ts (against autodiff of the plain log-softmax).
 */
import * as tf from '@tensorflow/tfjs';

type Grad = tf.GradSaveFunc;

/**
 * Embedding rows for ids from a table stored as columns, w [d, V] (the output head's layout, so
 * a tied model keeps one copy): gather the columns, then transpose the small [d, N] result.
 * Not differentiable on wasm (no Gather gradient); a trained table uses `oneHotColumns`.
 */
export function gatherColumns(ids: tf.Tensor1D, w: tf.Tensor2D): tf.Tensor2D {
  const cols = tf.gather(w, ids, 1); // [d, N]
  // One column (a decoding step of one row) is already row-major [1, d]; wasm's Transpose is fragile on size-1 axes.
  return (ids.shape[0] === 1 ? tf.reshape(cols, [1, w.shape[0]]) : tf.transpose(cols)) as tf.Tensor2D; // [N, d]
}

/** dz @ w^T for the head w [d, V], dz [n, V] -> [n, d], transposing whichever operand is smaller (wasm: no transpose flags). */
function headBackward(dz: tf.Tensor2D, w: tf.Tensor2D): tf.Tensor2D {
  const [n] = dz.shape;
  const [d] = w.shape;
  if (n < d) return tf.transpose(tf.matMul(w, tf.transpose(dz))) as tf.Tensor2D; // ([d, V] @ [V, n])^T
  return tf.matMul(dz, tf.transpose(w)); // [n, d]
}

/**
 * A head op on final-normed rows h [n, d] with the head w [d, V] that keeps only h (and a [n]
 * log-sum-exp) for its backward: the [n, V] logits are recomputed there (one more head product)
 * instead of the tape holding the logits, their exponentials and the log-softmax, one block of
 * each per chunk of rows for the whole backward. `dz` gives d(value)/d(logits) scaled by dy
 * from the recomputed logits z, probabilities p and lse. A trainable head is an input of the op
 * (its gradient h^T dz is returned); a frozen one is read from the closure (it outlives the step).
 */
function headOp(
  h: tf.Tensor2D,
  w: tf.Tensor2D,
  extra: tf.Tensor[],
  value: (h: tf.Tensor2D, z: tf.Tensor2D, lse: tf.Tensor1D) => tf.Tensor1D,
  dz: (dy: tf.Tensor1D, z: tf.Tensor2D, p: tf.Tensor2D, lse: tf.Tensor1D, extra: tf.Tensor[]) => tf.Tensor2D,
): tf.Tensor1D {
  const trainW = (w as tf.Variable).trainable === true;
  const op = tf.customGrad((...args) => {
    const hi = args[0] as tf.Tensor2D;
    const wi = (trainW ? args[1] : w) as tf.Tensor2D;
    const save = args[args.length - 1] as Grad;
    const z = tf.matMul(hi, wi) as tf.Tensor2D; // [n, V]
    const lse = tf.logSumExp(z, -1) as tf.Tensor1D; // [n] nats
    save([hi, lse, ...extra]);
    return {
      value: value(hi, z, lse), // [n]
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
        tf.tidy(() => {
          const [hs, ls, ...ex] = saved as [tf.Tensor2D, tf.Tensor1D, ...tf.Tensor[]];
          const zr = tf.matMul(hs, wi) as tf.Tensor2D; // [n, V] recomputed
          const p = tf.exp(tf.sub(zr, tf.expandDims(ls, -1))) as tf.Tensor2D; // [n, V]
          const g = dz(dy as tf.Tensor1D, zr, p, ls, ex); // [n, V]
          const dh = headBackward(g, wi); // [n, d]
          return trainW ? [dh, tf.matMul(tf.transpose(hs), g)] : [dh]; // dw [d, V]
        }),
    };
  }) as (...inputs: tf.Tensor[]) => tf.Tensor1D;
  return trainW ? op(h, w) : op(h);
}

/**
 * log p(ids | h) = z[id] - logsumexp(z) for rows h [n, d], z = h w over every head row (padded
 * vocabulary included, as transformers), ids [n] int32 -> [n] nats. The target logit is a row
 * dot product with the gathered head column (no [n, V] one-hot in the forward).
 * Backward: dz = dy (onehot(id) - p).
 */
export function headLogprob(h: tf.Tensor2D, w: tf.Tensor2D, ids: tf.Tensor1D): tf.Tensor1D {
  const V = w.shape[1];
  return headOp(
    h,
    w,
    [ids],
    (hi, _z, lse) => tf.sub(tf.sum(tf.mul(hi, gatherColumns(ids, w)), -1), lse) as tf.Tensor1D, // [n] nats
    (dy, _z, p, _lse, [idsS]) => tf.mul(tf.sub(tf.oneHot(idsS as tf.Tensor1D, V).toFloat(), p), tf.expandDims(dy, -1)) as tf.Tensor2D,
  );
}

/**
 * Entropy of the next-token distribution of rows h [n, d]: H = lse - sum(p z) -> [n] nats.
 * Backward: dH/dz = -p (z - sum(p z)).
 */
export function headEntropy(h: tf.Tensor2D, w: tf.Tensor2D): tf.Tensor1D {
  return headOp(
    h,
    w,
    [],
    (_h, z, lse) => tf.sub(lse, tf.sum(tf.mul(tf.exp(tf.sub(z, tf.expandDims(lse, -1))), z), -1)) as tf.Tensor1D, // [n] nats
    (dy, z, p) => {
      const mean = tf.sum(tf.mul(p, z), -1, true); // [n, 1]
      return tf.mul(tf.neg(tf.mul(p, tf.sub(z, mean))), tf.expandDims(dy, -1)) as tf.Tensor2D; // [n, V]
    },
  );
}
