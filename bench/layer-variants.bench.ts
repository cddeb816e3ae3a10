/**
 * `layer-variants`: the wasm-specific tricks of src/core/models/layers.ts against the plain tfjs
 * code they replace, forward + backward at the small preset's training shapes (B = 32, T = 64,
 * d = 256, H = 8, V = 108), on wasm and then on the native backend when it starts. Each pair
 * computes the same values; the question is only which kernels are faster where:
 *   attention  `selfAttentionChannels` (depthwise-conv products, hand-written backward) vs
 *              `selfAttentionBatched` (batched matMul with a transpose flag, tfjs autodiff);
 *   embedding  `embed` (one-hot product) vs `tf.gather` (autodiff; wasm has no gather gradient,
 *              so there it is not timed);
 *   linear     `linearTransposed` (explicit transposes in the backward) vs `linearFlags`
 *              (tf.matMul's own gradient, transpose flags).
 * Headline: `<op>_<backend>=` trick ms / plain ms (> 1: the plain code is faster there).
 * Informs the per-backend choice in layers.ts (`TRAINING_KERNELS`); nothing asserts on time.
 */
import * as tf from '@tensorflow/tfjs';
import { embed, linearFlags, linearTransposed, selfAttentionBatched, selfAttentionChannels } from '../src/core/models/layers';
import { onWasmThenNative } from './backends';
import { headline, timeMedian } from './lib';

const B = 32;
const T = 64;
const D = 256;
const H = 8;
const V = 108;
const N = B * T;

/** ms of one forward + backward of `f` with respect to `xs`, against a fixed random cotangent. */
async function fwdBwdMs(f: (...xs: tf.Tensor[]) => tf.Tensor, xs: tf.Tensor[], runs = 5): Promise<number> {
  const g = tf.grads(f);
  return timeMedian(
    async () => {
      const out = tf.tidy(() => g(xs));
      await Promise.all(out.map((t) => t.data())); // waits for the device
      tf.dispose(out);
    },
    runs,
    2,
  );
}

function causalBias(): tf.Tensor4D {
  const b = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) b[i * T + j] = -1e9;
  return tf.tensor4d(b, [1, 1, T, T]);
}

async function measure(backend: string): Promise<Record<string, number>> {
  const r = (shape: number[]) => tf.randomNormal(shape, 0, 0.1);
  const h = r([N, D]);
  const [wq, wk, wv, w] = [r([D, D]), r([D, D]), r([D, D]), r([D, D])];
  const table = r([V, D]);
  const ids = tf.tensor1d(
    Array.from({ length: N }, (_, i) => (i * 37) % V),
    'int32',
  );
  const bias = causalBias();
  const weigh = (y: tf.Tensor) => tf.sum(tf.mul(y, tf.onesLike(y).mul(0.5))); // scalar loss

  const attention = (f: typeof selfAttentionChannels) => (x: tf.Tensor, a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) =>
    weigh(f(x as tf.Tensor2D, a as tf.Tensor2D, b as tf.Tensor2D, c as tf.Tensor2D, bias, B, T, H));
  const attTrick = await fwdBwdMs(attention(selfAttentionChannels) as (...xs: tf.Tensor[]) => tf.Tensor, [h, wq, wk, wv]);
  const attPlain = await fwdBwdMs(attention(selfAttentionBatched) as (...xs: tf.Tensor[]) => tf.Tensor, [h, wq, wk, wv]);

  const embTrick = await fwdBwdMs((t) => weigh(embed(ids, t as tf.Tensor2D)), [table]);
  const embPlain = backend === 'wasm' ? NaN : await fwdBwdMs((t) => weigh(tf.gather(t, ids)), [table]);

  const linTrick = await fwdBwdMs((x, a) => weigh(linearTransposed(x as tf.Tensor2D, a as tf.Tensor2D)), [h, w]);
  const linPlain = await fwdBwdMs((x, a) => weigh(linearFlags(x as tf.Tensor2D, a as tf.Tensor2D)), [h, w]);

  tf.dispose([h, wq, wk, wv, w, table, ids, bias]);
  const show = (n: number) => (Number.isNaN(n) ? 'n/a' : `${n.toFixed(1)} ms`);
  console.log(
    `${backend}: attention trick ${show(attTrick)} plain ${show(attPlain)}; embedding one-hot ${show(embTrick)} gather ${show(embPlain)}; linear trick ${show(linTrick)} plain ${show(linPlain)}`,
  );
  return { attention: attTrick / attPlain, embedding: embTrick / embPlain, linear: linTrick / linPlain };
}

async function main(): Promise<void> {
  const { wasm, native } = await onWasmThenNative(measure);
  const keys: Record<string, number | string> = {};
  for (const [backend, ratios] of [
    ['wasm', wasm],
    ['node', native],
  ] as const) {
    if (!ratios) continue;
    for (const [op, v] of Object.entries(ratios)) keys[`${op}_${backend}`] = Number.isNaN(v) ? 'n/a' : v;
  }
  headline('layer-variants', keys);
}

void main();
