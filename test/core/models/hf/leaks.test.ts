// Leak tests of the HF family (STYLE.md 7): forward, KV sampling, full sampling, scoring and a
// LoRA gradient step leave tf.memory().numTensors unchanged; a load that fails at any point
// (a bad declared shape, a tensor whose data is short, a LoRA pair for another base) leaves no
// tensor behind, and dispose() frees everything a load created.
import * as tf from '@tensorflow/tfjs';
import { afterAll, describe, expect, it } from 'vitest';
import { HfModel, KV_CHUNK } from '../../../../src/core/models/hf/model';
import { scoreHf, scoreHfData } from '../../../../src/core/models/hf/logprobs';
import { sampleHf } from '../../../../src/core/models/hf/sampler';
import { memorySource, randomHfConfig, randomIds, randomLora, randomQwen2Config, randomWeights, weightShapes } from './randomModel';

describe('no tensor leaks', () => {
  const config = randomHfConfig();
  const lora = randomLora(config, 2, 0.5, 1);
  const model = HfModel.fromSource(config, memorySource(config, randomWeights(config, 1)), { lora, trainable: true });
  afterAll(() => model.dispose());
  const prompts = [randomIds(3, 1), randomIds(7, 2)];
  const pairs = prompts.map((p, i) => ({ prompt: p, completion: randomIds(5, 10 + i) }));

  it('forward', () => {
    tf.dispose(model.forward(tf.tensor2d(prompts[1], [1, 7], 'int32'))); // warm-up
    const n = tf.memory().numTensors;
    const ids = tf.tensor2d(prompts[1], [1, 7], 'int32');
    tf.dispose([model.forward(ids), ids]);
    expect(tf.memory().numTensors).toBe(n);
  });

  it('sampling (KV cache and full), including a row that stops early', () => {
    sampleHf(model, prompts, { maxNewTokens: 2, seed: 1 }); // warm-up
    const n = tf.memory().numTensors;
    const greedy = sampleHf(model, prompts, { maxNewTokens: 4, temperature: 0, seed: 2 });
    sampleHf(model, prompts, { maxNewTokens: 6, seed: 2, stopIds: [greedy[0].ids[1]], temperature: 0 });
    sampleHf(model, prompts, { maxNewTokens: 6, seed: 2, decode: 'full' });
    model.kvChunk = 2; // several cache chunks, aliased from step to step
    sampleHf(model, prompts, { maxNewTokens: 7, seed: 3 });
    model.kvChunk = KV_CHUNK;
    expect(tf.memory().numTensors).toBe(n);
  });

  it('scoring, chunked and not', () => {
    const n = tf.memory().numTensors;
    scoreHfData(model, pairs);
    scoreHfData(model, pairs, { chunkRows: 3, entropy: true });
    const s = scoreHf(model, pairs, { entropy: true });
    tf.dispose([s.logp, s.entropy, s.mask]);
    expect(tf.memory().numTensors).toBe(n);
  });

  it('a LoRA gradient step through scoring (optimizer slots made first)', () => {
    const opt = tf.train.adam(1e-3);
    const loss = () => tf.neg(tf.sum(scoreHf(model, pairs).logp)) as tf.Scalar;
    opt.minimize(loss, false, model.variables());
    const n = tf.memory().numTensors;
    opt.minimize(loss, false, model.variables());
    expect(tf.memory().numTensors).toBe(n);
    opt.dispose();
  });
});

describe('peak memory', () => {
  it("prefill frees each layer's attention before the next layer (peak beyond the cache does not grow with depth)", async () => {
    // Attention-heavy shape: T = 48, 4 heads, d = 16, so a layer's [T, B*H, T] blocks dwarf its rows.
    const peakBeyondCache = async (numLayers: number) => {
      const config = randomHfConfig({ numLayers });
      const model = HfModel.fromSource(config, memorySource(config, randomWeights(config, 1)));
      try {
        const ids = tf.tensor2d(randomIds(2 * 48, 3), [2, 48], 'int32');
        const start = tf.memory().numBytes;
        let cacheBytes = 0;
        const info = await tf.profile(() => {
          const out = model.prefill(ids, [0, 0]);
          cacheBytes = [...out.cache.k.flat(), ...out.cache.v.flat(), out.logits].reduce((s, t) => s + t.size * 4, 0);
          tf.dispose([out.logits, ...out.cache.k, ...out.cache.v]);
        });
        ids.dispose();
        return info.peakBytes - start - cacheBytes;
      } finally {
        model.dispose();
      }
    };
    const two = await peakBeyondCache(2);
    const eight = await peakBeyondCache(8);
    expect(two).toBeGreaterThan(0);
    expect(eight).toBeLessThan(1.5 * two); // one scope for the whole stack would hold ~4x
  });
});

describe('loading', () => {
  const config = randomQwen2Config();

  it('dispose() frees every tensor the load created', () => {
    const n = tf.memory().numTensors;
    const model = HfModel.fromSource(config, memorySource(config, randomWeights(config, 2)), { lora: randomLora(config, 2, 1, 2) });
    expect(tf.memory().numTensors).toBeGreaterThan(n + weightShapes(config).length);
    model.dispose();
    expect(tf.memory().numTensors).toBe(n);
  });

  it('a tensor of the wrong shape fails before anything is read, naming the tensor', () => {
    const n = tf.memory().numTensors;
    const source = memorySource(config, randomWeights(config, 2), { 'model.layers.1.self_attn.k_proj.weight': [5, 16] });
    expect(() => HfModel.fromSource(config, source)).toThrow(/model\.layers\.1\.self_attn\.k_proj\.weight/);
    expect(tf.memory().numTensors).toBe(n);
  });

  it('a tensor whose data is short, found while streaming, leaves nothing half-loaded', () => {
    const weights = randomWeights(config, 2);
    const name = 'model.layers.1.mlp.up_proj.weight';
    const source = memorySource(config, weights);
    const get = source.get.bind(source);
    source.get = (n: string) => {
      const e = get(n);
      return e && n === name ? { ...e, read: () => e.read().subarray(0, 10) } : e;
    };
    const n = tf.memory().numTensors;
    expect(() => HfModel.fromSource(config, source)).toThrow(new RegExp(`${name.replace(/\./g, '\\.')}.*10 values`));
    expect(source.reads.length).toBeGreaterThan(5); // it failed part-way, after creating earlier tensors
    expect(tf.memory().numTensors).toBe(n);
  });

  it('a LoRA pair made for another base fails after the base loaded, and leaves nothing', () => {
    const other = randomHfConfig({ hiddenSize: 24 });
    const n = tf.memory().numTensors;
    expect(() => HfModel.fromSource(config, memorySource(config, randomWeights(config, 2)), { lora: randomLora(other, 2, 1, 1) })).toThrow(/another base/);
    expect(tf.memory().numTensors).toBe(n);
  });
});
