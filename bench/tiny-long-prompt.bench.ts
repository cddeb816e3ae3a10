/**
 * `tiny-long-prompt`: memory of a `math-ablation` LoRA run on the 94.6k-parameter test Qwen3
 * (test/fixtures/hf/qwen3-tiny, max_position_embeddings raised to 4096 as the trainer tests do:
 * ~490-token chat prompts, K up to 3, 8 tasks x 4 samples, 32 new tokens, two epochs of two
 * mini-batches, LoRA r 2 on q/v/down, evaluation off), where issue 27 saw 4.4-14.7 GB resident
 * because attention's [rows, heads, T, T] blocks were materialised whole.
 *
 * - `tiny_long_prompt_peak_gb`: peak resident memory (`peakRssGb`) of a child process that loads the
 *   folder and runs TINY_LONG_STEPS (default 1) training steps with `update.recompute` on;
 *   `_no_recompute`: the same with it off (the preset's default: the tape keeps every layer's
 *   activations, linear in the tokens of a mini-batch); `_step_s`: seconds per step of each.
 * - `peak_ratio_2t`: tensor bytes at the peak of one scorer gradient pass (tf.profile, recompute
 *   on, 8 rows) at 2T over the same at T (T = TINY_LONG_T, default 512 tokens): 2 is linear
 *   growth in the sequence length, 4 quadratic.
 * Each child runs on the native backend (tfjs-node) where it starts, else wasm, and says which
 * (wasm keeps its channel attention, which is quadratic in T). Nothing here asserts on time.
 * Also run by `npm run bench -- real-shape`, which repeats `tiny_long_prompt_peak_gb`.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { mergeConfig, presetInput, resolveRunConfig } from '../src/core/config';
import { initBackend } from '../src/core/models/backend';
import { scoreHf } from '../src/core/models/hf/logprobs';
import { HfModel } from '../src/core/models/hf/model';
import { openTensorSource } from '../src/core/models/hf/safetensorsFile';
import { readHfConfig } from '../src/core/models/hf/config';
import { mulberry32 } from '../src/core/models/random';
import { Trainer } from '../src/core/train/trainer';
import { headline, keyValues } from './lib';

const FIXTURE = resolve(__dirname, '../test/fixtures/hf/qwen3-tiny');
const env = (name: string, dflt: number) => (process.env[name] !== undefined ? Number(process.env[name]) : dflt);

/** A copy of the fixture with max_position_embeddings 4096 (chat prompts with the roles' system messages run to ~700 byte tokens). */
function tinyFolder(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'srpo-tiny-long-')), 'qwen3-tiny');
  cpSync(FIXTURE, dir, { recursive: true });
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ ...(JSON.parse(readFileSync(file, 'utf8')) as object), max_position_embeddings: 4096 }, null, 2));
  return dir;
}

/** Starts native where it can, as real-shape does (the runner's SRPO_LAB_BACKEND=wasm default does not apply: this bench is about the native kernels). */
async function start(): Promise<string> {
  try {
    return (await initBackend({ requested: 'node' })).name;
  } catch (err) {
    console.log(`native backend unavailable (${(err as Error).message.split('\n')[0]}): wasm`);
    return (await initBackend({ requested: 'wasm' })).name;
  }
}

/**
 * This process's peak resident memory, GB: Linux's VmHWM (the high-water mark of this process's
 * own address space). Not getrusage's maxRSS there: the kernel carries a forked child's maxRSS
 * over from its parent's address space at exec, so a child of real-shape's 6 GB process
 * reported 5 GB whatever it used itself. Elsewhere maxRSS.
 */
function peakRssGb(): number {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (kb) return Number(kb) / 1e6;
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS / 1e6; // KB
}

/** Child: TINY_LONG_STEPS training steps of the run; prints `backend=`, `step_s=` and `peak_rss_gb=`. */
async function runChild(recompute: boolean): Promise<void> {
  const backend = await start();
  const dir = tinyFolder();
  const steps = env('TINY_LONG_STEPS', 1);
  const input = mergeConfig(presetInput('math-ablation'), {
    steps,
    policies: { init: dir, sharing: 'shared', adapter: { kind: 'lora', r: 2, alpha: 4, targetModules: ['q_proj', 'v_proj', 'down_proj'] } },
    tasks: { train: ['arith-chain'], eval: ['arith-chain'] },
    rollout: { tasksPerStep: 8, groupSize: 4, maxNewTokens: 32, temperature: 1 },
    update: { epochs: 2, miniBatches: 2, recompute },
    eval: { every: 0, n: 4, queries: 40 },
    checkpointEvery: 0,
    backend: backend === 'node' ? 'node' : 'wasm',
  });
  const trainer = new Trainer({ config: resolveRunConfig(input), runDir: mkdtempSync(join(tmpdir(), 'srpo-tiny-long-run-')), baseDir: '/' });
  const t0 = performance.now();
  for (let s = 0; s < steps; s++) await trainer.step(s);
  const stepS = (performance.now() - t0) / 1000 / steps;
  trainer.dispose();
  rmSync(dir, { recursive: true, force: true });
  console.log(`backend=${backend} step_s=${stepS.toFixed(2)} peak_rss_gb=${peakRssGb().toFixed(3)}`);
}

