/**
 * `one-model`: could the lab's own char-level Transformer (src/core/models/transformer.ts:
 * learned positions, GELU MLP, multi-head attention) become a configuration of the Hugging Face
 * family (src/core/models/hf/model.ts: RoPE, SwiGLU, GQA)? Issue 13, item 7 asks for it only if
 * the wasm speed goals still hold; this measures the speed half, side by side in one run, on
 * the same shapes, with random weights (speed does not depend on them).
 *
 * Shapes (registry `SHAPES`): the quick presets' policies (d64 x 2 layers; math-quick 2 heads,
 * ctx 256, 32 new tokens; search-quick 4 heads, ctx 512, 104 new tokens) and the `small` preset
 * (d256 x 6, 8 heads). The HF twin is Llama-style: the same width, depth, query heads and head
 * width, as many KV heads as query heads (the twin that models/hf/labFolder.ts writes; decision 067), untied head, no q/k norms, the char vocabulary (108
 * rows), and a SwiGLU width of 8d/3 rounded to 8 so its MLP has the GELU MLP's 8d^2 parameters.
 * The HF model is built in memory (test/core/models/hf/randomModel.ts), no files.
 *
 * For each shape, lab and HF alternate (lab, hf, lab, hf ...) so both see the same load:
 * - train: one full fine-tuning step as the trainer runs it (src/core/train/update.ts: the
 *   policy's `score` inside tf.variableGrads, the loss a masked mean of -logp, then AdamW from
 *   src/core/train/optimizer.ts over every weight), on a micro-batch of 48 rows;
 * - sample: KV-cache sampling of 32 prompts, the preset's new tokens, no end token (every row
 *   runs the full length), tokens/s;
 * - score: teacher-forced log-probs and entropies of 32 rows read back, as the policies'
 *   `scoreData` (old / reference log-probs) computes them.
 * Headline: `hf_vs_lab_{train,sample,score}` = lab ms / HF ms on the math-quick shape (> 1: HF
 * is faster), the same with `_search` and `_small` suffixes for the other shapes, `_cpu` forms
 * from this process's CPU time (other processes' load does not inflate it), and
 * `{lab,hf}_train_roofline_frac` on the small shape: matmul FLOP/s of the step (6 x matmul
 * parameters x tokens + 12 x layers x rows x T^2 x d for attention) / FLOP/s of a plain
 * 1024 x 1024 matmul, the train-step bench's goal (>= 0.5); the matmul is timed once per
 * backend, so under load the wall form can exceed 1: read `_cpu` (CPU times of both).
 * Runs on wasm, then on the native backend when it starts (bench/backends.ts), keys prefixed
 * `native_`. Not here: whether the HF twin LEARNS the quick presets (that needs warm starts and
 * 3 seeds of each preset); nothing asserts on time.
 */
import * as tf from '@tensorflow/tfjs';
import { matmulParameterCount, modelConfig, parameterCount, type ModelConfig } from '../src/core/models/config';
import { scoreHf, scoreHfData } from '../src/core/models/hf/logprobs';
import { HfModel } from '../src/core/models/hf/model';
import { sampleHf } from '../src/core/models/hf/sampler';
import type { HfModelConfig } from '../src/core/models/hf/types';
import { scoreCompletions, scoreCompletionsData, type ScoredPair } from '../src/core/models/logprobs';
import { mulberry32 } from '../src/core/models/random';
import { sample } from '../src/core/models/sampler';
import { CHAR_VOCAB_SIZE } from '../src/core/models/vocab';
import { Transformer } from '../src/core/models/transformer';
import { AdamW } from '../src/core/train/optimizer';
import { memorySource, randomHfConfig, randomWeights, weightShapes } from '../test/core/models/hf/randomModel';
import { onWasmThenNative } from './backends';
import { headline, median } from './lib';

const SHAPE_NAMES = ['math', 'search', 'small'] as const;
type ShapeName = (typeof SHAPE_NAMES)[number];

