/**
 * `real-shape`: the Hugging Face path at real shapes with the real 151,936-token vocabulary,
 * random weights written by the lab's own writer (hf/saveModel.ts `saveMergedModel`) into a
 * temporary folder and loaded as a checkpoint is (readHfConfig, openTensorSource):
 * - `42m`: Qwen3-shaped, hidden 256, 4 layers, 4 heads x 64 over 2 KV heads, SwiGLU 768, tied
 *   head (42.0M parameters, 39M of them the embedding), F32;
 * - `0.6b`: the published Qwen3-0.6B config.json shape (28 layers, hidden 1024, intermediate
 *   3072, 16 heads / 8 KV heads, head_dim 128, tied), BF16 on disk (1.2 GB), few tokens.
 * On the native backend (tfjs-node) when it starts, else wasm (the output says which).
 *
 * Per shape, the token picker's two paths side by side on the same model and prompts, runs
 * alternated (devicePick.ts: `host` reads back the [B, V] log-softmax and walks it in JS,
 * `device` reads back 2 x B numbers): rollout tokens/s, decode step ms (median time between
 * consecutive picks: one step and its pick) and `sampler_host_frac` = the host's part of the
 * picker (the uniforms, the read-back and the JS around it; on the host path all of the pick) /
 * rollout time; `sampler_pick_frac`: the whole picker, its kernels included (the softmax and sums
 * over [B, V]: device work, which on a CPU backend runs on the same cores) / rollout time; `_cpu`:
 * the whole picker from this process's CPU time, which other processes' load on these shared
 * machines does not inflate. Keys without a suffix are the device path
 * (the default), `_host` the old host path. Then a LoRA
 * step (r 16 on all seven linears, base frozen): forward + backward of a clipped-ratio surrogate
 * over the completion tokens (scoreHf) and an Adam step, in ms per 1k trained (completion)
 * tokens. The SRPO objective's own arithmetic is per token and small next to the model; old
 * log-probs and evaluation are not in it. `memory_vs_estimate` = peak tensor bytes of that step
 * (tf.profile peakBytes: weights included) / (model info's float32 weights + AdamW state +
 * memory.ts `trainingPeakBytes` for the step's tokens, with the default tape budget: a pass over
 * it runs in row blocks); `peak_rss_gb` is the process's maximum
 * resident set. The decode step's breakdown (kernels per step by kind, read-back bytes) and
 * its head product in three layouts are printed for the 42M shape.
 *
 * Sizes (env): REAL_SHAPE_ROWS (rollout rows, default 32 = 8 prompts x 4), REAL_SHAPE_PROMPT
 * (prompt tokens, default 88), REAL_SHAPE_NEW (new tokens, default 16), REAL_SHAPE_RUNS (runs
 * per picker, default 3), REAL_SHAPE_06B (0 skips the 0.6B shape; its rows / prompt / new
 * tokens: REAL_SHAPE_06B_ROWS default 8, REAL_SHAPE_06B_PROMPT 16, REAL_SHAPE_06B_NEW 8; its
 * LoRA step 2 x (16 + 32) tokens, one run per picker), REAL_SHAPE_TINY (0 skips
 * `tiny_long_prompt_peak_gb`, bench/tiny-long-prompt.bench.ts). Nothing here asserts on time.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../src/core/models/backend';
import { TOKEN_PICKERS, pickOnDevice, readPicks, rowUniforms, topCount, type RowsPicker, type TokenPickerName } from '../src/core/models/devicePick';
import { readHfConfig } from '../src/core/models/hf/config';
import { scoreHf } from '../src/core/models/hf/logprobs';
import { estimateHfMemory, trainingPeakBytes } from '../src/core/models/hf/memory';
import { HfModel } from '../src/core/models/hf/model';
import { openTensorSource } from '../src/core/models/hf/safetensorsFile';
import { sampleHf } from '../src/core/models/hf/sampler';
import { saveMergedModel } from '../src/core/models/hf/saveModel';
import type { HfModelConfig } from '../src/core/models/hf/types';
import { mulberry32 } from '../src/core/models/random';
import { headline, median, QWEN3_SHAPES, randomLora, randomSource } from './lib';
import { tinyLongPromptPeakGb } from './tiny-long-prompt.bench';

const env = (name: string, dflt: number) => (process.env[name] !== undefined ? Number(process.env[name]) : dflt);

type ShapeName = keyof typeof QWEN3_SHAPES;

/** Writes the shape's folder with the lab's writer: config.json, then the random weights (F32 or BF16). */
function writeShape(root: string, shape: ShapeName): string {
  const src = join(root, `${shape}-config`);
  mkdirSync(src);
  writeFileSync(join(src, 'config.json'), JSON.stringify({ ...QWEN3_SHAPES[shape], torch_dtype: 'float32' }, null, 2));
  const config = readHfConfig(src);
  const out = join(root, shape);
  const t = performance.now();
  const saved = saveMergedModel(out, { sourceDir: src, config, source: randomSource(config, 11), dtype: shape === '0.6b' ? 'BF16' : 'F32' });
  console.log(`${shape}: wrote ${(saved.totalBytes / 1e9).toFixed(2)} GB in ${((performance.now() - t) / 1e3).toFixed(1)} s (${saved.weightFiles.join(', ')})`);
  return out;
}

