/**
 * Tensor helpers of the Hugging Face model family (model.ts) that the lab's own layers.ts does not
 * have: rotate-half RoPE tables, a linear with a frozen weight, an embedding lookup from a
 * [d, V] (head-layout) table, causal attention over already-projected rows with a per-row key
 * bias (left padding) as one custom-gradient op, and `withOwnTape` for gradients taken inside
 * a backward (per-layer recomputation). The scorer's head ops (`headLogprob`, `headEntropy`)
 * and the column lookup they share with a tied embedding (`gatherColumns`) live in ./headOps.ts
 * and are re-exported here.
 *
 * Same wasm rules as ../layers.ts (docs/decisions/011-wasm-kernel-rules.md): every weight product
 * is a plain 2-D matMul without transpose flags, backward passes use explicit transposes,
 * attention products are depthwise convolutions (`channelProduct`), every backward runs in its own
 * tf.tidy and reads only saved tensors or long-lived ones (model weights, constants the model
 * owns), never intermediates of the forward scope.
 *
 * Per backend, as ../layers.ts `TRAINING_KERNELS`: the training/scoring attention (with the layout
 * of its key bias) and the frozen linear come from `HF_TRAINING_KERNELS`. wasm and cpu keep the
 * custom ops above (`attendRows`, `frozenLinear`); the native backend (tfjs name `tensorflow`:
 * tfjs-node and tfjs-node-gpu) takes plain batched matMuls and transpose-flag products
 * (`attendBlocked`, `frozenLinearFlags`), which are much faster on TensorFlow's kernels
 * (docs/decisions/015-hf-training-kernels-per-backend.md; `npm run bench -- layer-variants`).
 * `attendBlocked` runs attention in blocks of (row, KV head) units. Under a tape it keeps the
 * probabilities for its backward while they total at most `SAVED_PROBABILITIES_FLOATS` (a quick
 * preset's whole pass: a softmax and a product fewer per block; docs/NATIVE_BACKEND.md); above it
 * its backward recomputes each block's probabilities, so its memory is linear in the sequence
 * length: no [rows, heads, T, T] tensor exists at once, with or without a tape (`npm run bench --
 * tiny-long-prompt`).
 *
 * Not here: the architecture (model.ts), sampling (sampler.ts), log-probs (logprobs.ts).
 * Tests: test/core/models/hf/model.test.ts (the whole forward against a float64 reference,
 * gradients of these ops against finite differences of the same forward), recompute.test.ts
 * (the head ops against autodiff of the plain log-softmax), layers.test.ts (each backend's
 * attention and frozen linear against a float64 reference and autodiff, the registry, the
 * blocked attention in several blocks and its peak bytes).
 */
import * as tf from '@tensorflow/tfjs';
import { channelProduct, KERNEL_BACKENDS, permute, type KernelBackend } from '../layers';

export { gatherColumns, headEntropy, headLogprob } from './headOps';

type Grad = tf.GradSaveFunc;

/** Additive attention bias for masked keys (finite, so fully masked rows give no NaN). */
export const MASKED = -1e9;

/**
 * y = x @ w for a weight that is not trained (a model weight or a constant the caller keeps
 * alive): only dx = dy @ w^T is computed, with an explicit transpose (wasm's transpose-flag
 * matMul is ~10x slower than transposing first), and nothing is saved: w is read from the
 * closure, which is safe because it outlives every forward scope.
 */
export function frozenLinear(x: tf.Tensor2D, w: tf.Tensor2D): tf.Tensor2D {
  const op = tf.customGrad((...args) => {
    const [xi] = args as [tf.Tensor2D, Grad];
    return {
      value: tf.matMul(xi, w), // [N, out]
      gradFunc: (dy: tf.Tensor) => tf.tidy(() => [tf.matMul(dy as tf.Tensor2D, tf.transpose(w))]), // [N, in]
    };
  }) as (x: tf.Tensor2D) => tf.Tensor2D;
  return op(x);
}

/**
 * The same lookup as a product with one-hot rows, differentiable with respect to the [d, V] table:
 * y = onehot @ w^T computed as (w @ onehot^T)^T; dw = dy^T @ onehot. Cost N x V x d: only for
 * small vocabularies (a trained embedding of the lab's own models).
 */