interface Shape {
  lab: ModelConfig;
  /** Rows of the training micro-batch and of the scored batch, prompt and completion tokens. */
  trainRows: number;
  scoreRows: number;
  prompt: number;
  completion: number;
  /** Prompts sampled at once, their length, new tokens per row. */
  sampleRows: number;
  samplePrompt: number;
  newTokens: number;
  /** Timed repetitions of each measurement (medians). */
  runs: number;
}

// The quick presets' model overrides (src/core/config/presets.ts QUICK_MODEL) and rollout sizes:
// math prompts (question, or question + a solver's answer for the verifier) ~40-100 chars,
// search prompts (question + one 100-char document per searcher) ~150-250 chars.
const SHAPES = {
  math: {
    lab: modelConfig('tiny', { dModel: 64, nLayers: 2, nHeads: 2, contextLength: 256 }),
    trainRows: 48,
    scoreRows: 32,
    prompt: 64,
    completion: 32,
    sampleRows: 32,
    samplePrompt: 64,
    newTokens: 32,
    runs: 5,
  },
  search: {
    lab: modelConfig('tiny', { dModel: 64, nLayers: 2, nHeads: 4, contextLength: 512 }),
    trainRows: 48,
    scoreRows: 32,
    prompt: 192,
    completion: 104,
    sampleRows: 32,
    samplePrompt: 192,
    newTokens: 104,
    runs: 3,
  },
  small: {
    lab: modelConfig('small'),
    trainRows: 32,
    scoreRows: 32,
    prompt: 64,
    completion: 64,
    sampleRows: 32,
    samplePrompt: 64,
    newTokens: 64,
    runs: 3,
  },
} satisfies Record<ShapeName, Shape>;

/** The Llama-style HF twin of a lab config (see the header). */
function hfTwin(c: ModelConfig): HfModelConfig {
  const hd = c.dModel / c.nHeads;
  return randomHfConfig({
    architecture: 'llama',
    vocabSize: c.vocabSize,
    hiddenSize: c.dModel,
    intermediateSize: 8 * Math.round((8 * c.dModel) / 3 / 8),
    numLayers: c.nLayers,
    numHeads: c.nHeads,
    numKvHeads: c.nHeads,
    headDim: hd,
    rmsNormEps: c.normEps,
    maxPositions: c.contextLength,
    tieWordEmbeddings: false,
    qkNorm: false,
    attentionBias: false,
  });
}

const hfParams = (c: HfModelConfig) => weightShapes(c).reduce((a, w) => a + w.shape.reduce((x, y) => x * y, 1), 0);
const hfMatmulParams = (c: HfModelConfig) =>
  weightShapes(c)
    .filter((w) => w.shape.length === 2)
    .reduce((a, w) => a + w.shape[0] * w.shape[1], 0);

/** One implementation behind the three measured operations. */
interface Contender {
  trainStep(rows: readonly ScoredPair[]): void;
  sample(prompts: number[][], newTokens: number): void;
  score(rows: readonly ScoredPair[]): void;
  matmulParams: number;
  dispose(): void;
}

/** Masked mean of -logp over the rows' completion tokens, as a scalar; the loss of both step variants. */
function nll(logp: tf.Tensor2D, mask: tf.Tensor2D): tf.Scalar {
  return tf.div(tf.neg(tf.sum(tf.mul(logp, mask))), tf.maximum(tf.sum(mask), 1)) as tf.Scalar;
}

/** Gradients, then AdamW keyed by the variables' own names; one read-back of the loss (as update.ts). */
function step(vars: tf.Variable[], opt: AdamW, loss: () => tf.Scalar): void {
  const { value, grads } = tf.variableGrads(loss, vars);
  opt.apply(new Map(Object.entries(grads)));
  value.dataSync(); // waits for the device
  tf.dispose([value, ...Object.values(grads)]);
}

const ADAMW = { lr: 1e-4, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01 };