/**
 * A picker that adds its wall time to `acc.ms` and notes when each call starts (one call per
 * step, so consecutive starts are one decode step apart). It first waits for the step's logits
 * (one element read back), so the step's last kernels are not counted as the picker's. The
 * device path is run here as TOKEN_PICKERS.device runs it (the same functions), in two timed parts: its kernels
 * (`pickOnDevice` inside tf.tidy: on the CPU backends a kernel runs when its op is called, so
 * this is their time; on a GPU it would be the launches only) into `acc.kernelMs`, and the rest
 * (the uniforms, the read-back of (2 + 2N) x B numbers, unpacking) as host time.
 */
function timedPicker(name: TokenPickerName, acc: { ms: number; kernelMs: number; cpu: number; starts: number[] }): RowsPicker {
  const inner = TOKEN_PICKERS[name];
  const device: RowsPicker = (logits, rands, s) => {
    const { u, uLo } = rowUniforms(logits.shape[0], rands, s);
    const k = performance.now();
    const out = tf.tidy(() => pickOnDevice(logits, tf.tensor1d(u), s, tf.tensor1d(uLo)));
    acc.kernelMs += performance.now() - k;
    return readPicks(out, topCount(s, logits.shape[1]));
  };
  return (logits, rands, s) => {
    tf.tidy(() => tf.slice(logits, [0, 0], [1, 1]).dataSync()); // waits for the decode step
    const c = process.cpuUsage();
    const t = performance.now();
    acc.starts.push(t);
    const out = (name === 'device' ? device : inner)(logits, rands, s);
    acc.ms += performance.now() - t;
    acc.cpu += cpuMs(c);
    return out;
  };
}

/** This process's CPU milliseconds (every thread: TensorFlow's pool too) since `c`; other processes' load does not inflate it. */
function cpuMs(c: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(c);
  return (d.user + d.system) / 1e3;
}

interface RolloutFigures {
  tokS: number;
  stepMs: number;
  /** The picker's host work (uniforms, read-back, JS; the host path's whole pick) / rollout time. */
  hostFrac: number;
  /** The whole picker, its kernels included / rollout time. */
  pickFrac: number;
  hostFracCpu: number;
  pickMs: number;
}