export const oneHotColumns = tf.customGrad((...args) => {
  const [onehot, w, save] = args as [tf.Tensor2D, tf.Tensor2D, Grad];
  save([onehot]);
  return {
    value: tf.transpose(tf.matMul(w, tf.transpose(onehot))), // [N, d]
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
      tf.tidy(() => {
        const [oh] = saved as [tf.Tensor2D];
        return [tf.zerosLike(oh), tf.matMul(tf.transpose(dy as tf.Tensor2D), oh)]; // dw [d, V]
      }),
  };
}) as (onehot: tf.Tensor2D, w: tf.Tensor2D) => tf.Tensor2D;

/**
 * The rotate-half matrix R [hd, hd]: (x @ R) = cat(-x2, x1) for x = cat(x1, x2) (transformers'
 * `rotate_half`). A plain 2-D product instead of two slices and a concat (wasm's Slice copies its
 * whole input); R^T = -R, which the backward of `rotateHalf` uses.
 */
export function rotateHalfMatrix(hd: number): Float32Array {
  const half = hd / 2;
  const r = new Float32Array(hd * hd);
  for (let j = 0; j < half; j++) {
    r[(j + half) * hd + j] = -1; // out[j] = -x[j + half]
    r[j * hd + j + half] = 1; // out[j + half] = x[j]
  }
  return r;
}

/** x [M, hd] @ R with the backward dy @ R^T = -(dy @ R); R is a constant the model keeps. */
export function rotateHalf(x: tf.Tensor2D, r: tf.Tensor2D): tf.Tensor2D {
  const op = tf.customGrad((...args) => {
    const [xi] = args as [tf.Tensor2D, Grad];
    return {
      value: tf.matMul(xi, r), // [M, hd]
      gradFunc: (dy: tf.Tensor) => tf.tidy(() => [tf.neg(tf.matMul(dy as tf.Tensor2D, r))]),
    };
  }) as (x: tf.Tensor2D) => tf.Tensor2D;
  return op(x);
}

/**
 * cos and sin tables [N, hd] for per-row positions: emb = cat(f, f) with f = position x invFreq,
 * both multiplied by `attentionScale` (yarn's attention factor; 1 otherwise), as transformers'
 * rotary embedding does. Computed in float64, stored float32.
 */
export function ropeTables(positions: ArrayLike<number>, invFreq: Float64Array, attentionScale: number): { cos: Float32Array; sin: Float32Array } {
  const half = invFreq.length;
  const hd = 2 * half;
  const n = positions.length;
  const cos = new Float32Array(n * hd);
  const sin = new Float32Array(n * hd);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < half; j++) {
      // transformers computes the angle in float32 (inv_freq.float() @ position_ids.float()).
      const a = Math.fround(Math.fround(invFreq[j]) * positions[i]);
      const c = Math.cos(a) * attentionScale;
      const s = Math.sin(a) * attentionScale;
      cos[i * hd + j] = cos[i * hd + j + half] = c;
      sin[i * hd + j] = sin[i * hd + j + half] = s;
    }
  }
  return { cos, sin };
}

/**
 * RoPE on rows x [N, H*hd]: x cos + rotate_half(x) sin per head; cos, sin [N, 1, hd] (a caller
 * may fold a constant such as the attention scale into them). `train` false uses a plain matMul
 * for the rotation (no custom-gradient scope: decoding runs this 2 x layers times per token).
 */
export function applyRope(x: tf.Tensor2D, cos: tf.Tensor3D, sin: tf.Tensor3D, r: tf.Tensor2D, H: number, train = true): tf.Tensor2D {
  const [N, width] = x.shape;
  const hd = width / H;
  const x3 = tf.reshape(x, [N, H, hd]); // [N, H, hd]
  const flat = tf.reshape(x, [N * H, hd]) as tf.Tensor2D;
  const rot = tf.reshape(train ? rotateHalf(flat, r) : tf.matMul(flat, r), [N, H, hd]); // [N, H, hd]
  return tf.reshape(tf.add(tf.mul(x3, cos), tf.mul(rot, sin)), [N, width]) as tf.Tensor2D; // [N, H*hd]
}

