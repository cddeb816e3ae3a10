// The tensors each architecture needs (src/core/models/hf/weights.ts): names and shapes equal to
// what transformers itself saved in the fixtures, Qwen3-0.6B's published shapes, and checkWeights'
// errors (missing, misshapen, unknown; a tied lm_head and inv_freq buffers tolerated).
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseHfConfig, readHfConfig } from '../../../../src/core/models/hf/config';
import { openTensorSource } from '../../../../src/core/models/hf/safetensorsFile';
import type { HfModelConfig, TensorEntry, TensorSource } from '../../../../src/core/models/hf/types';
import { attentionBiases, checkWeights, expectedWeights } from '../../../../src/core/models/hf/weights';

const FIXTURES = path.resolve(__dirname, '../../../fixtures/hf');

/** Name -> shape of every tensor a fixture folder holds (as transformers saved it). */
function savedShapes(folder: string): Map<string, number[]> {
  const src = openTensorSource(path.join(FIXTURES, folder));
  const out = new Map(src.names().map((n) => [n, src.get(n)!.shape]));
  src.close();
  return out;
}

/** An in-memory source from name -> shape (reads are never needed by checkWeights). */
function shapesSource(shapes: Map<string, number[]>): TensorSource {
  const entry = (name: string): TensorEntry => ({
    name,
    dtype: 'F32',
    shape: shapes.get(name)!,
    file: '/ckpt/model.safetensors',
    read: () => new Float32Array(0),
  });
  return { origin: '/ckpt', names: () => [...shapes.keys()], get: (n) => (shapes.has(n) ? entry(n) : undefined) };
}

describe('expectedWeights', () => {
  for (const folder of ['qwen3-tiny', 'qwen2-tiny', 'llama-tiny-sharded']) {
    it(`${folder}: exactly the names and shapes transformers saved`, () => {
      const config = readHfConfig(path.join(FIXTURES, folder));
      const saved = savedShapes(folder);
      const expected = expectedWeights(config);
      expect(new Map(expected.map((w) => [w.name, w.shape]))).toEqual(saved);
      expect(expected.length).toBe(saved.size);
    });
  }

  it("Qwen3-0.6B's shapes: q_proj [2048, 1024] on a 1024 model, per-head norms [128], tied (no lm_head), 310 tensors", () => {
    const config = parseHfConfig(
      {
        model_type: 'qwen3',
        vocab_size: 151936,
        hidden_size: 1024,
        intermediate_size: 3072,
        num_hidden_layers: 28,
        num_attention_heads: 16,
        num_key_value_heads: 8,
        head_dim: 128,
        tie_word_embeddings: true,
      },
      'config.json',
    );
    const w = new Map(expectedWeights(config).map((x) => [x.name, x.shape]));
    expect(w.size).toBe(310);
    expect(w.get('model.layers.0.self_attn.q_proj.weight')).toEqual([2048, 1024]);
    expect(w.get('model.layers.0.self_attn.k_proj.weight')).toEqual([1024, 1024]);
    expect(w.get('model.layers.0.self_attn.o_proj.weight')).toEqual([1024, 2048]);
    expect(w.get('model.layers.27.self_attn.k_norm.weight')).toEqual([128]);
    expect(w.get('model.layers.0.mlp.down_proj.weight')).toEqual([1024, 3072]);
    expect(w.has('lm_head.weight')).toBe(false);
    expect(w.has('model.layers.0.self_attn.q_proj.bias')).toBe(false);
  });

  it('biases: qwen2 on q/k/v only; qwen3 and llama with attention_bias on q/k/v and o_proj', () => {
    const base = { vocab_size: 10, hidden_size: 8, intermediate_size: 16, num_hidden_layers: 1, num_attention_heads: 2, head_dim: 4 };
    const qwen2 = parseHfConfig({ ...base, model_type: 'qwen2' }, 'config.json');
    const llama = parseHfConfig({ ...base, model_type: 'llama', attention_bias: true }, 'config.json');
    expect(attentionBiases(qwen2)).toEqual({ qkv: true, o: false });
    expect(attentionBiases(llama)).toEqual({ qkv: true, o: true });
    const names = (c: HfModelConfig) =>
      expectedWeights(c)
        .map((w) => w.name)
        .filter((n) => n.endsWith('.bias'));
    expect(names(qwen2).map((n) => n.split('.').at(-2))).toEqual(['q_proj', 'k_proj', 'v_proj']);
    expect(names(llama).map((n) => n.split('.').at(-2))).toEqual(['q_proj', 'k_proj', 'v_proj', 'o_proj']);
  });
});