/** Rollouts with each picker, alternated, `runs` each: medians. */
function rollouts(model: HfModel, prompts: number[][], newTokens: number, runs: number): Record<TokenPickerName, RolloutFigures> {
  const B = prompts.length;
  const one = (name: TokenPickerName) => {
    const acc = { ms: 0, kernelMs: 0, cpu: 0, starts: [] as number[] };
    const c = process.cpuUsage();
    const t = performance.now();
    sampleHf(model, prompts, { maxNewTokens: newTokens, temperature: 1, seed: 7, picker: timedPicker(name, acc) });
    const ms = performance.now() - t;
    const cpu = cpuMs(c);
    const steps = acc.starts.slice(1).map((s, i) => s - acc.starts[i]); // decode step + pick, prefill excluded
    return { ms, pick: acc.ms, kernels: acc.kernelMs, fracCpu: acc.cpu / cpu, step: steps.length ? median(steps) : NaN, prefill: acc.starts[0] - t };
  };
  one('device'); // warm-up (kernels, caches)
  const seen: Record<TokenPickerName, { ms: number; pick: number; kernels: number; fracCpu: number; step: number; prefill: number }[]> = {
    host: [],
    device: [],
  };
  for (let i = 0; i < runs; i++) for (const name of ['host', 'device'] as const) seen[name].push(one(name));
  const fig = (name: TokenPickerName): RolloutFigures => {
    const ms = median(seen[name].map((s) => s.ms));
    const pick = median(seen[name].map((s) => s.pick));
    const kernels = median(seen[name].map((s) => s.kernels)); // 0 on the host path: all of it is host work there
    return {
      tokS: ((B * newTokens) / ms) * 1e3,
      stepMs: median(seen[name].map((s) => s.step)),
      hostFrac: (pick - kernels) / ms,
      pickFrac: pick / ms,
      hostFracCpu: median(seen[name].map((s) => s.fracCpu)),
      pickMs: pick / newTokens,
    };
  };
  const out = { host: fig('host'), device: fig('device') };
  const prefillMs = median([...seen.host, ...seen.device].map((s) => s.prefill));
  console.log(
    `  prefill ${prefillMs.toFixed(0)} ms; ` +
      (['host', 'device'] as const)
        .map(
          (n) =>
            `${n}: ${out[n].tokS.toFixed(1)} tok/s, step ${out[n].stepMs.toFixed(1)} ms (pick ${out[n].pickMs.toFixed(1)} ms), host frac ${out[n].hostFrac.toFixed(3)}, with its kernels ${out[n].pickFrac.toFixed(3)} (cpu ${out[n].hostFracCpu.toFixed(3)})`,
        )
        .join('; '),
  );
  return out;
}

/** Kernels of one decode step and of each picker, by kind, with the bytes each picker reads back. */
async function stepBreakdown(model: HfModel, prompts: number[][]): Promise<void> {
  const B = prompts.length;
  const first = tf.tidy(() => model.prefill(tf.tensor2d(prompts.flat(), [B, prompts[0].length], 'int32'), Array<number>(B).fill(0)));
  const t = prompts[0].length;
  const ids = Array<number>(B).fill(100);
  let next: ReturnType<HfModel['decodeStep']> | null = null;
  for (let i = 0; i < 2; i++) {
    const t0 = performance.now();
    const o = model.decodeStep(ids, Array<number>(B).fill(t), first.cache, new Float32Array(B * (t + 1)));
    const t1 = performance.now();
    o.logits.dataSync();
    console.log(`  decode step call ${(t1 - t0).toFixed(1)} ms, then its read-back waits ${(performance.now() - t1).toFixed(1)} ms`);
    tf.dispose([o.logits, ...o.cache.k.flat(), ...o.cache.v.flat()]);
  }
  const stepProf = await tf.profile(() => {
    next = model.decodeStep(ids, Array<number>(B).fill(t), first.cache, new Float32Array(B * (t + 1)));
    next.logits.dataSync();
  });
  const summary = (p: tf.TensorContainer & { kernels: { name: string; kernelTimeMs: number | { error: string } }[] }) => {
    const by = new Map<string, { n: number; ms: number }>();
    for (const k of p.kernels) {
      const e = by.get(k.name) ?? { n: 0, ms: 0 };
      e.n++;
      e.ms += typeof k.kernelTimeMs === 'number' ? k.kernelTimeMs : 0;
      by.set(k.name, e);
    }
    const top = [...by].sort((a, b) => b[1].ms - a[1].ms).slice(0, 6);
    return `${p.kernels.length} kernels, ${top.map(([k, v]) => `${k} x${v.n} ${v.ms.toFixed(1)} ms`).join(', ')}`;
  };
  console.log(`  decode step (B ${B}, t ${t}): ${summary(stepProf as never)}`);
  const rands = prompts.map((_, r) => mulberry32(r));
  const s = { temperature: 1, topK: 0, topP: 1, validVocab: model.validVocab };
  const logits = (next as unknown as { logits: tf.Tensor2D }).logits;
  for (const name of ['host', 'device'] as const) {
    TOKEN_PICKERS[name](logits, rands, s); // warm-up
    const p = await tf.profile(() => void TOKEN_PICKERS[name](logits, rands, s));
    const back = name === 'host' ? B * logits.shape[1] * 4 : 2 * B * 4;
    console.log(`  picker ${name}: ${summary(p as never)}; reads back ${back} bytes once`);
  }
  const n = next as unknown as ReturnType<HfModel['decodeStep']>;
  tf.dispose([first.logits, ...first.cache.k.flat(), ...first.cache.v.flat(), n.logits, ...n.cache.k.flat(), ...n.cache.v.flat()]);
  headLayouts(B, model.config.hiddenSize, model.config.vocabSize);
}