/** Key/value rows [N, nKV*hd] repeated for grouped-query attention: [N, nH*hd], query head h reads KV head floor(h / g). */
export function repeatKv(x: tf.Tensor2D, nKv: number, g: number): tf.Tensor2D {
  if (g === 1) return x;
  const [N, width] = x.shape;
  const hd = width / nKv;
  return tf.reshape(tf.mul(tf.reshape(x, [N, nKv, 1, hd]), tf.ones([1, 1, g, 1])), [N, nKv * g * hd]) as tf.Tensor2D; // [N, nH*hd]
}

/**
 * The additive key bias of a batch in the layout `attendRows` wants, [T(query), B, 1, T(key)]:
 * causal (key column > query column masked) and keys whose `keyMask` entry is 0 masked (left
 * padding). keyMask [B*T], 1 for a real token.
 */
export function attentionBias(B: number, T: number, keyMask: ArrayLike<number>): Float32Array {
  const bias = new Float32Array(T * B * T);
  for (let t = 0; t < T; t++) {
    for (let b = 0; b < B; b++) {
      const o = (t * B + b) * T;
      for (let s = 0; s < T; s++) if (s > t || !keyMask[b * T + s]) bias[o + s] = MASKED;
    }
  }
  return bias;
}

/**
 * Softmax attention over projected rows, as one custom-gradient op: qs (queries already scaled by
 * head_dim^-0.5), k, v [B*T, H*hd] (keys and values already repeated to H heads) -> [B*T, H*hd].
 * bias [T, B, 1, T] (`attentionBias`), a constant. The per-(batch, head) products are
 * `channelProduct`s over C = B*H channels in time-major layouts (../layers.ts `permute`,
 * `channelProduct`; docs/decisions/011-wasm-kernel-rules.md). It saves qs, k, v and
 * the probabilities att [T, C, T]. Backward: dAtt = dY v^T, dS = att (dAtt - rowsum(dAtt att)),
 * dqs = dS k, dk = dS^T qs, dv = att^T dY.
 */
export function attendRows(qs: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D, bias: tf.Tensor4D, B: number, T: number, H: number): tf.Tensor2D {
  const hd = qs.shape[1] / H;
  const C = B * H;
  const r4 = [B, T, H, hd];
  const timeMajor = (x: tf.Tensor) => permute(x, r4, [1, 0, 2, 3], [T, C, hd]) as tf.Tensor3D; // [T, C, hd]
  const featMajor = (x: tf.Tensor) => permute(x, r4, [1, 3, 0, 2], [T, hd, C]) as tf.Tensor3D; // [T, hd, C]
  const keyMajor = (x: tf.Tensor) => permute(x, r4, [3, 0, 2, 1], [hd, C, T]) as tf.Tensor3D; // [hd, C, T]
  const toRows = (y: tf.Tensor3D) => permute(y, [T, B, H, hd], [1, 0, 2, 3], [B * T, H * hd]) as tf.Tensor2D; // [T, C, hd] -> [B*T, H*hd]
  const att3: [number, number, number] = [T, C, T];
  const op = tf.customGrad((...args) => {
    const [q0, k0, v0, save] = args as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D, Grad];
    const scores = tf.reshape(channelProduct(featMajor(q0), keyMajor(k0)), [T, B, H, T]); // [T, B, H, T]: scores[t, b, h, s]
    const att = tf.reshape(tf.softmax(tf.add(scores, bias), -1), att3) as tf.Tensor3D; // [T, C, T]
    const y = channelProduct(permute(att, att3, [0, 2, 1]) as tf.Tensor3D, timeMajor(v0)); // [T, C, hd]
    save([q0, k0, v0, att]);
    return {
      value: toRows(y), // [B*T, H*hd]
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
        tf.tidy(() => {
          const [qS, kS, vS] = saved as tf.Tensor2D[];
          const a = saved[3] as tf.Tensor3D; // [T, C, T]
          const dAtt = channelProduct(featMajor(dy), keyMajor(vS)); // [T, C, T]
          const dS = tf.mul(a, tf.sub(dAtt, tf.sum(tf.mul(dAtt, a), -1, true))) as tf.Tensor3D; // [T, C, T]
          const dq = toRows(channelProduct(permute(dS, att3, [0, 2, 1]) as tf.Tensor3D, timeMajor(kS))); // [B*T, H*hd]
          const dk = toRows(channelProduct(permute(dS, att3, [2, 0, 1]) as tf.Tensor3D, timeMajor(qS)));
          const dv = toRows(channelProduct(permute(a, att3, [2, 0, 1]) as tf.Tensor3D, timeMajor(dy)));
          return [dq, dk, dv];
        }),
    };
  }) as (q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D) => tf.Tensor2D;
  return op(qs, k, v);
}

