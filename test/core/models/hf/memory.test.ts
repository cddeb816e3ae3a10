/**
 * estimateHfMemory: parameter counts of real models (the public config.json of Qwen3-0.6B,
 * Qwen2.5-1.5B and Llama-3.2-1B, read by readHfConfig) equal what transformers counts when it
 * builds each model on the meta device, and LoRA trainable counts equal peft's
 * (test/fixtures/hf-configs/expected.json, made by scripts/fixtures/make_param_count_fixtures.py).
 * The tiny fixture checkpoints (biases, untied head, q/k norms) are counted against the sizes of
 * the tensors actually in their safetensors files. The byte figures follow their stated formulas.
 * trainingPeakBytes: by hand on Qwen3-0.6B, and against a measured LoRA step (tf.profile) in both modes.
 * (Tensor leaks of the family are in leaks.test.ts.)
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readHfConfig } from '../../../../src/core/models/hf/config';
import * as tf from '@tensorflow/tfjs';
import { scoreHf } from '../../../../src/core/models/hf/logprobs';
import {
  blockPlan,
  defaultTapeBudgetBytes,
  estimateHfMemory,
  hfParameterCount,
  loraParameterCount,
  plannedPassBytes,
  scoreChunkRows,
  tapeProfileOf,
  trainingPeakBytes,
} from '../../../../src/core/models/hf/memory';
import { HfModel } from '../../../../src/core/models/hf/model';
import { memorySource, randomHfConfig, randomIds, randomWeights } from './randomModel';
import { openTensorSource } from '../../../../src/core/models/hf/safetensorsFile';

const CONFIGS = resolve(__dirname, '../../../fixtures/hf-configs');
const FIXTURES = resolve(__dirname, '../../../fixtures/hf');
interface Expected {
  models: Record<string, { parameters: number; lora: Record<string, { r: number; target_modules: string[]; trainable: number }> }>;
}
const expected = JSON.parse(readFileSync(join(CONFIGS, 'expected.json'), 'utf8')) as Expected;

describe('estimateHfMemory on real configs (counts from transformers and peft)', () => {
  it('has the three models', () => {
    expect(Object.keys(expected.models).sort()).toEqual(['llama-3.2-1b', 'qwen2.5-1.5b', 'qwen3-0.6b']);
    expect(expected.models['qwen3-0.6b'].parameters).toBe(596_049_920);
  });

  for (const [name, e] of Object.entries(expected.models)) {
    it(`${name}: ${e.parameters} parameters, as transformers builds it`, () => {
      const c = readHfConfig(join(CONFIGS, name));
      expect(hfParameterCount(c)).toBe(e.parameters);
      const est = estimateHfMemory(c);
      expect(est.parameters).toBe(e.parameters);
      expect(est.weightBytes).toBe(e.parameters * 4);
      expect(est.trainableParameters).toBe(e.parameters);
      expect(est.optimizerBytes).toBe(e.parameters * 8);
    });

    for (const [caseName, l] of Object.entries(e.lora)) {
      it(`${name}: LoRA ${caseName} trains ${l.trainable} parameters, as peft counts them`, () => {
        const c = readHfConfig(join(CONFIGS, name));
        expect(loraParameterCount(c, l.r, l.target_modules)).toBe(l.trainable);
        const est = estimateHfMemory(c, { loraR: l.r, targetModules: l.target_modules });
        expect(est.trainableParameters).toBe(l.trainable);
        expect(est.optimizerBytes).toBe(l.trainable * 2 * 4);
        expect(est.lora).toEqual({ r: l.r, targetModules: l.target_modules });
      });
    }
  }

  it('Qwen3-0.6B: KV cache 2 x 28 x 8 x 128 x 4 B per token (234.9 MB per 1k tokens); activations grow with the sequence length', () => {
    const c = readHfConfig(join(CONFIGS, 'qwen3-0.6b'));
    const est = estimateHfMemory(c);
    expect(est.kvCacheBytesPer1kTokens).toBe(2 * 28 * 8 * 128 * 4 * 1024);
    // MODELS.md's rough figure for 0.6B without recomputation: 5-7 GB per 1,024-token sequence, plus the logits.
    expect(est.activationBytesPer1kTokens).toBeGreaterThan(5e9);
    expect(est.activationBytesPer1kTokens).toBeLessThan(10e9);
    expect(estimateHfMemory(c, { seqLen: 4096 }).activationBytesPer1kTokens).toBeGreaterThan(est.activationBytesPer1kTokens);
  });

  it('the minimum never exceeds the lab figure, however large the vocabulary (both chunk the head)', () => {
    const base = readHfConfig(join(CONFIGS, 'qwen3-0.6b'));
    for (const vocabSize of [320, 151_936, 1_000_000, 10_000_000, 100_000_000]) {
      for (const hiddenSize of [32, 1024]) {
        const est = estimateHfMemory({ ...base, vocabSize, hiddenSize });
        expect(est.activationBytesPer1kTokens).toBeLessThanOrEqual(est.labActivationBytesPer1kTokens);
      }
    }
  });

  it('refuses a LoRA target that is not a linear, and a bad rank', () => {
    const c = readHfConfig(join(CONFIGS, 'qwen3-0.6b'));
    expect(() => loraParameterCount(c, 8, ['q_proj', 'lm_head'])).toThrow(/"lm_head" is not a linear of qwen3; valid: q_proj/);
    expect(() => estimateHfMemory(c, { loraR: 0 })).toThrow(/LoRA rank must be a positive integer, got 0/);
  });
});

describe('hfParameterCount on the tiny checkpoints (against the tensors on disk)', () => {
  for (const name of ['qwen3-tiny', 'qwen2-tiny', 'llama-tiny-sharded']) {
    it(`${name}: the count equals the sum of its tensors' sizes`, () => {
      const dir = join(FIXTURES, name);
      const source = openTensorSource(dir);
      let total = 0;
      for (const n of source.names()) total += source.get(n)!.shape.reduce((a, b) => a * b, 1);
      source.close?.();
      expect(hfParameterCount(readHfConfig(dir))).toBe(total);
    });
  }
});

describe('trainingPeakBytes: the lab training step, with and without per-layer recomputation', () => {
  it('Qwen3-0.6B at 1k-token sequences: ~42.8 GB without recomputation, ~2.7 GB with (the head chunk and one layer at a time)', () => {
    const c = readHfConfig(join(CONFIGS, 'qwen3-0.6b'));
    // By hand: per token per layer 6*1024 + 3*2048 + 4*1024 + 4*3072 + 2*16*1024 = 61,440 floats; 28 layers; tape factor 6;
    // head chunk floor(16Mi / 151,936) = 110 rows x 8 blocks x 151,936; rows kept 1024 x 1024.
    const plain = 4 * (1024 * 28 * 61_440 * 6 + 8 * 110 * 151_936 + 1024 * 1024);
    const re = 4 * (1024 * 28 * (1024 + 4 * 128 + 1024) + Math.max(8 * 110 * 151_936, 1024 * 61_440 * 9.5) + 1024 * 1024);
    expect(trainingPeakBytes(c, { tokens: 1024, seqLen: 1024, recompute: false })).toBe(plain);
    expect(trainingPeakBytes(c, { tokens: 1024, seqLen: 1024, recompute: true })).toBe(re);
    const est = estimateHfMemory(c);
    expect(est.labActivationBytesPer1kTokens).toBe(plain);
    expect(est.labRecomputeBytesPer1kTokens).toBe(re);
    expect(plain / re).toBeGreaterThan(10);
  });

  it('a tape budget: a pass over it keeps one block of rows (per-layer recomputation where one row is over); under it, or at 0, nothing changes', () => {
    const c = readHfConfig(join(CONFIGS, 'qwen3-0.6b'));
    const head = 8 * 110 * 151_936;
    const budget = 512 * 2 ** 20;
    // One 1,024-token row keeps 42 GB of layer tape, and 2.7 GB even recomputed per layer: a block of one row, recomputed.
    const re = 4 * (1024 * 28 * (1024 + 4 * 128 + 1024) + Math.max(head, 1024 * 61_440 * 9.5) + 1024 * 1024);
    expect(trainingPeakBytes(c, { tokens: 1024, seqLen: 1024, recompute: false, tapeBudgetBytes: budget })).toBe(re);
    expect(trainingPeakBytes(c, { tokens: 1024, seqLen: 1024, recompute: false, tapeBudgetBytes: 0 })).toBe(4 * (1024 * 28 * 61_440 * 6 + head + 1024 * 1024));
    // 64 rows of 16 tokens: per token per layer 6*1024 + 3*2048 + 4*1024 + 4*3072 + 2*16*16 = 29,184 floats, x 28 layers x 6;
    // a row's tape 16 x 4,902,912 x 4 B = 314 MB: one row per block, the head and the final rows over all 1,024 tokens.
    expect(trainingPeakBytes(c, { tokens: 1024, seqLen: 16, recompute: false, tapeBudgetBytes: budget })).toBe(4 * (16 * 28 * 29_184 * 6 + head + 1024 * 1024));
    expect(blockPlan(c, 16, 64, budget)).toEqual({ rows: 1, layerRecompute: false });
    expect(blockPlan(c, 16, 1, budget)).toBeNull(); // fits: one plain pass
    expect(blockPlan(c, 16, 64, 0)).toBeNull(); // 0: never in blocks
    expect(blockPlan(c, 1024, 1, budget)).toEqual({ rows: 1, layerRecompute: true });
  });

  it("the update's micro-batch estimate: plain rows where one fits the budget, recomputed ones where none does; at most the budget means one block", () => {
    const c = readHfConfig(join(CONFIGS, 'qwen3-0.6b'));
    const budget = 512 * 2 ** 20;
    // 16-token rows: 16 x 28 x 29,184 x 6 x 4 B = 313,786,368 B each, plain (one fits 512 MB).
    expect(plannedPassBytes(c, 16, 1, budget)).toBe(313_786_368);
    expect(plannedPassBytes(c, 16, 2, budget)).toBe(2 * 313_786_368); // over: two rows would run in row blocks
    expect(blockPlan(c, 16, 2, budget)).toEqual({ rows: 1, layerRecompute: false });
    expect(plannedPassBytes(c, 16, 2, 0)).toBe(2 * 313_786_368); // no budget: plain
    // 1,024-token rows: 42 GB plain, so recomputed: 4 x 1024 x (28 x (1024 + 4 x 128 + 1024) + 61,440 x 9.5) = 2,684,354,560 B a row.
    const big = 8 * 2 ** 30;
    expect(plannedPassBytes(c, 1024, 3, big)).toBe(3 * 2_684_354_560); // within 8 GiB: the scorer runs one recomputed pass
    expect(blockPlan(c, 1024, 3, big)).toEqual({ rows: 3, layerRecompute: true });
    expect(plannedPassBytes(c, 1024, 4, big)).toBeGreaterThan(big); // 4 rows would be blocks of 3
    expect(blockPlan(c, 1024, 4, big)).toEqual({ rows: 3, layerRecompute: true });
  });

  it('scoring without a tape: chunks of rows whose widest intermediates stay within ~1 GB, 1 to 64 rows', () => {
    const c = readHfConfig(join(CONFIGS, 'qwen3-0.6b'));
    // Widest per-token width: intermediate 3072 (hidden 1024, q 16 x 128 = 2048); 4 blocks: 256Mi floats / (4 x 3072 x 1024) = 21.3 rows.
    expect(scoreChunkRows(c, 1024)).toBe(21);
    expect(scoreChunkRows(c, 64)).toBe(64); // capped
    expect(scoreChunkRows({ ...c, intermediateSize: 1 << 26 }, 1024)).toBe(1); // at least one row
    // math-quick's model (d64, intermediate 168) at ~210 tokens a row: 64 rows, not 16.
    const math = randomHfConfig({ numLayers: 2, hiddenSize: 64, intermediateSize: 168, vocabSize: 108, numHeads: 2, numKvHeads: 2, headDim: 32 });
    expect(scoreChunkRows(math, 210)).toBe(64);
  });

  it('per backend: the native profile counts its smaller tape (layer factor 4.7) and defaults to 4096 MB, wasm to 512 MB', () => {
    const c = readHfConfig(join(CONFIGS, 'qwen3-0.6b'));
    const head = 8 * 110 * 151_936;
    expect(trainingPeakBytes(c, { tokens: 1024, seqLen: 1024, recompute: false, profile: 'native' })).toBeCloseTo(
      4 * (1024 * 28 * 61_440 * 4.7 + head + 1024 * 1024),
      0,
    );
    expect(estimateHfMemory(c, { profile: 'native' }).labActivationBytesPer1kTokens).toBeCloseTo(4 * (1024 * 28 * 61_440 * 4.7 + head + 1024 * 1024), 0);
    // Recomputed layers are sized alike on both (one layer re-run, measured on wasm).
    expect(trainingPeakBytes(c, { tokens: 1024, seqLen: 1024, recompute: true, profile: 'native' })).toBe(
      trainingPeakBytes(c, { tokens: 1024, seqLen: 1024, recompute: true }),
    );
    expect(tapeProfileOf('tensorflow')).toBe('native');
    expect(tapeProfileOf('wasm')).toBe('wasm');
    expect(tapeProfileOf('cpu')).toBe('wasm');
    expect(defaultTapeBudgetBytes('wasm')).toBe(512 * 2 ** 20);
    expect(defaultTapeBudgetBytes('native')).toBe(4096 * 2 ** 20);
    // 64 rows of 16 tokens: a row's tape 16 x 28 x 29,184 x 4.7 x 4 B = 245.8 MB natively: two rows fit 512 MB (one on wasm, above).
    expect(blockPlan(c, 16, 64, 512 * 2 ** 20, 'native')).toEqual({ rows: 2, layerRecompute: false });
    // math-quick's mini-batch shape (d64 x 2 layers, 2 heads, 65 rows of 224 tokens): blocks on wasm, one pass at the native default.
    const math = randomHfConfig({ numLayers: 2, hiddenSize: 64, intermediateSize: 168, vocabSize: 108, numHeads: 2, numKvHeads: 2, headDim: 32 });
    expect(blockPlan(math, 224, 65, defaultTapeBudgetBytes('wasm'), 'wasm')).toEqual({ rows: 20, layerRecompute: false });
    expect(blockPlan(math, 224, 65, defaultTapeBudgetBytes('native'), 'native')).toBeNull();
  });

  it('follows a measured step within 35% on a small shape, both modes (tf.profile peak over the bytes live before)', async () => {
    const config = randomHfConfig({
      numLayers: 3,
      hiddenSize: 64,
      intermediateSize: 192,
      vocabSize: 512,
      numHeads: 4,
      numKvHeads: 2,
      headDim: 16,
      maxPositions: 128,
    });
    for (const recompute of [false, true]) {
      const model = HfModel.fromSource(config, memorySource(config, randomWeights(config, 1)), { trainable: 'lora', recompute });
      try {
        model.addAdapter('r', { r: 4, alpha: 8, rslora: false, targetModules: ['all-linear'], dropout: 0 }, 1);
        const T = 48;
        const pairs = [0, 1].map((i) => ({ prompt: [1 + i], completion: randomIds(T - 1, 5 + i, 1, 512) }));
        const step = () => {
          const { value, grads } = tf.variableGrads(
            () => tf.neg(tf.sum(scoreHf(model, pairs, { adapter: 'r' }).logp)) as tf.Scalar,
            model.adapterVariables('r'),
          );
          tf.dispose([value, ...Object.values(grads)]);
        };
        step();
        const live = tf.memory().numBytes;
        const peak = (await tf.profile(step)).peakBytes - live;
        const ratio = peak / trainingPeakBytes(config, { tokens: 2 * T, seqLen: T, recompute });
        expect(ratio, `recompute ${recompute}: measured / estimate`).toBeGreaterThan(0.65);
        expect(ratio, `recompute ${recompute}: measured / estimate`).toBeLessThan(1.35);
      } finally {
        model.dispose();
      }
    }
  });
});