/**
 * The decode step's head product [B, d] x head in the layouts a backend could keep the head in:
 * [d, V] (the lab's: model.ts), [V, d] multiplied transposed, and [V, d] times h^T then
 * transposed; random float32 values, medians of 9 after 3 warm-ups, each read back.
 */
function headLayouts(B: number, d: number, V: number): void {
  const [h, w, wt] = tf.tidy(() => [tf.randomNormal([B, d]), tf.randomNormal([d, V]), tf.randomNormal([V, d])] as tf.Tensor2D[]);
  const time = (f: () => tf.Tensor): number => {
    const ms: number[] = [];
    for (let i = 0; i < 12; i++) {
      const t = performance.now();
      const y = f();
      y.dataSync();
      y.dispose();
      if (i >= 3) ms.push(performance.now() - t);
    }
    return median(ms);
  };
  const dv = time(() => tf.matMul(h, w));
  const vdT = time(() => tf.matMul(h, wt, false, true));
  const vdH = time(() => tf.tidy(() => tf.transpose(tf.matMul(wt, h, false, true))));
  console.log(
    `  head product [${B} x ${d}] by [${d} x ${V}]: ${dv.toFixed(1)} ms as [d, V] (the lab's); ${vdT.toFixed(1)} ms as [V, d] transposed; ${vdH.toFixed(1)} ms as [V, d] x h^T`,
  );
  tf.dispose([h, w, wt]);
}

/** One LoRA step (forward + backward + Adam) on rows of prompt + completion; ms per 1k completion tokens and peak bytes. */
async function loraStep(dir: string, config: HfModelConfig, rows: number, promptLen: number, completion: number) {
  const model = HfModel.fromSource(config, openTensorSource(dir), { lora: randomLora(config, 16), trainable: true });
  const rand = mulberry32(9);
  const id = () => 3 + Math.floor(rand() * 150000);
  const pairs = Array.from({ length: rows }, () => ({ prompt: Array.from({ length: promptLen }, id), completion: Array.from({ length: completion }, id) }));
  const adv = tf.tensor1d(Float32Array.from({ length: rows }, (_, r) => (r % 2 ? 1 : -1)));
  const opt = tf.train.adam(1e-4);
  const scoreOld = () => tf.tidy(() => scoreHf(model, pairs).logp); // [rows, Tc] nats
  const old = scoreOld(); // the old log-probs, computed apart as the trainer does
  const step = () => {
    const t = performance.now();
    tf.tidy(() => {
      const { value, grads } = tf.variableGrads(() => {
        const s = scoreHf(model, pairs); // logp [rows, Tc]
        const ratio = tf.exp(tf.sub(s.logp, old));
        const a = tf.expandDims(adv, 1);
        const surrogate = tf.minimum(tf.mul(ratio, a), tf.mul(tf.clipByValue(ratio, 0.8, 1.28), a)); // clipped ratio x advantage
        return tf.neg(tf.div(tf.sum(tf.mul(surrogate, s.mask)), tf.sum(s.mask))) as tf.Scalar;
      }, model.variables());
      opt.applyGradients(grads as unknown as Parameters<typeof opt.applyGradients>[0]); // the variables' gradients by name
      value.dataSync(); // waits for the device
    });
    return performance.now() - t;
  };
  const before = tf.memory().numBytes;
  step(); // warm-up (Adam's moments are made here)
  const times = [step()];
  const prof = await tf.profile(() => void times.push(step()));
  const trainable = model.variables().reduce((a, v) => a + v.size, 0);
  const est = estimateHfMemory(config, { loraR: 16, seqLen: promptLen + completion });
  const estimate =
    est.weightBytes +
    est.optimizerBytes +
    trainingPeakBytes(config, {
      tokens: rows * (promptLen + completion),
      seqLen: promptLen + completion,
      recompute: false,
      tapeBudgetBytes: model.tapeBudgetBytes,
      profile: model.tapeProfile,
    });
  const peak = prof.peakBytes - before + est.weightBytes; // the weights were live before `before` was read
  opt.dispose();
  tf.dispose([adv, old]);
  model.dispose();
  const ms = median(times);
  console.log(
    `  LoRA r16 step (${rows} x (${promptLen} + ${completion}) tokens, ${trainable} trainable): ${ms.toFixed(0)} ms = ${((ms / (rows * completion)) * 1e3).toFixed(0)} ms per 1k trained tokens; peak tensors ${(peak / 1e9).toFixed(2)} GB vs estimate ${(estimate / 1e9).toFixed(2)} GB`,
  );
  return { msPer1k: (ms / (rows * completion)) * 1e3, memoryVsEstimate: peak / estimate };
}

