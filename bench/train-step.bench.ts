/**
 * `train-step`: one forward + backward + Adam step on 32 x 64 tokens (1-token prompt, 64-token
 * completion: the warm-start loss, models/hf/supervised.ts `supervisedStep`) for the tiny and small
 * presets, each its seeded lab folder loaded trainable (full fine-tuning of every weight, as a run
 * with `policies.init` null trains it). Achieved GFLOP/s counts matmul FLOPs only, approximately:
 * 6 x (matmul parameters) x tokens for the weight products (forward 2, backward 4; the one-hot
 * embedding product included) plus 12 x layers x B x T^2 x d for attention (QK^T and AV, forward
 * and backward, full T x T: the causal half is not skipped).
 * `roofline_frac` = that / GFLOP/s of a plain 1024 x 1024 matmul on the same backend in this run,
 * for the larger preset (goal >= 0.5). The machines are shared, so each timing is also taken in
 * this process's CPU time (process.cpuUsage), which other processes' load does not inflate:
 * `roofline_frac_cpu` is the same ratio from CPU times. The formula is honest to within ~0.2%:
 * the one-hot embedding product is counted 6x though its backward is one product (4x), and the
 * elementwise work (RoPE, SwiGLU's gate, the rmsNorm gains) is not counted.
 *
 * Runs on wasm, then on the native backend when it starts (bench/backends.ts): the wasm keys
 * keep their names, the native ones are prefixed `native_`, and `native_vs_wasm` = wasm ms /
 * native ms of the small preset's step (`native_vs_wasm_cpu`: from CPU time).
 * `TRAIN_STEP_BENCH_ROWS` sets B (default 32; a small value only checks that the bench runs).
 * `TRAIN_STEP_BENCH_T` sets the completion length T (default 64; e.g. 296 for the search-quick
 * update's rows of ~300 tokens, where attention's T^2 terms weigh); a preset whose context is
 * shorter is loaded with its context raised to T (the same weights' shapes, more RoPE positions).
 * At a large B x T the step's scorer may run in row blocks under the default tape budget
 * (models/hf/logprobs.ts), as a run would.
 */
import * as tf from '@tensorflow/tfjs';
import { nativeKeys, onWasmThenNative } from './backends';
import { supervisedStep } from '../src/core/models/hf/supervised';
import { modelConfig, type ModelPresetName } from '../src/core/models/config';
import { labModelDir } from '../src/core/models/hf/labCache';
import { loadHfModel } from '../src/core/models/hf/load';
import { labPresetShape, matmulParameterCount, supervisedBatch } from './labModel';
import { headline, median } from './lib';

const B = Number(process.env.TRAIN_STEP_BENCH_ROWS ?? 32);
const T = Number(process.env.TRAIN_STEP_BENCH_T ?? 64);

/** The preset's seeded lab folder, trainable, its context raised to T when shorter (header). */
function loadPreset(preset: ModelPresetName) {
  const context = modelConfig(preset).contextLength;
  return loadHfModel(labModelDir(labPresetShape(preset, context < T ? { contextLength: T } : {}), 1234), { trainable: true });
}

/** Median wall and CPU milliseconds of `runs` calls after `warmup` untimed ones. */
async function timeBoth(fn: () => Promise<unknown> | unknown, runs: number, warmup: number): Promise<{ ms: number; cpu: number }> {
  for (let i = 0; i < warmup; i++) await fn();
  const ms: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c = process.cpuUsage();
    const t0 = performance.now();
    await fn();
    ms.push(performance.now() - t0);
    const d = process.cpuUsage(c);
    cpu.push((d.user + d.system) / 1e3);
  }
  return { ms: median(ms), cpu: median(cpu) };
}

async function matmulGflops(): Promise<{ wall: number; cpu: number }> {
  const a = tf.randomNormal([1024, 1024]);
  const b = tf.randomNormal([1024, 1024]);
  const t = await timeBoth(
    async () => {
      const c = tf.matMul(a, b);
      await c.data(); // waits for the device
      c.dispose();
    },
    7,
    2,
  );
  tf.dispose([a, b]);
  return { wall: (2 * 1024 ** 3) / t.ms / 1e6, cpu: (2 * 1024 ** 3) / t.cpu / 1e6 };
}

async function stepStats(preset: ModelPresetName, runs: number): Promise<{ ms: number; cpu: number; gflops: number; gflopsCpu: number }> {
  const loaded = loadPreset(preset);
  const config = loaded.config;
  const batch = supervisedBatch(B, T, 5);
  const opt = tf.train.adam(1e-4);
  const { ms, cpu } = await timeBoth(() => supervisedStep(loaded.model, batch, opt), runs, 1);
  opt.dispose();
  loaded.dispose();
  const flops = 6 * matmulParameterCount(config) * B * T + 12 * config.numLayers * B * T * T * config.numHeads * config.headDim;
  return { ms, cpu, gflops: flops / ms / 1e6, gflopsCpu: flops / cpu / 1e6 };
}

async function measure(backend: string) {
  const peak = await matmulGflops();
  const tiny = await stepStats('tiny', 3);
  const small = await stepStats('small', 2);
  for (const [name, s] of [
    ['tiny', tiny],
    ['small', small],
  ] as const) {
    console.log(`${backend} ${name}: ${s.ms.toFixed(0)} ms/step, ${(((B * T) / s.ms) * 1e3).toFixed(0)} tokens/s, ${s.gflops.toFixed(1)} GFLOP/s`);
  }
  console.log(
    `${backend} plain 1024x1024 matmul: ${peak.wall.toFixed(1)} GFLOP/s (${peak.cpu.toFixed(1)} by CPU time); small step ${small.gflopsCpu.toFixed(1)} GFLOP/s by CPU time`,
  );
  return {
    keys: {
      tiny_tok_s: ((B * T) / tiny.ms) * 1e3,
      small_tok_s: ((B * T) / small.ms) * 1e3,
      small_gflops: small.gflops,
      matmul_gflops: peak.wall,
      roofline_frac: small.gflops / peak.wall,
      roofline_frac_cpu: small.gflopsCpu / peak.cpu,
    },
    smallMs: small.ms,
    smallCpu: small.cpu,
  };
}

async function main(): Promise<void> {
  const { wasm, native } = await onWasmThenNative(measure);
  const prefixed = native ? Object.fromEntries(Object.entries(native.keys).map(([k, v]) => [`native_${k}`, v])) : {};
  headline('train-step', {
    ...wasm.keys,
    ...prefixed,
    ...nativeKeys(native && { wasm: wasm.smallMs, native: native.smallMs }, native && { wasm: wasm.smallCpu, native: native.smallCpu }),
  });
}

void main();
