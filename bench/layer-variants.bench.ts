/**
 * `layer-variants`: each per-backend training kernel of the model family against the other form
 * of the same op, forward + backward at the small preset's training shapes (B = 32, T = 64,
 * d = 256, H = 8 query and 8 KV heads as a lab folder has, V = 108), on wasm and then on the
 * native backend when it starts. Each pair computes the same values; the question is only which
 * kernels are faster where:
 *   attention     hf/layers.ts `attendChannels` (depthwise-conv products, hand-written backward;
 *                 the wasm/cpu entry of `HF_TRAINING_KERNELS`) vs `attendBlocked` (batched
 *                 matMuls in blocks, probabilities kept or recomputed in the backward; the
 *                 tensorflow entry), each with the key bias its entry builds;
 *   embedding     layers.ts `embed` (one-hot product) vs `tf.gather` (autodiff; wasm has no
 *                 gather gradient, so there it is not timed);
 *   linear        layers.ts `linearTransposed` (explicit transposes in the backward) vs
 *                 `linearFlags` (tf.matMul's own gradient, transpose flags): a trained weight
 *                 (`TRAINING_KERNELS`);
 *   frozen_linear hf/layers.ts `frozenLinear` (explicit transpose) vs `frozenLinearFlags`
 *                 (transpose-flag product): a weight that is not trained, only dx.
 * Headline: `<op>_<backend>=` trick ms / plain ms (> 1: the plain code is faster there).
 * Informs the per-backend choices in layers.ts (`TRAINING_KERNELS`) and hf/layers.ts
 * (`HF_TRAINING_KERNELS`); nothing asserts on time. `LAYER_VARIANTS_B` sets the rows (default
 * 32; a small value only checks that the bench runs).
 */
import * as tf from '@tensorflow/tfjs';
import { frozenLinear, frozenLinearFlags, HF_TRAINING_KERNELS, type HfTrainingKernels } from '../src/core/models/hf/layers';
import { embed, linearFlags, linearTransposed } from '../src/core/models/layers';
import { onWasmThenNative } from './backends';
import { headline, timeMedian } from './lib';

const B = Number(process.env.LAYER_VARIANTS_B ?? 32);
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

async function measure(backend: string): Promise<Record<string, number>> {
  const r = (shape: number[]) => tf.randomNormal(shape, 0, 0.1);
  const [qs, k, v] = [r([N, D]), r([N, D]), r([N, D])];
  const w = r([D, D]);
  const table = r([V, D]);
  const ids = tf.tensor1d(
    Array.from({ length: N }, (_, i) => (i * 37) % V),
    'int32',
  );
  const keyMask = new Float32Array(N).fill(1);
  const weigh = (y: tf.Tensor) => tf.sum(tf.mul(y, tf.onesLike(y).mul(0.5))); // scalar loss

  const attentionMs = async (kernels: HfTrainingKernels) => {
    const bias = kernels.attentionBias(B, T, keyMask);
    const ms = await fwdBwdMs((a, b, c) => weigh(kernels.attend(a as tf.Tensor2D, b as tf.Tensor2D, c as tf.Tensor2D, bias, B, T, H, H)), [qs, k, v]);
    bias?.dispose();
    return ms;
  };
  const attTrick = await attentionMs(HF_TRAINING_KERNELS.wasm);
  const attPlain = await attentionMs(HF_TRAINING_KERNELS.tensorflow);

  const embTrick = await fwdBwdMs((t) => weigh(embed(ids, t as tf.Tensor2D)), [table]);
  const embPlain = backend === 'wasm' ? NaN : await fwdBwdMs((t) => weigh(tf.gather(t, ids)), [table]);

  const linTrick = await fwdBwdMs((x, a) => weigh(linearTransposed(x as tf.Tensor2D, a as tf.Tensor2D)), [qs, w]);
  const linPlain = await fwdBwdMs((x, a) => weigh(linearFlags(x as tf.Tensor2D, a as tf.Tensor2D)), [qs, w]);

  const frozenTrick = await fwdBwdMs((x) => weigh(frozenLinear(x as tf.Tensor2D, w as tf.Tensor2D)), [qs]);
  const frozenPlain = await fwdBwdMs((x) => weigh(frozenLinearFlags(x as tf.Tensor2D, w as tf.Tensor2D)), [qs]);

  tf.dispose([qs, k, v, w, table, ids]);
  const show = (n: number) => (Number.isNaN(n) ? 'n/a' : `${n.toFixed(1)} ms`);
  console.log(
    `${backend}: attention channels ${show(attTrick)} blocked ${show(attPlain)}; embedding one-hot ${show(embTrick)} gather ${show(embPlain)}; ` +
      `linear trick ${show(linTrick)} plain ${show(linPlain)}; frozen linear trick ${show(frozenTrick)} plain ${show(frozenPlain)}`,
  );
  return { attention: attTrick / attPlain, embedding: embTrick / embPlain, linear: linTrick / linPlain, frozen_linear: frozenTrick / frozenPlain };
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
