/**
 * `memory`: peak tensor bytes during one training step (forward + backward + Adam, 32 x 64
 * tokens: models/hf/supervised.ts `supervisedStep`) per preset, each its seeded lab folder loaded
 * trainable (full fine-tuning, as a run with `policies.init` null trains it), from tf.profile's
 * peakBytes (all live tensors, weights and Adam slots included, after one warm-up step so the
 * slots exist). Headline in MB (1e6 bytes). What models/hf/memory.ts predicts for such a step is
 * tested in test/core/models/hf/memory.test.ts. `MEMORY_BENCH_ROWS` sets the rows (default 32; a
 * small value only checks that the bench runs).
 */
import * as tf from '@tensorflow/tfjs';
import type { ModelPresetName } from '../src/core/models/config';
import { supervisedStep } from '../src/core/models/hf/supervised';
import { loadLabPreset, supervisedBatch } from './labModel';
import { benchBackend, headline } from './lib';

const ROWS = Number(process.env.MEMORY_BENCH_ROWS ?? 32);

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

async function main(): Promise<void> {
  await benchBackend();
  const tiny = await peakMb('tiny');
  const small = await peakMb('small');
  headline('memory', { tiny_peak_mb: tiny, small_peak_mb: small });
}

void main();
