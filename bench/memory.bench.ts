/**
 * `memory`: two measurements of tensor bytes (tf.profile peakBytes), on the backend the runner
 * names (wasm by default; `SRPO_LAB_BACKEND=node` for the native one).
 *
 * - `tiny_peak_mb`, `small_peak_mb`: peak during one training step (forward + backward + Adam,
 *   32 x 64 tokens: models/hf/supervised.ts `supervisedStep`) per preset, each its seeded lab
 *   folder loaded trainable (full fine-tuning, as a run with `policies.init` null trains it),
 *   all live tensors counted (weights and Adam slots included, after one warm-up step so the
 *   slots exist). In MB (1e6 bytes).
 * - `tape_vs_estimate_<shape>`: the peak of one gradient pass of the scorer, never in row blocks
 *   (full fine-tuning, minus the bytes live before it), over the rows and lengths of the quick
 *   presets' mini-batches and two preset shapes / models/hf/memory.ts `trainingPeakBytes` under
 *   this backend's tape profile. At most 1 means the estimate bounds the pass, as the tape budget
 *   assumes; `tape_vs_estimate_max` is the largest. These set `TAPE_PROFILES`' layer factors.
 *
 * `MEMORY_BENCH_ROWS` sets the rows of the first part (default 32) and, when set, caps those of
 * the second (a small value only checks that the bench runs). What memory.ts predicts is also tested in
 * test/core/models/hf/memory.test.ts.
 */
import * as tf from '@tensorflow/tfjs';
import type { ModelConfigInput, ModelPresetName } from '../src/core/models/config';
import { labModelDir } from '../src/core/models/hf/labCache';
import { loadHfModel } from '../src/core/models/hf/load';
import { scoreHf } from '../src/core/models/hf/logprobs';
import { tapeProfileOf, trainingPeakBytes } from '../src/core/models/hf/memory';
import { supervisedStep } from '../src/core/models/hf/supervised';
import { labPresetShape, loadLabPreset, supervisedBatch } from './labModel';
import { benchBackend, headline } from './lib';

const ROWS = Number(process.env.MEMORY_BENCH_ROWS ?? 32);
/** Cap on the rows of the passes: only when MEMORY_BENCH_ROWS is set (a quick check). */
const PASS_ROWS_CAP = process.env.MEMORY_BENCH_ROWS ? ROWS : Infinity;

/** Shapes of one gradient pass: a lab model shape (overrides of the tiny preset), rows, tokens per row. */
const PASSES: Record<string, { model: Partial<ModelConfigInput>; rows: number; T: number }> = {
  // math-quick's mini-batch: d64 x 2, 2 heads, ~65 rows of ~224 tokens.
  math: { model: { dModel: 64, nLayers: 2, nHeads: 2, contextLength: 512 }, rows: 65, T: 224 },
  // search-quick's: the same with 4 heads, ~48 rows of ~296 tokens.
  search: { model: { dModel: 64, nLayers: 2, nHeads: 4, contextLength: 512 }, rows: 48, T: 296 },
  tiny: { model: {}, rows: 16, T: 200 },
  small: { model: { dModel: 256, nLayers: 6, nHeads: 8, contextLength: 512 }, rows: 16, T: 128 },
};

async function peakMb(preset: ModelPresetName): Promise<number> {
  const loaded = loadLabPreset(preset, { trainable: true });
  const batch = supervisedBatch(ROWS, 64, 5);
  const opt = tf.train.adam(1e-4);
  supervisedStep(loaded.model, batch, opt);
  const before = tf.memory().numBytes;
  const info = await tf.profile(() => {
    supervisedStep(loaded.model, batch, opt);
  });
  console.log(`${preset}: live before ${(before / 1e6).toFixed(1)} MB, peak ${(info.peakBytes / 1e6).toFixed(1)} MB`);
  opt.dispose();
  loaded.dispose();
  return info.peakBytes / 1e6;
}

/** Peak bytes of one unblocked gradient pass / the estimate under this backend's profile. */
async function tapeVsEstimate(name: string, backend: string): Promise<number> {
  const { model, rows: fullRows, T } = PASSES[name];
  const rows = Math.min(fullRows, PASS_ROWS_CAP);
  const loaded = loadHfModel(labModelDir(labPresetShape('tiny', model), 1234), { trainable: true });
  const m = loaded.model;
  const pairs = supervisedBatch(rows, T - 1, 5); // a 1-token prompt: T tokens a row
  const pass = () => {
    const { value, grads } = tf.variableGrads(() => {
      const s = scoreHf(m, pairs, { passBytes: 0 });
      tf.dispose([s.entropy, s.mask]);
      return tf.neg(tf.sum(s.logp)) as tf.Scalar;
    }, m.variables());
    value.dataSync();
    tf.dispose([value, ...Object.values(grads)]);
  };
  try {
    pass(); // warm-up
    const before = tf.memory().numBytes;
    const peak = (await tf.profile(pass)).peakBytes - before;
    const est = trainingPeakBytes(m.config, { tokens: rows * T, seqLen: T, recompute: false, profile: tapeProfileOf(backend) });
    console.log(
      `${name} pass (${rows} x ${T} tokens): peak ${(peak / 1e6).toFixed(0)} MB, estimate ${(est / 1e6).toFixed(0)} MB (${tapeProfileOf(backend)} profile)`,
    );
    return peak / est;
  } finally {
    loaded.dispose();
  }
}

async function main(): Promise<void> {
  const backend = (await benchBackend()).tfjsBackend;
  const tiny = await peakMb('tiny');
  const small = await peakMb('small');
  const ratios: Record<string, number> = {};
  for (const name of Object.keys(PASSES)) ratios[`tape_vs_estimate_${name}`] = await tapeVsEstimate(name, backend);
  headline('memory', { tiny_peak_mb: tiny, small_peak_mb: small, ...ratios, tape_vs_estimate_max: Math.max(...Object.values(ratios)) });
}

void main();