const CONTENDERS = {
  lab(shape: Shape): Contender {
    const model = new Transformer(shape.lab);
    const vars = model.variables();
    const opt = new AdamW(new Map(vars.map((v) => [v.name, v])), ADAMW);
    return {
      trainStep: (rows) =>
        step(vars, opt, () => {
          const s = scoreCompletions(model, rows); // entropy and accuracy come along, as LabPolicies.score
          return nll(s.logp, s.mask);
        }),
      sample: (prompts, newTokens) => void sample(model, prompts, { maxNewTokens: newTokens, seed: 1, endId: null }),
      score: (rows) => void scoreCompletionsData(model, rows),
      matmulParams: matmulParameterCount(shape.lab),
      dispose: () => {
        opt.dispose();
        model.dispose();
      },
    };
  },
  hf(shape: Shape): Contender {
    const config = hfTwin(shape.lab);
    const model = HfModel.fromSource(config, memorySource(config, randomWeights(config, 7)), { trainable: true });
    const vars = model.variables();
    const opt = new AdamW(new Map(vars.map((v) => [v.name, v])), ADAMW);
    return {
      trainStep: (rows) =>
        step(vars, opt, () => {
          const s = scoreHf(model, rows);
          return nll(s.logp, s.mask);
        }),
      sample: (prompts, newTokens) => void sampleHf(model, prompts, { maxNewTokens: newTokens, seed: 1, stopIds: [] }),
      score: (rows) => void scoreHfData(model, rows, { entropy: true }),
      matmulParams: hfMatmulParams(config),
      dispose: () => {
        opt.dispose();
        model.dispose();
      },
    };
  },
} satisfies Record<'lab' | 'hf', (shape: Shape) => Contender>;

function randomRows(n: number, len: number, rand: () => number): number[][] {
  return Array.from({ length: n }, () => Array.from({ length: len }, () => 12 + Math.floor(rand() * (CHAR_VOCAB_SIZE - 12))));
}

interface Timing {
  ms: number;
  cpu: number;
}

/** Medians of wall and CPU ms of `runs` alternating calls of a and b, after one untimed call of each. */
function alternate(a: () => void, b: () => void, runs: number): { a: Timing; b: Timing } {
  const once = (fn: () => void) => {
    const c = process.cpuUsage();
    const t = performance.now();
    fn();
    const d = process.cpuUsage(c);
    return { ms: performance.now() - t, cpu: (d.user + d.system) / 1e3 };
  };
  a();
  b();
  const ta: Timing[] = [];
  const tb: Timing[] = [];
  for (let i = 0; i < runs; i++) {
    ta.push(once(a));
    tb.push(once(b));
  }
  const med = (ts: Timing[]) => ({ ms: median(ts.map((t) => t.ms)), cpu: median(ts.map((t) => t.cpu)) });
  return { a: med(ta), b: med(tb) };
}

/** GFLOP/s of a plain 1024 x 1024 matmul, from wall and from CPU time (medians of 6). */
function matmulGflops(): { wall: number; cpu: number } {
  const a = tf.randomNormal([1024, 1024]);
  const b = tf.randomNormal([1024, 1024]);
  const run = () => tf.tidy(() => tf.matMul(a, b)).dataSync(); // waits for the device
  const t = alternate(run, run, 3);
  tf.dispose([a, b]);
  const flop = 2 * 1024 ** 3;
  return { wall: flop / ((t.a.ms + t.b.ms) / 2) / 1e6, cpu: flop / ((t.a.cpu + t.b.cpu) / 2) / 1e6 };
}