/**
 * `frozenLinear` for the native backend: dx = dy @ w^T by a transpose-flag product (TensorFlow
 * runs those at full speed; no explicit transpose of the weight per backward). Still a custom op
 * that saves nothing (matMul's own gradient would keep x alive on the tape, e.g. a non-adapted
 * down_proj's [N, I] input under LoRA, which memory.ts does not count).
 */
export function frozenLinearFlags(x: tf.Tensor2D, w: tf.Tensor2D): tf.Tensor2D {
  const op = tf.customGrad((...args) => {
    const [xi] = args as [tf.Tensor2D, Grad];
    return {
      value: tf.matMul(xi, w), // [N, out]
      gradFunc: (dy: tf.Tensor) => tf.tidy(() => [tf.matMul(dy as tf.Tensor2D, w, false, true)]), // [N, in]
    };
  }) as (x: tf.Tensor2D) => tf.Tensor2D;
  return op(x);
}

/**
 * The key bias of `attendBlocked`, [B, 1, 1, T(key)]: MASKED where the row's `keyMask` entry is 0
 * (left padding), else 0. Only the padding: the causal part is the same for every row and is
 * added per block inside the op, so nothing of size rows x T x T is ever built.
 */
export function keyPadBias(B: number, T: number, keyMask: ArrayLike<number>): Float32Array {
  const bias = new Float32Array(B * T);
  for (let i = 0; i < B * T; i++) if (!keyMask[i]) bias[i] = MASKED;
  return bias;
}

/** The native form's bias tensor: `keyPadBias` [B, 1, 1, T], or null when no key is padding (the op then adds the causal part alone). */
export function keyPadBiasTensor(B: number, T: number, keyMask: ArrayLike<number>): tf.Tensor4D | null {
  for (let i = 0; i < B * T; i++) if (!keyMask[i]) return tf.tensor4d(keyPadBias(B, T, keyMask), [B, 1, 1, T]);
  return null;
}

/** The causal bias of one (row, KV head) unit of `attendBlocked`, [g*T(query), T(key)]: query row i*T + t masks keys s > t. */
export function causalBias(T: number, g: number): Float32Array {
  const bias = new Float32Array(g * T * T);
  for (let i = 0; i < g; i++) {
    for (let t = 0; t < T; t++) bias.fill(MASKED, (i * T + t) * T + t + 1, (i * T + t + 1) * T);
  }
  return bias;
}

/**
 * Largest block of attention scores `attendBlocked` computes at once, floats (4 MB): a pass holds
 * a few such blocks at a time (scores and probabilities; in the backward also dP and dS), so
 * attention's working set stays bounded whatever the rows and the sequence length.
 */
export const ATTENTION_BLOCK_FLOATS = 1024 * 1024;

/**
 * Most attention probabilities (rows x heads x T x T floats, 128 MB) one `attendBlocked` call
 * keeps for its backward under a tape; above it the backward recomputes them block by block.
 * Keeping them spares the backward a product, a bias and a softmax per block; the bound keeps
 * long prompts linear in T. It holds a quick preset's whole pass (search-quick: 48 rows of ~300
 * tokens, 4 heads: 17M floats per layer). Within a pass that memory.ts's plan lets run whole,
 * they are inside its estimate (2 x heads x T floats per token per layer).
 */
export const SAVED_PROBABILITIES_FLOATS = 32 * ATTENTION_BLOCK_FLOATS;

