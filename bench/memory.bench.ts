/**
 * `memory`: peak tensor bytes during one training step (forward + backward + Adam, 32 x 64
 * tokens) per preset, from tf.profile's peakBytes (all live tensors, weights and Adam slots
 * included, after one warm-up step so the slots exist). Headline in MB (1e6 bytes).
 */
import * as tf from '@tensorflow/tfjs';
import { modelConfig, type ModelPresetName } from '../src/core/models/config';
import { mulberry32 } from '../src/core/models/random';
import { Transformer } from '../src/core/models/transformer';
import { trainStep } from '../src/core/models/warmstart';
import { benchBackend, headline } from './lib';

async function peakMb(preset: ModelPresetName): Promise<number> {
  const model = new Transformer(modelConfig(preset));
  const rand = mulberry32(5);
  const batch = Array.from({ length: 32 }, () => ({ prompt: [1], completion: Array.from({ length: 64 }, () => 12 + Math.floor(rand() * 96)) }));
  const opt = tf.train.adam(1e-4);
  trainStep(model, batch, opt);
  const before = tf.memory().numBytes;
  const info = await tf.profile(() => {
    trainStep(model, batch, opt);
  });
  console.log(`${preset}: live before ${(before / 1e6).toFixed(1)} MB, peak ${(info.peakBytes / 1e6).toFixed(1)} MB`);
  opt.dispose();
  model.dispose();
  return info.peakBytes / 1e6;
}

async function main(): Promise<void> {
  await benchBackend();
  const tiny = await peakMb('tiny');
  const small = await peakMb('small');
  headline('memory', { tiny_peak_mb: tiny, small_peak_mb: small });
}

void main();