async function measure(backend: string): Promise<Record<string, number>> {
  const keys: Record<string, number> = {};
  const peak = matmulGflops();
  console.log(`${backend}: plain 1024x1024 matmul ${peak.wall.toFixed(1)} GFLOP/s (${peak.cpu.toFixed(1)} by CPU time)`);
  for (const name of SHAPE_NAMES) {
    const shape: Shape = SHAPES[name];
    const rand = mulberry32(11);
    const train = randomRows(shape.trainRows, shape.prompt + shape.completion, rand).map((r) => ({
      prompt: r.slice(0, shape.prompt),
      completion: r.slice(shape.prompt),
    }));
    const scored = train.slice(0, shape.scoreRows);
    const prompts = randomRows(shape.sampleRows, shape.samplePrompt, rand);
    const lab = CONTENDERS.lab(shape);
    const hf = CONTENDERS.hf(shape);
    const c = shape.lab;
    console.log(
      `${backend} ${name}: lab d${c.dModel} x ${c.nLayers}, ${c.nHeads} heads, ${parameterCount(c)} params; ` +
        `hf ${hfTwin(c).numKvHeads} KV heads, SwiGLU ${hfTwin(c).intermediateSize}, ${hfParams(hfTwin(c))} params`,
    );
    const tr = alternate(
      () => lab.trainStep(train),
      () => hf.trainStep(train),
      shape.runs,
    );
    const sa = alternate(
      () => lab.sample(prompts, shape.newTokens),
      () => hf.sample(prompts, shape.newTokens),
      shape.runs,
    );
    const sc = alternate(
      () => lab.score(scored),
      () => hf.score(scored),
      shape.runs,
    );
    const trainTokens = shape.trainRows * (shape.prompt + shape.completion);
    const newTokens = shape.sampleRows * shape.newTokens;
    const fmt = (what: string, t: { a: Timing; b: Timing }, per: string) =>
      `  ${what}: lab ${t.a.ms.toFixed(0)} ms (cpu ${t.a.cpu.toFixed(0)}), hf ${t.b.ms.toFixed(0)} ms (cpu ${t.b.cpu.toFixed(0)}) ${per}; lab/hf ${(t.a.ms / t.b.ms).toFixed(2)}`;
    console.log(fmt('train step', tr, `for ${shape.trainRows} x ${shape.prompt + shape.completion} tokens`));
    console.log(
      fmt(
        'sample',
        sa,
        `for ${shape.sampleRows} x ${shape.newTokens} new tokens: lab ${((newTokens / sa.a.ms) * 1e3).toFixed(0)} tok/s, hf ${((newTokens / sa.b.ms) * 1e3).toFixed(0)} tok/s`,
      ),
    );
    console.log(fmt('score', sc, `for ${shape.scoreRows} x ${shape.prompt + shape.completion} tokens`));
    const suffix = name === 'math' ? '' : `_${name}`;
    for (const [what, t] of [
      ['train', tr],
      ['sample', sa],
      ['score', sc],
    ] as const) {
      keys[`hf_vs_lab_${what}${suffix}`] = t.a.ms / t.b.ms;
      keys[`hf_vs_lab_${what}${suffix}_cpu`] = t.a.cpu / t.b.cpu;
    }
    keys[`lab_sample_tok_s${suffix}`] = (newTokens / sa.a.ms) * 1e3;
    keys[`hf_sample_tok_s${suffix}`] = (newTokens / sa.b.ms) * 1e3;
    if (name === 'small') {
      const T = shape.prompt + shape.completion;
      const flops = (p: number) => 6 * p * trainTokens + 12 * c.nLayers * shape.trainRows * T * T * c.dModel;
      keys.lab_train_roofline_frac = flops(lab.matmulParams) / tr.a.ms / 1e6 / peak.wall;
      keys.hf_train_roofline_frac = flops(hf.matmulParams) / tr.b.ms / 1e6 / peak.wall;
      keys.lab_train_roofline_frac_cpu = flops(lab.matmulParams) / tr.a.cpu / 1e6 / peak.cpu;
      keys.hf_train_roofline_frac_cpu = flops(hf.matmulParams) / tr.b.cpu / 1e6 / peak.cpu;
    }
    lab.dispose();
    hf.dispose();
  }
  return keys;
}

async function main(): Promise<void> {
  const { wasm, native } = await onWasmThenNative(measure);
  const prefixed = native ? Object.fromEntries(Object.entries(native).map(([k, v]) => [`native_${k}`, v])) : { native: 'absent' };
  headline('one-model', { ...wasm, ...prefixed });
}

void main();