describe('checkWeights', () => {
  it('passes on every fixture', () => {
    for (const folder of ['qwen3-tiny', 'qwen2-tiny', 'llama-tiny-sharded']) {
      const dir = path.join(FIXTURES, folder);
      const src = openTensorSource(dir);
      expect(() => checkWeights(readHfConfig(dir), src)).not.toThrow();
      src.close();
    }
  });

  const qwen3 = () => ({ config: readHfConfig(path.join(FIXTURES, 'qwen3-tiny')), shapes: savedShapes('qwen3-tiny') });

  it('a missing tensor names it and its expected shape', () => {
    const { config, shapes } = qwen3();
    shapes.delete('model.layers.1.self_attn.k_norm.weight');
    expect(() => checkWeights(config, shapesSource(shapes))).toThrow(
      /\/ckpt: the weights do not fit config\.json \(qwen3\):\n {2}tensor "model\.layers\.1\.self_attn\.k_norm\.weight" is missing \(expected shape \[16\]\)/,
    );
  });

  it('a wrong shape names the tensor, both shapes and the file', () => {
    const { config, shapes } = qwen3();
    shapes.set('model.layers.0.self_attn.q_proj.weight', [32, 32]);
    expect(() => checkWeights(config, shapesSource(shapes))).toThrow(
      /\/ckpt\/model\.safetensors: tensor "model\.layers\.0\.self_attn\.q_proj\.weight" has shape \[32, 32\], expected \[64, 32\]/,
    );
  });

  it('an unknown tensor is refused, naming it', () => {
    const { config, shapes } = qwen3();
    shapes.set('model.layers.0.self_attn.q_proj.bias', [64]);
    expect(() => checkWeights(config, shapesSource(shapes))).toThrow(
      /tensor "model\.layers\.0\.self_attn\.q_proj\.bias" \(shape \[64\]\) is not part of a qwen3 model with this config\.json/,
    );
  });

  it('tolerates a tied checkpoint that also saved lm_head (same shape) and rotary inv_freq buffers', () => {
    const { config, shapes } = qwen3();
    shapes.set('lm_head.weight', [320, 32]);
    shapes.set('model.layers.0.self_attn.rotary_emb.inv_freq', [8]);
    shapes.set('model.rotary_emb.inv_freq', [8]);
    expect(() => checkWeights(config, shapesSource(shapes))).not.toThrow();
    shapes.set('lm_head.weight', [300, 32]);
    expect(() => checkWeights(config, shapesSource(shapes))).toThrow(/tensor "lm_head\.weight" has shape \[300, 32\], expected \[320, 32\]/);
  });

  it('an untied config needs lm_head', () => {
    const { config, shapes } = qwen3();
    expect(() => checkWeights({ ...config, tieWordEmbeddings: false }, shapesSource(shapes))).toThrow(
      /tensor "lm_head\.weight" is missing \(expected shape \[320, 32\]\)/,
    );
  });

  it('a checkpoint of another architecture lists every problem in one error', () => {
    const config = readHfConfig(path.join(FIXTURES, 'qwen3-tiny'));
    const src = openTensorSource(path.join(FIXTURES, 'qwen2-tiny'));
    try {
      let message = '';
      try {
        checkWeights(config, src);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/q_norm\.weight" is missing/);
      expect(message).toMatch(/self_attn\.q_proj\.weight" has shape \[32, 32\], expected \[64, 32\]/);
      expect(message).toMatch(/q_proj\.bias" \(shape \[32\]\) is not part of a qwen3 model/);
      expect(message).toMatch(/\.\.\. and \d+ more/);
    } finally {
      src.close();
    }
  });
});