/** Peak tensor bytes of one scorer gradient pass (recompute on) over `rows` rows of T tokens (T - 32 prompt, 32 completion). */
async function passPeak(model: HfModel, rows: number, T: number): Promise<number> {
  const rand = mulberry32(T);
  const ids = (n: number) => Array.from({ length: n }, () => 1 + Math.floor(rand() * 299));
  const pairs = Array.from({ length: rows }, () => ({ prompt: ids(T - 32), completion: ids(32) }));
  const vars = model.variables();
  const start = tf.memory().numBytes;
  const info = await tf.profile(() => {
    const { value, grads } = tf.variableGrads(() => tf.sum(scoreHf(model, pairs).logp) as tf.Scalar, vars);
    tf.dispose([value, ...Object.values(grads)]);
  });
  return info.peakBytes - start;
}

/** Child: peak bytes at T and 2T; prints `peak_ratio_2t=`. */
async function ratioChild(): Promise<void> {
  const backend = await start();
  const dir = tinyFolder();
  const source = openTensorSource(dir);
  const model = HfModel.fromSource(readHfConfig(dir), source, { trainable: 'lora', recompute: true });
  source.close?.();
  model.addAdapter('default', { r: 2, alpha: 4, rslora: false, targetModules: ['q_proj', 'v_proj', 'down_proj'], dropout: 0 }, 1);
  const T = env('TINY_LONG_T', 512);
  const at = await passPeak(model, 8, T);
  const at2 = await passPeak(model, 8, 2 * T);
  model.dispose();
  rmSync(dir, { recursive: true, force: true });
  console.log(`backend=${backend} peak_t_mb=${(at / 1e6).toFixed(1)} peak_2t_mb=${(at2 / 1e6).toFixed(1)} peak_ratio_2t=${(at2 / at).toFixed(3)}`);
}

/** Runs this file as a child in `mode`; its last line's key=value pairs. */
function child(mode: string): Record<string, string> {
  const r = spawnSync(process.execPath, ['--import', 'tsx', __filename], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, TINY_LONG_MODE: mode },
  });
  const last = (r.stdout ?? '').trim().split('\n').pop() ?? '';
  if (r.status !== 0) throw new Error(`tiny-long-prompt child "${mode}" failed (exit ${r.status}): ${last}`);
  console.log(`  ${mode}: ${last}`);
  return keyValues(last);
}

/** `tiny_long_prompt_peak_gb` alone (one child, recompute on): what real-shape.bench.ts repeats. */
export function tinyLongPromptPeakGb(): number {
  return Number(child('recompute').peak_rss_gb);
}

/** The bench's figures (three children, one after the other). */
export function tinyLongPromptFigures(): Record<string, number | string> {
  const on = child('recompute');
  const off = child('no-recompute');
  const ratio = child('ratio');
  return {
    backend: on.backend,
    tiny_long_prompt_peak_gb: Number(on.peak_rss_gb),
    tiny_long_prompt_peak_gb_no_recompute: Number(off.peak_rss_gb),
    tiny_long_prompt_step_s: Number(on.step_s),
    tiny_long_prompt_step_s_no_recompute: Number(off.step_s),
    peak_ratio_2t: Number(ratio.peak_ratio_2t),
  };
}

const MODES: Record<string, () => Promise<void>> = {
  recompute: () => runChild(true),
  'no-recompute': () => runChild(false),
  ratio: ratioChild,
};

async function main(): Promise<void> {
  const mode = process.env.TINY_LONG_MODE;
  if (mode) {
    if (!Object.hasOwn(MODES, mode)) throw new Error(`TINY_LONG_MODE "${mode}": known ${Object.keys(MODES).join(', ')}`);
    await MODES[mode]();
    return;
  }
  headline('tiny-long-prompt', tinyLongPromptFigures());
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