/** How `attendBlocked` runs a batch: (row, KV head) units per block, and whether a taped call keeps the probabilities. */
export function blockedAttentionPlan(
  B: number,
  T: number,
  H: number,
  nKv: number,
  blockFloats = ATTENTION_BLOCK_FLOATS,
  savedFloats = SAVED_PROBABILITIES_FLOATS,
): { unitsPerBlock: number; saveProbabilities: boolean } {
  const g = H / nKv;
  return { unitsPerBlock: Math.max(1, Math.floor(blockFloats / (g * T * T))), saveProbabilities: B * H * T * T <= savedFloats };
}

/**
 * Causal attention in plain batched matMuls with a hand-written backward, computed in blocks (the
 * native backend's training/scoring form): qs (scaled) [B*T, nH*hd], k, v [B*T, nKV*hd] NOT
 * repeated, bias [B, 1, 1, T] (`keyPadBias`; null: no padding) -> [B*T, nH*hd]. Grouped-query
 * attention without repeating keys: the g = nH / nKV query heads of a KV head are the g*T rows of
 * one product per (batch row, KV head) "unit", so unit u = b*nKV + j holds scores [g*T, T] (query
 * head h = j*g + i). Units are independent, so they run `blockFloats / (g*T*T)` at a time (at
 * least one), each block in its own tf.tidy: the [B, nH, T, T] scores are never materialised
 * whole (with many rows of long prompts they were gigabytes).
 * Under a tape the op saves q, k, v and the biases (linear in T), and the blocks'
 * probabilities when they total at most `savedFloats` (`blockedAttentionPlan`); otherwise the
 * backward recomputes each block's probabilities, as flash attention does. Backward per block:
 * dP = dY v^T, dS = P (dP - rowsum(dP P)), dq = dS k, dk = dS^T q, dv = P^T dY. (Flash
 * attention's rowsum(dY Y) is the same value from a smaller product, but rounds differently: the
 * lab keeps the form its recorded runs were trained with, so they repeat bit for bit.)
 */
