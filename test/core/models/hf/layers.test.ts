// The per-backend training kernels of the HF family (src/core/models/hf/layers.ts HF_TRAINING_KERNELS):
// the registry's choice per tfjs backend, and EVERY variant (not only the one the backend picks) on the
// backend the tests run on: attention values against a float64 reference written here in plain JS,
// attention gradients against tfjs autodiff of a plain composition (heads repeated by slices, one
// batched product per head), frozen-linear values and input gradients against matMul's autodiff.
// The whole model on the chosen variant is covered by model/adapters/recompute tests (run them with
// SRPO_LAB_BACKEND=node for the native variant).
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import {
  ATTENTION_BLOCK_FLOATS,
  attendBlocked,
  attendChannels,
  blockedAttentionPlan,
  frozenLinear,
  frozenLinearFlags,
  HF_TRAINING_KERNELS,
  hfTrainingKernels,
  MASKED,
  SAVED_PROBABILITIES_FLOATS,
} from '../../../../src/core/models/hf/layers';
import { maxAbsDiff } from '../helpers';

/** Gradients of sum(f(xs) * W) for a fixed, non-uniform weight W (every output weighted differently). */
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

function values(f: () => tf.Tensor): Float32Array {
  const t = tf.tidy(f);
  const out = t.dataSync() as Float32Array;
  t.dispose();
  return out;
}

/** Deterministic pseudo-random floats in [-a, a] (no tfjs RNG: the reference reads the same arrays). */
function noise(n: number, seed: number, a = 1): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = ((s / 2 ** 32) * 2 - 1) * a;
  }
  return out;
}

/** Key mask [B*T]: row b has pads[b] left pads (0), then real tokens (1). */
function leftPadMask(pads: number[], T: number): number[] {
  return pads.flatMap((p) => Array.from({ length: T }, (_, t) => (t < p ? 0 : 1)));
}

/**
 * Float64 attention in plain JS: query head h reads KV head floor(h / g); score + bias rounded to
 * float32 as the tfjs ops add them (so a row whose keys are all masked is uniform over every key,
 * as the kernels compute it), softmax and the weighted sum in float64. -> [B*T, H*hd].
 */
function reference64(
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  mask: number[],
  B: number,
  T: number,
  H: number,
  nKv: number,
  hd: number,
): Float64Array {
  const g = H / nKv;
  const out = new Float64Array(B * T * H * hd);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const j = Math.floor(h / g);
      for (let t = 0; t < T; t++) {
        const s = new Float64Array(T);
        for (let u = 0; u < T; u++) {
          let dot = 0;
          for (let e = 0; e < hd; e++) dot += q[(b * T + t) * H * hd + h * hd + e] * k[(b * T + u) * nKv * hd + j * hd + e];
          s[u] = Math.fround(dot + (u > t || !mask[b * T + u] ? MASKED : 0));
        }
        const m = Math.max(...s);
        const p = Array.from(s, (x) => Math.exp(x - m));
        const z = p.reduce((a, c) => a + c, 0);
        for (let e = 0; e < hd; e++) {
          let y = 0;
          for (let u = 0; u < T; u++) y += (p[u] / z) * v[(b * T + u) * nKv * hd + j * hd + e];
          out[(b * T + t) * H * hd + h * hd + e] = y;
        }
      }
    }
  }
  return out;
}

/** The same attention as a plain tfjs composition for autodiff: KV heads repeated by slices, [B, H, T, T] scores. */
function plainAttention(q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D, mask: number[], B: number, T: number, H: number, nKv: number): tf.Tensor2D {
  const hd = q.shape[1] / H;
  const g = H / nKv;
  const heads = (x: tf.Tensor, n: number) => tf.transpose(tf.reshape(x, [B, T, n, hd]), [0, 2, 1, 3]); // [B, n, T, hd]
  // Head h's keys are a slice of KV head floor(h / g) (slices + concat: wasm has no Gather gradient).
  const repeat = (x: tf.Tensor) =>
    tf.concat(
      Array.from({ length: H }, (_, h) => tf.slice(x, [0, Math.floor(h / g), 0, 0], [B, 1, T, hd])),
      1,
    ); // [B, H, T, hd]
  const kh = repeat(heads(k, nKv));
  const vh = repeat(heads(v, nKv));
  const bias = tf.tensor4d(
    Array.from({ length: B * T * T }, (_, i) => {
      const [b, t, u] = [Math.floor(i / (T * T)), Math.floor(i / T) % T, i % T];
      return u > t || !mask[b * T + u] ? MASKED : 0;
    }),
    [B, 1, T, T],
  );
  const att = tf.softmax(tf.add(tf.matMul(heads(q, H) as tf.Tensor4D, kh as tf.Tensor4D, false, true), bias), -1); // [B, H, T, T]
  const y = tf.matMul(att as tf.Tensor4D, vh as tf.Tensor4D); // [B, H, T, hd]
  return tf.reshape(tf.transpose(y, [0, 2, 1, 3]), [B * T, H * hd]) as tf.Tensor2D;
}

