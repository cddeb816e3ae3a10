/**
 * The lab's own models for the benches that measure them (sampler, train-step, memory, rollout):
 * a size preset of models/config.ts as the seeded lab folder a run with `policies.init` null
 * trains (models/hf/labCache.ts `labModelDir`, written once into the lab-model cache), loaded as
 * an HfModel, the one model family. Also the shared pieces of their measurements: random
 * character rows, supervised batches (the step itself is models/hf/supervised.ts `supervisedStep`,
 * the one the lab's warm start runs) and the matmul parameter count of the FLOP figures.
 *
 * Not a benchmark itself (no `.bench.ts`): bench/run.ts does not list it.
 */
import { labShapeOfModel } from '../src/core/config/labShape';
import { modelConfig, type ModelConfigInput, type ModelPresetName } from '../src/core/models/config';
import { labModelDir } from '../src/core/models/hf/labCache';
import type { LabShape } from '../src/core/models/hf/labFolder';
import { loadHfModel, type LoadedHfModel } from '../src/core/models/hf/load';
import type { HfScoredPair } from '../src/core/models/hf/logprobs';
import type { HfModelConfig } from '../src/core/models/hf/types';
import { expectedWeights } from '../src/core/models/hf/weights';
import { mulberry32 } from '../src/core/models/random';
import { CHAR_VOCAB_SIZE, SPECIAL_TOKENS } from '../src/core/models/vocab';

/** The lab shape of a preset with overrides (config/labShape.ts, as a run config reads it). */
export function labPresetShape(preset: ModelPresetName, overrides: Partial<ModelConfigInput> = {}): LabShape {
  return labShapeOfModel(modelConfig(preset, overrides));
}

/** The preset's seeded lab folder, loaded (trainable: every weight a variable, as full fine-tuning). */
export function loadLabPreset(preset: ModelPresetName, o: { trainable: boolean; seed?: number }): LoadedHfModel {
  return loadHfModel(labModelDir(labPresetShape(preset), o.seed ?? 1234), { trainable: o.trainable });
}

/** `n` rows of `len` random ordinary-character ids (no special tokens). */
export function randomCharRows(n: number, len: number, rand: () => number): number[][] {
  const lo = SPECIAL_TOKENS.length;
  return Array.from({ length: n }, () => Array.from({ length: len }, () => lo + Math.floor(rand() * (CHAR_VOCAB_SIZE - lo))));
}

/** `rows` supervised pairs of a 1-token prompt and a `completion`-token completion (the warm-start loss's shape). */
export function supervisedBatch(rows: number, completion: number, seed: number): HfScoredPair[] {
  return randomCharRows(rows, completion, mulberry32(seed)).map((c) => ({ prompt: [1], completion: c }));
}

/**
 * Parameters taking part in matmuls per token: every 2-D weight (the embedding included: a trained
 * embedding is a one-hot product), and the embedding once more when it is also the head.
 */
export function matmulParameterCount(config: HfModelConfig): number {
  const twoD = expectedWeights(config)
    .filter((w) => w.shape.length === 2)
    .reduce((a, w) => a + w.shape[0] * w.shape[1], 0);
  return twoD + (config.tieWordEmbeddings ? config.vocabSize * config.hiddenSize : 0);
}