export function attendBlocked(
  qs: tf.Tensor2D,
  k: tf.Tensor2D,
  v: tf.Tensor2D,
  bias: tf.Tensor4D | null,
  B: number,
  T: number,
  H: number,
  nKv: number,
  blockFloats = ATTENTION_BLOCK_FLOATS,
  savedFloats = SAVED_PROBABILITIES_FLOATS,
): tf.Tensor2D {
  const hd = qs.shape[1] / H;
  const g = H / nKv;
  const U = B * nKv; // units
  const plan = blockedAttentionPlan(B, T, H, nKv, blockFloats, savedFloats);
  const per = plan.unitsPerBlock;
  // Decided here: inside the op's forward no tape records, so isTapeOn() is false there.
  const keep = plan.saveProbabilities && tf.engine().isTapeOn();
  const toUnits = (x: tf.Tensor) => permute(x, [B, T, nKv, g, hd], [0, 2, 3, 1, 4], [U, g * T, hd]) as tf.Tensor3D; // [B*T, nH*hd] -> [U, g*T, hd]
  const fromUnits = (x: tf.Tensor) => permute(x, [B, nKv, g, T, hd], [0, 3, 1, 2, 4], [B * T, H * hd]) as tf.Tensor2D; // -> [B*T, nH*hd]
  const kvUnits = (x: tf.Tensor) => permute(x, [B, T, nKv, hd], [0, 2, 1, 3], [U, T, hd]) as tf.Tensor3D; // [B*T, nKV*hd] -> [U, T, hd]
  const kvRows = (x: tf.Tensor) => permute(x, [B, nKv, T, hd], [0, 2, 1, 3], [B * T, nKv * hd]) as tf.Tensor2D; // -> [B*T, nKV*hd]
  const unitSlice = (x: tf.Tensor3D, u0: number, n: number) => (n === U ? x : (tf.slice(x, [u0, 0, 0], [n, x.shape[1], x.shape[2]]) as tf.Tensor3D));
  const cat = <X extends tf.Tensor>(xs: X[]) => (xs.length === 1 ? xs[0] : (tf.concat(xs, 0) as X));
  // Per block of units: softmax(q k^T + min(causal, pad)) [n, g*T, T]; the causal part [1, g*T, T] is shared by every unit.
  // min, not a sum: a key masked twice gets MASKED once, so a query whose keys are all masked (a
  // pad row) is uniform over every key, exactly as with the one-tensor bias of the other kernels.
  // Own scopes (here and for dS below): a block's intermediates are freed before the next product, so about two blocks are live at a time.
  const probs = (q: tf.Tensor3D, kk: tf.Tensor3D, pad: tf.Tensor3D | null, causal: tf.Tensor3D) =>
    tf.tidy(() => tf.softmax(tf.add(tf.matMul(q, kk, false, true), pad ? tf.minimum(causal, pad) : causal), -1) as tf.Tensor3D);
  const blocks = <R>(fn: (u0: number, n: number) => R): R[] => {
    const out: R[] = [];
    for (let u0 = 0; u0 < U; u0 += per) out.push(fn(u0, Math.min(per, U - u0)));
    return out;
  };
  const op = tf.customGrad((...args) => {
    const [q0, k0, v0, save] = args as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D, Grad];
    const [q, kk, vv] = [toUnits(q0), kvUnits(k0), kvUnits(v0)]; // [U, g*T, hd], [U, T, hd] x 2
    const pad = bias ? (tf.reshape(tf.tile(bias, [1, nKv, 1, 1]), [U, 1, T]) as tf.Tensor3D) : null; // [U, 1, T]
    const causal = tf.tensor3d(causalBias(T, g), [1, g * T, T]);
    const padAt = (u0: number, n: number) => (pad ? unitSlice(pad, u0, n) : null);
    const parts = blocks((u0, n) =>
      tf.tidy(() => {
        const p = probs(unitSlice(q, u0, n), unitSlice(kk, u0, n), padAt(u0, n), causal); // [n, g*T, T]
        const y = tf.matMul(p, unitSlice(vv, u0, n)) as tf.Tensor3D; // [n, g*T, hd]
        return keep ? [y, p] : [y];
      }),
    );
    const y = cat(parts.map((b) => b[0])); // [U, g*T, hd]
    const saved = keep ? parts.map((b) => b[1]) : [causal, ...(pad ? [pad] : [])];
    save([q, kk, vv, ...saved]);
    return {
      value: fromUnits(y), // [B*T, nH*hd]
      gradFunc: (dy: tf.Tensor, s: tf.Tensor[]) =>
        tf.tidy(() => {
          const [qS, kS, vS] = s as tf.Tensor3D[];
          const rest = s.slice(3) as tf.Tensor3D[]; // the blocks' probabilities, or [causal, pad?]
          const dyU = toUnits(dy); // [U, g*T, hd]
          const grads = blocks((u0, n) =>
            tf.tidy(() => {
              const [qc, kc, vc, dyc] = [unitSlice(qS, u0, n), unitSlice(kS, u0, n), unitSlice(vS, u0, n), unitSlice(dyU, u0, n)];
              const p = keep ? rest[u0 / per] : probs(qc, kc, rest[1] ? unitSlice(rest[1], u0, n) : null, rest[0]); // [n, g*T, T]
              const dS = tf.tidy(() => {
                const dP = tf.matMul(dyc, vc, false, true); // [n, g*T, T]
                return tf.mul(p, tf.sub(dP, tf.sum(tf.mul(dP, p), -1, true))) as tf.Tensor3D; // [n, g*T, T]
              });
              return [tf.matMul(dS, kc), tf.matMul(dS, qc, true, false), tf.matMul(p, dyc, true, false)]; // dq [n, g*T, hd], dk, dv [n, T, hd]
            }),
          );
          const part = (i: number) => cat(grads.map((x) => x[i]));
          return [fromUnits(part(0)), kvRows(part(1)), kvRows(part(2))]; // [B*T, nH*hd], [B*T, nKV*hd] x 2
        }),
    };
  }) as (q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D) => tf.Tensor2D;
  return op(qs, k, v);
}

/**
 * `attendRows` with the registry's signature: keys and values [B*T, nKV*hd] repeated to the nH
 * query heads first (`repeatKv`), bias [T, B, 1, T] (`attentionBias`). The wasm/cpu form.
 */
