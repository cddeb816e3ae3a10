/**
 * Helpers shared by the benchmarks: backend start-up, timing with warm-up and medians, the
 * headline line, and random Qwen3 weights and LoRA pairs (real-vocabulary shapes) for the
 * Hugging Face benches. Times come from performance.now(); tfjs work is awaited (data()) inside the
 * timed function so the device has finished.
 */
import { initBackend, type BackendReport } from '../src/core/models/backend';
import { HF_LINEAR_MODULES, linearShapes } from '../src/core/models/hf/memory';
import type { HfModelConfig, LoraPair, TensorSource } from '../src/core/models/hf/types';
import { expectedWeights } from '../src/core/models/hf/weights';
import { mulberry32 } from '../src/core/models/random';

export async function benchBackend(): Promise<BackendReport> {
  const report = await initBackend();
  console.log(`backend: ${report.name}` + report.skipped.map((s) => `\n  skipped ${s.name}: ${s.reason}`).join(''));
  return report;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Median milliseconds of `runs` calls after `warmup` untimed ones. */
export async function timeMedian(fn: () => Promise<unknown> | unknown, runs = 7, warmup = 2): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return median(times);
}

/** Prints the headline; must be the benchmark's last line of output. */
export function headline(name: string, values: Record<string, number | string>): void {
  const kv = Object.entries(values)
    .map(([k, v]) => `${k}=${typeof v === 'number' ? +v.toPrecision(4) : v}`)
    .join(' ');
  console.log(`BENCH ${name} ${kv}`);
}

/**
 * The key=value pairs of a line as `headline` prints them (or a child process's last line), values
 * as strings; words without `=` (`BENCH name`) are left out.
 */
export function keyValues(line: string): Record<string, string> {
  return Object.fromEntries(
    line
      .trim()
      .split(/\s+/)
      .filter((w) => w.includes('='))
      .map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]),
  );
}

/** Qwen3's real vocabulary and settings, for config.json files of the benches' random models. */
const QWEN3 = {
  architectures: ['Qwen3ForCausalLM'],
  model_type: 'qwen3',
  vocab_size: 151936,
  max_position_embeddings: 40960,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000,
  tie_word_embeddings: true,
  attention_bias: false,
  bos_token_id: 151643,
  eos_token_id: 151645,
};

/** Real-vocabulary Qwen3 shapes (config.json fields, without torch_dtype). */
export const QWEN3_SHAPES = {
  '42m': { ...QWEN3, hidden_size: 256, intermediate_size: 768, num_hidden_layers: 4, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 64 },
  '0.6b': { ...QWEN3, hidden_size: 1024, intermediate_size: 3072, num_hidden_layers: 28, num_attention_heads: 16, num_key_value_heads: 8, head_dim: 128 },
};

/** Random weights as a tensor source (norms near 1, other tensors uniform with std 1/sqrt(fan-in)), one tensor per read. */
export function randomSource(config: HfModelConfig, seed: number): TensorSource {
  const specs = new Map(expectedWeights(config).map((w) => [w.name, w]));
  return {
    origin: 'random weights',
    names: () => [...specs.keys()],
    get(name) {
      const w = specs.get(name);
      if (!w) return undefined;
      return {
        name,
        dtype: 'F32',
        shape: w.shape,
        file: 'random',
        read() {
          const rand = mulberry32(seed + name.length * 7919 + name.charCodeAt(name.length - 8));
          const n = w.shape.reduce((a, b) => a * b, 1);
          const isNorm = name.endsWith('norm.weight');
          const half = isNorm ? 0.1 * Math.sqrt(3) : Math.sqrt(3 / w.shape[w.shape.length - 1]);
          const out = new Float32Array(n);
          for (let i = 0; i < n; i++) out[i] = (isNorm ? 1 : 0) + (rand() * 2 - 1) * half;
          return out;
        },
      };
    },
  };
}

/** Random LoRA pairs, r on all seven linears of every layer (B non-zero, so the adapter acts), as readLoraAdapter would return them. */
export function randomLora(c: HfModelConfig, r: number): LoraPair[] {
  const rand = mulberry32(5);
  const shapes = linearShapes(c);
  const fill = (n: number, s: number) => Float32Array.from({ length: n }, () => (rand() - 0.5) * s);
  const pairs: LoraPair[] = [];
  for (let l = 0; l < c.numLayers; l++) {
    for (const m of HF_LINEAR_MODULES) {
      const [inF, outF] = shapes[m];
      const kind = ['gate_proj', 'up_proj', 'down_proj'].includes(m) ? 'mlp' : 'self_attn';
      pairs.push({
        target: `model.layers.${l}.${kind}.${m}.weight`,
        a: fill(r * inF, 0.1),
        b: fill(outF * r, 0.01),
        r,
        inFeatures: inF,
        outFeatures: outF,
        scale: 2,
      });
    }
  }
  return pairs;
}