type Attend = (q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D, bias: tf.Tensor4D | null, B: number, T: number, H: number, nKv: number) => tf.Tensor2D;
/** attendBlocked with a block budget (floats of scores per block) and a bound on the probabilities it keeps for the backward. */
const blocked =
  (blockFloats: number, savedFloats: number): Attend =>
  (q, k, v, bias, B, T, H, nKv) =>
    attendBlocked(q, k, v, bias, B, T, H, nKv, blockFloats, savedFloats);

/**
 * Each registry entry's attention with the bias in its own layout, built by the entry itself.
 * attendBlocked's two backward paths each: probabilities kept (the registry's choice at these
 * sizes) and recomputed (savedFloats 0); a block budget of 16 floats runs one (row, KV head)
 * unit per block, so every shape runs in several blocks.
 */
const ATTENTION_VARIANTS: Record<string, { attend: Attend; bias: (B: number, T: number, keyMask: ArrayLike<number>) => tf.Tensor4D | null }> = {
  attendChannels: { attend: attendChannels, bias: HF_TRAINING_KERNELS.wasm.attentionBias },
  attendBlocked: { attend: attendBlocked, bias: HF_TRAINING_KERNELS.tensorflow.attentionBias },
  'attendBlocked, probabilities recomputed': { attend: blocked(ATTENTION_BLOCK_FLOATS, 0), bias: HF_TRAINING_KERNELS.tensorflow.attentionBias },
  'attendBlocked, one unit per block, probabilities kept': { attend: blocked(16, Infinity), bias: HF_TRAINING_KERNELS.tensorflow.attentionBias },
  'attendBlocked, one unit per block, probabilities recomputed': { attend: blocked(16, 0), bias: HF_TRAINING_KERNELS.tensorflow.attentionBias },
};

// [B, T, H, nKv, hd, left pads per row]: GQA 2:1, MHA, all heads on one KV head, one row, one token, long left pad.
const SHAPES: [number, number, number, number, number, number[]][] = [
  [3, 5, 4, 2, 4, [0, 2, 4]],
  [2, 4, 2, 2, 3, [1, 0]],
  [2, 6, 3, 1, 4, [0, 3]],
  [1, 4, 2, 1, 2, [0]],
  [2, 1, 2, 1, 4, [0, 0]],
  [2, 6, 4, 2, 3, [0, 0]], // no padding: the native bias is null, the causal part alone
];

describe('hf training kernels registry', () => {
  it('wasm and cpu keep the channel ops, tensorflow (tfjs-node, tfjs-node-gpu) takes batched matMuls; an unknown backend is named', () => {
    for (const b of ['wasm', 'cpu']) {
      expect(hfTrainingKernels(b).attend).toBe(attendChannels);
      expect(hfTrainingKernels(b).frozenLinear).toBe(frozenLinear);
    }
    expect(hfTrainingKernels('tensorflow').attend).toBe(attendBlocked);
    expect(hfTrainingKernels('tensorflow').frozenLinear).toBe(frozenLinearFlags);
    expect(hfTrainingKernels()).toBe(hfTrainingKernels(tf.getBackend()));
    expect(() => hfTrainingKernels('webgl')).toThrow(/hf\/layers\.ts.*"webgl".*wasm, cpu, tensorflow/);
  });

  it('each bias layout masks causal and left-pad keys; the blocked one holds only the pads (linear in T)', () => {
    const [B, T] = [2, 3];
    const mask = leftPadMask([1, 0], T);
    const ch = values(() => HF_TRAINING_KERNELS.wasm.attentionBias(B, T, mask)!); // [T, B, 1, T]
    const bt = values(() => HF_TRAINING_KERNELS.tensorflow.attentionBias(B, T, mask)!); // [B, 1, 1, T]
    expect(bt.length).toBe(B * T);
    for (let b = 0; b < B; b++) {
      for (let u = 0; u < T; u++) expect(bt[b * T + u]).toBe(b === 0 && u === 0 ? MASKED : 0);
      for (let t = 0; t < T; t++) {
        for (let u = 0; u < T; u++) expect(ch[(t * B + b) * T + u]).toBe(u > t || (b === 0 && u === 0) ? MASKED : 0);
      }
    }
    // Without padding the blocked form needs no key bias at all; the channel form still carries the causal part.
    expect(HF_TRAINING_KERNELS.tensorflow.attentionBias(B, T, leftPadMask([0, 0], T))).toBeNull();
    const causalOnly = HF_TRAINING_KERNELS.wasm.attentionBias(B, T, leftPadMask([0, 0], T))!;
    expect(causalOnly.shape).toEqual([T, B, 1, T]);
    causalOnly.dispose();
  });
});