export const attendChannels: HfTrainingKernels['attend'] = (qs, k, v, bias, B, T, H, nKv) => {
  if (!bias) throw new Error('attendChannels: needs its [T, B, 1, T] bias (the causal part is in it)');
  const g = H / nKv;
  return attendRows(qs, repeatKv(k, nKv, g), repeatKv(v, nKv, g), bias, B, T, H); // [B*T, nH*hd]
};

/** The HF family's training/scoring ops whose fastest form depends on the backend's kernels. */
export interface HfTrainingKernels {
  /** The key bias tensor `attend` reads, from the batch's key mask [B*T] (1 = real token); null where the form needs none (no padding, native). */
  attentionBias: (B: number, T: number, keyMask: ArrayLike<number>) => tf.Tensor4D | null;
  /** Causal attention: scaled queries [B*T, nH*hd], keys and values [B*T, nKV*hd] -> [B*T, nH*hd]. */
  attend: (qs: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D, bias: tf.Tensor4D | null, B: number, T: number, H: number, nKv: number) => tf.Tensor2D;
  /** x @ w for a weight that is not trained (only dx). */
  frozenLinear: (x: tf.Tensor2D, w: tf.Tensor2D) => tf.Tensor2D;
}

const CHANNEL_KERNELS: HfTrainingKernels = {
  attentionBias: (B, T, keyMask) => tf.tensor4d(attentionBias(B, T, keyMask), [T, B, 1, T]),
  attend: attendChannels,
  frozenLinear,
};

/**
 * Per tfjs backend (../layers.ts `KERNEL_BACKENDS`), measured (header): wasm keeps the custom
 * ops; cpu (the plain JS reference backend) runs the same code as wasm; tensorflow (tfjs-node,
 * tfjs-node-gpu) takes the batched matMuls and matMul's own gradient.
 */
export const HF_TRAINING_KERNELS = {
  wasm: CHANNEL_KERNELS,
  cpu: CHANNEL_KERNELS,
  tensorflow: {
    attentionBias: keyPadBiasTensor,
    attend: attendBlocked,
    frozenLinear: frozenLinearFlags,
  },
} satisfies Record<KernelBackend, HfTrainingKernels>;

/** The HF training kernels for a tfjs backend (default: the one in use); an unknown name is an error listing the known ones. */
export function hfTrainingKernels(backend: string = tf.getBackend()): HfTrainingKernels {
  if (!Object.hasOwn(HF_TRAINING_KERNELS, backend)) {
    throw new Error(`hf/layers.ts: no training kernels for tfjs backend "${backend}"; known: ${KERNEL_BACKENDS.join(', ')}`);
  }
  return HF_TRAINING_KERNELS[backend as KernelBackend];
}

/**
 * Runs `fn` (which calls tf.grads) under a tape of its own, from inside a custom gradient's
 * backward. tfjs's engine keeps one active tape: a gradient computed during another one's
 * backward replaces it (startTape at depth 0 assigns a new array) and nulls it when done, and
 * the outer backward then fails to free its saved tensors. The outer backward iterates its own
 * filtered copy of the tape, so restoring the reference afterwards is all it needs.
 * Used by per-layer recomputation (model.ts `recomputedLayer`).
 */
export function withOwnTape<T>(fn: () => T): T {
  const state = (tf.engine() as unknown as { state: { activeTape: unknown } }).state;
  const outer = state.activeTape;
  try {
    return fn();
  } finally {
    state.activeTape = outer;
  }
}

/** Row-major [rows, cols] -> [cols, rows] in plain JS (once per weight at load: wasm's 2-D Transpose is ~10 ns per float). */
export function transpose2d(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  const B = 64; // tiles: both sides stay in cache
  for (let r0 = 0; r0 < rows; r0 += B) {
    for (let c0 = 0; c0 < cols; c0 += B) {
      const r1 = Math.min(rows, r0 + B);
      const c1 = Math.min(cols, c0 + B);
      for (let r = r0; r < r1; r++) for (let c = c0; c < c1; c++) out[c * rows + r] = data[r * cols + c];
    }
  }
  return out;
}
