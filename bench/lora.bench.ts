/**
 * `lora`: a LoRA training step against full fine-tuning of the same Hugging Face model
 * (src/core/models/hf) on the same batch. Qwen3-shaped, sized for these machines: hidden 512,
 * 4 layers, 8 query heads x 64 over 4 KV heads, q/k norms, SwiGLU 1536, vocabulary 16384, tied
 * head (21M parameters, 84 MB of float32 weights); random weights from an in-memory source; a
 * batch of 2 rows x 64 completion tokens (1-token prompts).
 *
 * A step = forward + backward (scoreHf log-probs, loss = -sum) + an Adam update (tf.train.adam:
 * two moments per parameter, the same state as the lab's AdamW) over the trainable variables:
 * the adapter's factors (r = 16 on every linear, base frozen) or every base weight.
 * Headline:
 * - `lora_step_ratio` = LoRA step time / full fine-tuning step time (median of 3 after a
 *   warm-up; goal <= 0.8). `_cpu`: the same from this process's CPU time (the machine is shared).
 * - `lora_memory_ratio` = peak tensor bytes of the LoRA step / of the full step, everything live
 *   counted (weights, trainable factors, gradients, Adam moments, activations; tf.profile
 *   peakBytes over the bytes live before the model was made; goal <= 0.5).
 * - `roles_memory_ratio`: the per-role regime's resident bytes (weights + optimizer state after a
 *   step) of 3 adapters over ONE base, against 3 full models each with its Adam state.
 * - `lora_recompute_memory_ratio` / `lora_recompute_step_ratio`: the LoRA step with per-layer
 *   recomputation against the LoRA step without (memory saved, time paid).
 * Times are medians; nothing here asserts on time.
 */
import * as tf from '@tensorflow/tfjs';
import { scoreHf } from '../src/core/models/hf/logprobs';
import { HfModel, type HfAdapterConfig } from '../src/core/models/hf/model';
import type { HfModelConfig, TensorEntry, TensorSource } from '../src/core/models/hf/types';
import { expectedWeights } from '../src/core/models/hf/weights';
import { mulberry32 } from '../src/core/models/random';
import { benchBackend, headline, median } from './lib';

const CONFIG: HfModelConfig = {
  architecture: 'qwen3',
  vocabSize: 16384,
  hiddenSize: 512,
  intermediateSize: 1536,
  numLayers: 4,
  numHeads: 8,
  numKvHeads: 4,
  headDim: 64,
  rmsNormEps: 1e-6,
  rope: { type: 'default', theta: 1e6 },
  maxPositions: 1024,
  tieWordEmbeddings: true,
  attentionBias: false,
  qkNorm: true,
  dtype: 'F32',
  bosTokenId: null,
  eosTokenIds: [],
};
const ADAPTER: HfAdapterConfig = { r: 16, alpha: 32, rslora: false, targetModules: ['all-linear'], dropout: 0 };
const B = 2;
const T = 64;

/** Seeded random weights in the checkpoint's names and shapes, read on demand (as a file source would). */
function randomSource(c: HfModelConfig): TensorSource {
  const shapes = new Map(expectedWeights(c).map((w) => [w.name, w.shape]));
  return {
    origin: 'memory://lora-bench',
    names: () => [...shapes.keys()],
    get(name: string): TensorEntry | undefined {
      const shape = shapes.get(name);
      if (!shape) return undefined;
      return {
        name,
        dtype: 'F32',
        shape,
        file: 'memory://lora-bench/model.safetensors',
        read: () => {
          const rand = mulberry32([...name].reduce((h, ch) => (h * 31 + ch.charCodeAt(0)) >>> 0, 7));
          const n = shape.reduce((a, b) => a * b, 1);
          const norm = name.endsWith('norm.weight');
          const std = norm ? 0.1 : 1 / Math.sqrt(shape[shape.length - 1]);
          return Float32Array.from({ length: n }, () => (norm ? 1 : 0) + (rand() - 0.5) * 2 * Math.sqrt(3) * std);
        },
      };
    },
  };
}

function timed(fn: () => void): { ms: number; cpu: number } {
  const c = process.cpuUsage();
  const t = performance.now();
  fn();
  const d = process.cpuUsage(c);
  return { ms: performance.now() - t, cpu: (d.user + d.system) / 1e3 };
}

type Case = { ms: number; cpu: number; peakBytes: number; residentBytes: number };

/**
 * Builds a model, runs a warm-up step (Adam's moments exist after it), then times 3 steps and profiles one.
 * Tests: none (a benchmark); the API it drives is tested in test/core/models/hf/adapters.test.ts.
 */