describe('hf attention variants', () => {
  for (const [name, variant] of Object.entries(ATTENTION_VARIANTS)) {
    for (const [B, T, H, nKv, hd, pads] of SHAPES) {
      it(`${name} (B=${B}, T=${T}, H=${H}, nKV=${nKv}, hd=${hd}, pads ${pads}): values vs float64, gradients vs autodiff`, () => {
        const mask = leftPadMask(pads, T);
        const [qa, ka, va] = [noise(B * T * H * hd, 1, 1.5), noise(B * T * nKv * hd, 2, 1.5), noise(B * T * nKv * hd, 3)];
        const q = tf.tensor2d(qa, [B * T, H * hd]);
        const k = tf.tensor2d(ka, [B * T, nKv * hd]);
        const v = tf.tensor2d(va, [B * T, nKv * hd]);
        const bias = variant.bias(B, T, mask);
        const mine = (a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) => variant.attend(a as tf.Tensor2D, b as tf.Tensor2D, c as tf.Tensor2D, bias, B, T, H, nKv);
        const plain = (a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) => plainAttention(a as tf.Tensor2D, b as tf.Tensor2D, c as tf.Tensor2D, mask, B, T, H, nKv);
        const want = reference64(qa, ka, va, mask, B, T, H, nKv, hd);
        const got = values(() => mine(q, k, v));
        expect(got.length).toBe(want.length);
        expect(maxAbsDiff(got, want)).toBeLessThan(1e-5);
        // The plain composition is itself checked against float64, so its autodiff is a fair reference.
        expect(
          maxAbsDiff(
            values(() => plain(q, k, v)),
            want,
          ),
        ).toBeLessThan(1e-5);
        const a = grads(mine, [q, k, v]);
        const r = grads(plain, [q, k, v]);
        for (let i = 0; i < 3; i++) {
          expect(a[i].length).toBe(r[i].length);
          expect(maxAbsDiff(a[i], r[i])).toBeLessThan(1e-4);
        }
        // Not vacuous: the query gradient is not zero (softmax over >1 visible key somewhere, or T = 1).
        if (T > 1) expect(Math.max(...Array.from(a[0], Math.abs))).toBeGreaterThan(1e-3);
        tf.dispose([q, k, v]);
        bias?.dispose();
      });
    }
  }

  it('the variants agree with each other and leave no tensors behind after a gradient', () => {
    const [B, T, H, nKv, hd] = [2, 5, 4, 2, 4];
    const mask = leftPadMask([2, 0], T);
    const q = tf.tensor2d(noise(B * T * H * hd, 7), [B * T, H * hd]);
    const k = tf.tensor2d(noise(B * T * nKv * hd, 8), [B * T, nKv * hd]);
    const v = tf.tensor2d(noise(B * T * nKv * hd, 9), [B * T, nKv * hd]);
    const outs = Object.values(ATTENTION_VARIANTS).map((variant) => {
      const bias = variant.bias(B, T, mask);
      const f = (a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) => variant.attend(a as tf.Tensor2D, b as tf.Tensor2D, c as tf.Tensor2D, bias, B, T, H, nKv);
      grads(f, [q, k, v]);
      const n = tf.memory().numTensors;
      const g = grads(f, [q, k, v]);
      expect(tf.memory().numTensors).toBe(n);
      const y = values(() => f(q, k, v));
      bias?.dispose();
      return { y, g };
    });
    for (const o of outs.slice(1)) {
      expect(maxAbsDiff(outs[0].y, o.y)).toBeLessThan(1e-5);
      for (let i = 0; i < 3; i++) expect(maxAbsDiff(outs[0].g[i], o.g[i])).toBeLessThan(1e-4);
    }
    tf.dispose([q, k, v]);
  });

  it('the native attention keeps its probabilities up to SAVED_PROBABILITIES_FLOATS and recomputes them above', () => {
    // Rows x heads x T x T floats: search-quick's update pass (48 rows of ~296 tokens, 4 heads on 2 KV heads) and one of its
    // row blocks keep them; 40 rows of 512 tokens recompute them (the peak test below).
    expect(blockedAttentionPlan(48, 296, 4, 2).saveProbabilities).toBe(true);
    expect(blockedAttentionPlan(10, 296, 4, 2).saveProbabilities).toBe(true);
    expect(blockedAttentionPlan(40, 512, 4, 2).saveProbabilities).toBe(false);
    expect(blockedAttentionPlan(1, 4096, 4, 2).saveProbabilities).toBe(false); // one long prompt
    const [B, T, H] = [2, 32, 4];
    expect(blockedAttentionPlan(B, T, H, 2, ATTENTION_BLOCK_FLOATS, B * H * T * T).saveProbabilities).toBe(true); // the bound is inclusive
    expect(blockedAttentionPlan(B, T, H, 2, ATTENTION_BLOCK_FLOATS, B * H * T * T - 1).saveProbabilities).toBe(false);
    // Units per block: at least one, else as many [g*T, T] score blocks as fit the block budget.
    expect(blockedAttentionPlan(B, T, H, 2, 2 * T * T * 3).unitsPerBlock).toBe(3);
    expect(blockedAttentionPlan(B, T, H, 2, 16).unitsPerBlock).toBe(1);
  });

  it('keeping the probabilities changes no bit of the values or gradients (recorded runs repeat across the two forms)', () => {
    const [B, T, H, nKv, hd] = [3, 7, 4, 2, 4];
    const q = tf.tensor2d(noise(B * T * H * hd, 41), [B * T, H * hd]);
    const k = tf.tensor2d(noise(B * T * nKv * hd, 42), [B * T, nKv * hd]);
    const v = tf.tensor2d(noise(B * T * nKv * hd, 43), [B * T, nKv * hd]);
    for (const pads of [
      [0, 0, 0],
      [2, 0, 5],
    ]) {
      const bias = HF_TRAINING_KERNELS.tensorflow.attentionBias(B, T, leftPadMask(pads, T));
      const run = (savedFloats: number, blockFloats: number) => {
        const f = (a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) =>
          attendBlocked(a as tf.Tensor2D, b as tf.Tensor2D, c as tf.Tensor2D, bias, B, T, H, nKv, blockFloats, savedFloats);
        return { y: values(() => f(q, k, v)), g: grads(f, [q, k, v]) };
      };
      // Same blocks: the same products in the same order. (Other block sizes batch the products
      // differently, which TensorFlow's kernels may round differently: not compared bit for bit.)
      const kept = run(Infinity, ATTENTION_BLOCK_FLOATS);
      const recomputed = run(0, ATTENTION_BLOCK_FLOATS);
      expect(Array.from(recomputed.y)).toEqual(Array.from(kept.y));
      for (let i = 0; i < 3; i++) expect(Array.from(recomputed.g[i])).toEqual(Array.from(kept.g[i]));
      bias?.dispose();
    }
    tf.dispose([q, k, v]);
  });

  it('kept probabilities live from the forward to the backward under a tape only; recomputed ones never exceed a block', async () => {
    // One unit per block (blockFloats = g*T*T), so a recomputing pass holds a few [g*T, T] blocks, never the whole [B*H, T, T].
    const [B, T, H, nKv, hd] = [16, 256, 4, 2, 4];
    const full = B * H * T * T * 4; // bytes of every probability: 32 blocks
    const mask = leftPadMask([0, 3, 0, 0, 9, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0], T);
    const q = tf.tensor2d(noise(B * T * H * hd, 31), [B * T, H * hd]);
    const k = tf.tensor2d(noise(B * T * nKv * hd, 32), [B * T, nKv * hd]);
    const v = tf.tensor2d(noise(B * T * nKv * hd, 33), [B * T, nKv * hd]);
    const bias = HF_TRAINING_KERNELS.tensorflow.attentionBias(B, T, mask);
    const inputs = tf.memory().numBytes;
    const peak = async (savedFloats: number, taped: boolean) => {
      const f = (a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) =>
        tf.sum(tf.square(attendBlocked(a as tf.Tensor2D, b as tf.Tensor2D, c as tf.Tensor2D, bias, B, T, H, nKv, (H / nKv) * T * T, savedFloats)));
      const info = await tf.profile(() => {
        const out = taped ? tf.grads(f)([q, k, v]) : [f(q, k, v)];
        tf.dispose(out);
      });
      return info.peakBytes - inputs;
    };
    expect(await peak(Infinity, true)).toBeGreaterThanOrEqual(full);
    expect(await peak(0, true)).toBeLessThan(full / 2);
    expect(await peak(Infinity, false)).toBeLessThan(full / 2); // no tape: nothing kept, whatever the bound
    tf.dispose([q, k, v]);
    bias?.dispose();
  }, 120_000);

  it('above SAVED_PROBABILITIES_FLOATS the native attention never holds a [rows, heads, T, T] block: peak bytes of forward + backward stay under one', async () => {
    // 40 rows x 4 heads x 512 x 512 scores are 168 MB; the whole-batch form held the scores, their
    // softmax and the backward's dP and dS at that size (issue 27: 1 GB allocations with long chat prompts).
    const [B, T, H, nKv, hd] = [40, 512, 4, 2, 4];
    expect(B * H * T * T).toBeGreaterThan(SAVED_PROBABILITIES_FLOATS);
    const full = B * H * T * T * 4; // bytes
    const mask = leftPadMask(
      [0, 5, 100, 0, 3, 0, 511, 7].flatMap((p) => [p, 0, p, 1, 0]),
      T,
    );
    const q = tf.tensor2d(noise(B * T * H * hd, 21), [B * T, H * hd]);
    const k = tf.tensor2d(noise(B * T * nKv * hd, 22), [B * T, nKv * hd]);
    const v = tf.tensor2d(noise(B * T * nKv * hd, 23), [B * T, nKv * hd]);
    const { attend, attentionBias } = HF_TRAINING_KERNELS.tensorflow;
    const inputs = tf.memory().numBytes;
    let gradSum = 0;
    const info = await tf.profile(() => {
      const bias = attentionBias(B, T, mask);
      const g = tf.grads((a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) =>
        tf.sum(tf.square(attend(a as tf.Tensor2D, b as tf.Tensor2D, c as tf.Tensor2D, bias, B, T, H, nKv))),
      )([q, k, v]);
      gradSum = g.reduce((acc, t) => acc + (tf.sum(tf.abs(t)).dataSync()[0] as number), 0);
      tf.dispose(g);
      bias?.dispose();
    });
    expect(gradSum).toBeGreaterThan(0); // it did run a backward
    expect(info.peakBytes - inputs).toBeLessThan(full);
    tf.dispose([q, k, v]);
  }, 120_000);
});

describe('hf frozen linear variants', () => {
  for (const [name, lin] of [
    ['frozenLinear', frozenLinear],
    ['frozenLinearFlags', frozenLinearFlags],
  ] as const) {
    it(`${name}: value and input gradient equal matMul autodiff`, () => {
      const x = tf.tensor2d(noise(5 * 4, 11), [5, 4]);
      const w = tf.tensor2d(noise(4 * 3, 12), [4, 3]);
      expect(
        maxAbsDiff(
          values(() => lin(x, w)),
          values(() => tf.matMul(x, w)),
        ),
      ).toBeLessThan(1e-6);
      const [a] = grads((p) => lin(p as tf.Tensor2D, w), [x]);
      const [b] = grads((p) => tf.matMul(p as tf.Tensor2D, w), [x]);
      expect(maxAbsDiff(a, b)).toBeLessThan(1e-6);
      expect(Math.max(...Array.from(a, Math.abs))).toBeGreaterThan(1e-2);
      tf.dispose([x, w]);
    });
  }
});