async function main(): Promise<void> {
  let backend = 'node';
  try {
    await initBackend({ requested: 'node' });
  } catch (err) {
    console.log(`native backend absent (${(err as Error).message}); running on wasm`);
    await initBackend({ requested: 'wasm' });
    backend = 'wasm';
  }
  console.log(`backend: ${backend}`);
  const root = mkdtempSync(join(tmpdir(), 'srpo-real-shape-'));
  const keys: Record<string, number | string> = { backend };
  try {
    const shapes: [ShapeName, number, number][] = [['42m', env('REAL_SHAPE_ROWS', 32), env('REAL_SHAPE_NEW', 16)]];
    if (env('REAL_SHAPE_06B', 1)) shapes.push(['0.6b', env('REAL_SHAPE_06B_ROWS', 8), env('REAL_SHAPE_06B_NEW', 8)]);
    for (const [shape, rows, newTokens] of shapes) {
      const dir = writeShape(root, shape);
      const config = readHfConfig(dir);
      const promptLen = shape === '0.6b' ? env('REAL_SHAPE_06B_PROMPT', 16) : env('REAL_SHAPE_PROMPT', 88);
      const rand = mulberry32(3);
      const groups = Math.max(1, Math.floor(rows / 4));
      const distinct = Array.from({ length: groups }, () => Array.from({ length: promptLen }, () => 3 + Math.floor(rand() * 150000)));
      const prompts = Array.from({ length: rows }, (_, r) => distinct[r % groups]); // prompts x 4 samples
      const model = HfModel.fromSource(config, openTensorSource(dir));
      console.log(`${shape}: ${rows} rows x ${promptLen}-token prompts, ${newTokens} new tokens, vocab ${config.vocabSize}`);
      const fig = rollouts(model, prompts, newTokens, shape === '0.6b' ? 1 : env('REAL_SHAPE_RUNS', 3));
      if (shape === '42m') await stepBreakdown(model, prompts);
      model.dispose();
      const train =
        shape === '0.6b' ? await loraStep(dir, config, 2, promptLen, 32) : await loraStep(dir, config, Math.min(rows, 32), promptLen, Math.max(newTokens, 32));
      const p = shape === '42m' ? '' : 'b06_';
      Object.assign(keys, {
        [`${p}rows`]: rows,
        [`${p}tok_s_host`]: fig.host.tokS,
        [`${p}tok_s_device`]: fig.device.tokS,
        [`${p}step_ms_host`]: fig.host.stepMs,
        [`${p}step_ms_device`]: fig.device.stepMs,
        [`${p}sampler_host_frac_host`]: fig.host.hostFrac,
        [`${p}sampler_host_frac`]: fig.device.hostFrac,
        [`${p}sampler_pick_frac`]: fig.device.pickFrac,
        [`${p}sampler_host_frac_cpu_host`]: fig.host.hostFracCpu,
        [`${p}sampler_host_frac_cpu`]: fig.device.hostFracCpu,
        [`${p}lora_ms_per_1k_tok`]: train.msPer1k,
        [`${p}memory_vs_estimate`]: train.memoryVsEstimate,
      });
      rmSync(dir, { recursive: true, force: true });
    }
    keys.peak_rss_gb = process.resourceUsage().maxRSS / 1e6; // maxRSS is in KB
    // The tiny Qwen3's long-prompt math-ablation run (issue 27), in a child process of its own: bench/tiny-long-prompt.bench.ts.
    if (env('REAL_SHAPE_TINY', 1)) keys.tiny_long_prompt_peak_gb = tinyLongPromptPeakGb();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  headline('real-shape', keys);
}

void main();