async function measure(label: string, kind: 'lora' | 'full', recompute: boolean, pairs: { prompt: number[]; completion: number[] }[]): Promise<Case> {
  const before = tf.memory().numBytes;
  const model = HfModel.fromSource(CONFIG, randomSource(CONFIG), { trainable: kind === 'lora' ? 'lora' : true, recompute });
  const opt = tf.train.adam(1e-4);
  try {
    if (kind === 'lora') model.addAdapter('role', ADAPTER, 1);
    const vars = kind === 'lora' ? model.adapterVariables('role') : model.variables();
    const step = () => {
      const loss = opt.minimize(() => tf.neg(tf.sum(scoreHf(model, pairs, { adapter: kind === 'lora' ? 'role' : null }).logp)) as tf.Scalar, true, vars)!;
      loss.dataSync(); // waits for the device
      loss.dispose();
    };
    step();
    const residentBytes = tf.memory().numBytes - before;
    const runs = [timed(step), timed(step), timed(step)];
    const prof = await tf.profile(step);
    const out = { ms: median(runs.map((r) => r.ms)), cpu: median(runs.map((r) => r.cpu)), peakBytes: prof.peakBytes - before, residentBytes };
    console.log(
      `${label}: step ${out.ms.toFixed(0)} ms (cpu ${out.cpu.toFixed(0)}), peak ${(out.peakBytes / 1e6).toFixed(1)} MB, resident after a step ${(residentBytes / 1e6).toFixed(1)} MB, ${vars.reduce((s, v) => s + v.size, 0)} trainable parameters`,
    );
    return out;
  } finally {
    opt.dispose();
    model.dispose();
  }
}

/** Resident bytes (weights + factors + Adam moments after one step each) of the per-role regime. */
function rolesResident(kind: 'lora' | 'full', roles: number, pairs: { prompt: number[]; completion: number[] }[]): number {
  const before = tf.memory().numBytes;
  const models: HfModel[] = [];
  const opts: tf.Optimizer[] = [];
  try {
    const base = kind === 'lora' ? HfModel.fromSource(CONFIG, randomSource(CONFIG), { trainable: 'lora' }) : null;
    if (base) models.push(base);
    for (let r = 0; r < roles; r++) {
      const model = base ?? HfModel.fromSource(CONFIG, randomSource(CONFIG), { trainable: true });
      if (!base) models.push(model);
      if (base) base.addAdapter(`role${r}`, ADAPTER, r);
      const vars = base ? base.adapterVariables(`role${r}`) : model.variables();
      const opt = tf.train.adam(1e-4);
      opts.push(opt);
      const loss = opt.minimize(() => tf.neg(tf.sum(scoreHf(model, pairs, { adapter: base ? `role${r}` : null }).logp)) as tf.Scalar, true, vars)!;
      loss.dispose();
    }
    return tf.memory().numBytes - before;
  } finally {
    for (const o of opts) o.dispose();
    for (const m of models) m.dispose();
  }
}

async function main(): Promise<void> {
  await benchBackend();
  const rand = mulberry32(3);
  const ids = (n: number) => Array.from({ length: n }, () => 3 + Math.floor(rand() * (CONFIG.vocabSize - 3)));
  const pairs = Array.from({ length: B }, () => ({ prompt: ids(1), completion: ids(T) }));
  const lora = await measure('LoRA r=16 all linears', 'lora', false, pairs);
  const full = await measure('full fine-tuning', 'full', false, pairs);
  const loraRe = await measure('LoRA r=16, per-layer recomputation', 'lora', true, pairs);
  const roles = 3;
  const rolesLora = rolesResident('lora', roles, pairs);
  const rolesFull = rolesResident('full', roles, pairs);
  console.log(
    `per-role, ${roles} roles: adapters over one base ${(rolesLora / 1e6).toFixed(1)} MB resident, ${roles} full models ${(rolesFull / 1e6).toFixed(1)} MB`,
  );
  headline('lora', {
    lora_step_ratio: lora.ms / full.ms,
    lora_step_ratio_cpu: lora.cpu / full.cpu,
    lora_memory_ratio: lora.peakBytes / full.peakBytes,
    roles_memory_ratio: rolesLora / rolesFull,
    lora_recompute_memory_ratio: loraRe.peakBytes / lora.peakBytes,
    lora_recompute_step_ratio: loraRe.ms / lora.ms,
    lora_step_ms: lora.ms,
    full_step_ms: full.ms,
  });
}

void main();
