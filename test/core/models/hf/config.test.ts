// config.json / generation_config.json of Hugging Face folders (src/core/models/hf/config.ts):
// the committed fixtures, config.json as transformers 4.57 and 5.18 write it (older rope_theta /
// rope_scaling keys vs rope_parameters: test/fixtures/hf/rope/), published-model shapes, the
// per-architecture defaults, and every refusal naming the file and the key.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseGenerationConfig, parseHfConfig, readGenerationConfig, readHfConfig } from '../../../../src/core/models/hf/config';

const FIXTURES = path.resolve(__dirname, '../../../fixtures/hf');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'srpo-hfconfig-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

interface RopeCase {
  name: string;
  config: Record<string, unknown>;
}
const ropeCases = (major: 4 | 5): RopeCase[] => JSON.parse(fs.readFileSync(path.join(FIXTURES, 'rope', `transformers-${major}.json`), 'utf8')).cases;

/** Qwen3-0.6B's published config.json (older keys: rope_theta, rope_scaling null, torch_dtype). */
const QWEN3_0_6B = {
  architectures: ['Qwen3ForCausalLM'],
  attention_bias: false,
  attention_dropout: 0.0,
  bos_token_id: 151643,
  eos_token_id: 151645,
  head_dim: 128,
  hidden_act: 'silu',
  hidden_size: 1024,
  initializer_range: 0.02,
  intermediate_size: 3072,
  max_position_embeddings: 40960,
  max_window_layers: 28,
  model_type: 'qwen3',
  num_attention_heads: 16,
  num_hidden_layers: 28,
  num_key_value_heads: 8,
  rms_norm_eps: 1e-6,
  rope_scaling: null,
  rope_theta: 1000000,
  sliding_window: null,
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
  transformers_version: '4.51.0',
  use_cache: true,
  use_sliding_window: false,
  vocab_size: 151936,
};

const base = (over: Record<string, unknown> = {}): Record<string, unknown> => ({ ...QWEN3_0_6B, ...over });
const parse = (json: unknown) => parseHfConfig(json, '/models/x/config.json');

describe('config.json', () => {
  it('Qwen3-0.6B (older keys): head_dim 128 on a 1024 model, GQA 16:8, q/k norms, tied, BF16', () => {
    expect(parse(QWEN3_0_6B)).toEqual({
      architecture: 'qwen3',
      vocabSize: 151936,
      hiddenSize: 1024,
      intermediateSize: 3072,
      numLayers: 28,
      numHeads: 16,
      numKvHeads: 8,
      headDim: 128,
      rmsNormEps: 1e-6,
      rope: { type: 'default', theta: 1000000 },
      maxPositions: 40960,
      tieWordEmbeddings: true,
      attentionBias: false,
      qkNorm: true,
      dtype: 'BF16',
      bosTokenId: 151643,
      eosTokenIds: [151645],
    });
  });

  it('Qwen2.5-1.5B-Instruct and Llama-3.2-1B-Instruct (published configs, older keys)', () => {
    const qwen25 = parse({
      architectures: ['Qwen2ForCausalLM'],
      attention_dropout: 0.0,
      bos_token_id: 151643,
      eos_token_id: 151645,
      hidden_act: 'silu',
      hidden_size: 1536,
      initializer_range: 0.02,
      intermediate_size: 8960,
      max_position_embeddings: 32768,
      max_window_layers: 21,
      model_type: 'qwen2',
      num_attention_heads: 12,
      num_hidden_layers: 28,
      num_key_value_heads: 2,
      rms_norm_eps: 1e-6,
      rope_theta: 1000000.0,
      sliding_window: 32768,
      tie_word_embeddings: true,
      torch_dtype: 'bfloat16',
      transformers_version: '4.43.1',
      use_cache: true,
      use_sliding_window: false,
      vocab_size: 151936,
    });
    expect(qwen25).toMatchObject({
      architecture: 'qwen2',
      headDim: 128,
      numKvHeads: 2,
      attentionBias: true,
      qkNorm: false,
      tieWordEmbeddings: true,
      rope: { type: 'default', theta: 1000000 },
    });
    const llama32 = parse({
      architectures: ['LlamaForCausalLM'],
      attention_bias: false,
      attention_dropout: 0.0,
      bos_token_id: 128000,
      eos_token_id: [128001, 128008, 128009],
      head_dim: 64,
      hidden_act: 'silu',
      hidden_size: 2048,
      initializer_range: 0.02,
      intermediate_size: 8192,
      max_position_embeddings: 131072,
      mlp_bias: false,
      model_type: 'llama',
      num_attention_heads: 32,
      num_hidden_layers: 16,
      num_key_value_heads: 8,
      pretraining_tp: 1,
      rms_norm_eps: 1e-5,
      rope_scaling: { factor: 32.0, high_freq_factor: 4.0, low_freq_factor: 1.0, original_max_position_embeddings: 8192, rope_type: 'llama3' },
      rope_theta: 500000.0,
      tie_word_embeddings: true,
      torch_dtype: 'bfloat16',
      transformers_version: '4.45.0.dev0',
      use_cache: true,
      vocab_size: 128256,
    });
    expect(llama32).toMatchObject({
      architecture: 'llama',
      headDim: 64,
      numKvHeads: 8,
      rmsNormEps: 1e-5,
      tieWordEmbeddings: true,
      eosTokenIds: [128001, 128008, 128009],
      bosTokenId: 128000,
    });
    expect(llama32.rope).toEqual({ type: 'llama3', theta: 500000, factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 8192 });
  });

  it('the qwen3-tiny fixture (transformers 5 keys: rope_parameters, dtype)', () => {
    const c = readHfConfig(path.join(FIXTURES, 'qwen3-tiny'));
    expect(c).toMatchObject({
      architecture: 'qwen3',
      hiddenSize: 32,
      numHeads: 4,
      numKvHeads: 2,
      headDim: 16,
      vocabSize: 320,
      tieWordEmbeddings: true,
      qkNorm: true,
      attentionBias: false,
      dtype: 'BF16',
    });
    expect(c.rope).toEqual({ type: 'default', theta: 10000 });
  });

  it('the qwen2-tiny fixture: q/k/v biases, untied, yarn from rope_parameters, F32', () => {
    const c = readHfConfig(path.join(FIXTURES, 'qwen2-tiny'));
    expect(c).toMatchObject({ architecture: 'qwen2', headDim: 8, numKvHeads: 1, attentionBias: true, qkNorm: false, tieWordEmbeddings: false, dtype: 'F32' });
    expect(c.rope).toMatchObject({ type: 'yarn', theta: 1000, factor: 4, originalMaxPositions: 64, truncate: true });
  });

  it('the llama fixture (older keys: rope_theta, rope_scaling, torch_dtype, eos list)', () => {
    const c = readHfConfig(path.join(FIXTURES, 'llama-tiny-sharded'));
    expect(c).toMatchObject({
      architecture: 'llama',
      headDim: 8,
      rmsNormEps: 1e-5,
      dtype: 'F16',
      eosTokenIds: [302, 300],
      bosTokenId: 300,
      qkNorm: false,
      attentionBias: false,
    });
    expect(c.rope).toEqual({ type: 'llama3', theta: 500000, factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 256 });
  });

  it('transformers 4.57 (rope_theta + rope_scaling) and 5.18 (rope_parameters) configs of every RoPE case parse alike', () => {
    const four = ropeCases(4);
    const five = ropeCases(5);
    expect(four.map((c) => c.name)).toEqual(five.map((c) => c.name));
    expect(four.length).toBeGreaterThanOrEqual(8);
    // The two writers really differ in their keys: the test covers both spellings.
    expect(four.every((c) => 'rope_theta' in c.config && !('rope_parameters' in c.config))).toBe(true);
    expect(five.every((c) => 'rope_parameters' in c.config && !('rope_theta' in c.config))).toBe(true);
    four.forEach((c, i) => expect(parse(c.config), c.name).toEqual(parse(five[i].config)));
    const types = new Set(five.map((c) => parse(c.config).rope.type));
    expect([...types].sort()).toEqual(['default', 'linear', 'llama3', 'yarn']);
  });

  it('yarn: every optional key read; an absent factor is max_position_embeddings / original', () => {
    const rope = parse(
      base({
        rope_scaling: {
          rope_type: 'yarn',
          factor: 8,
          original_max_position_embeddings: 512,
          beta_fast: 16,
          beta_slow: 2,
          mscale: 0.7,
          mscale_all_dim: 1,
          attention_factor: 1.2,
          truncate: false,
        },
      }),
    ).rope;
    expect(rope).toEqual({
      type: 'yarn',
      theta: 1000000,
      factor: 8,
      originalMaxPositions: 512,
      betaFast: 16,
      betaSlow: 2,
      mscale: 0.7,
      mscaleAllDim: 1,
      attentionFactor: 1.2,
      truncate: false,
    });
    expect(
      parse(base({ max_position_embeddings: 4096, rope_parameters: { rope_type: 'yarn', rope_theta: 10, original_max_position_embeddings: 1024 } })).rope
        .factor,
    ).toBe(4);
  });

  it('precedence as transformers 5: rope_scaling over rope_parameters, the dict rope_theta over the top-level one; default theta 10000', () => {
    const both = parse(base({ rope_theta: 77, rope_scaling: { type: 'linear', factor: 2 }, rope_parameters: { rope_type: 'default', rope_theta: 99 } }));
    expect(both.rope).toEqual({ type: 'linear', theta: 77, factor: 2 });
    expect(parse(base({ rope_theta: 77, rope_parameters: { rope_type: 'default', rope_theta: 99 } })).rope.theta).toBe(99);
    const { rope_theta: _, ...noTheta } = QWEN3_0_6B;
    expect(parse(noTheta).rope).toEqual({ type: 'default', theta: 10000 });
  });

  it('architecture defaults: qwen2 always biased, qwen3 head_dim 128, llama hidden/heads, kv heads default to heads', () => {
    const qwen2 = parse(base({ model_type: 'qwen2', attention_bias: false, head_dim: undefined }));
    expect(qwen2).toMatchObject({ attentionBias: true, qkNorm: false, headDim: 64 });
    const { head_dim: _h, num_key_value_heads: _k, ...bare } = QWEN3_0_6B;
    expect(parse(bare)).toMatchObject({ headDim: 128, numKvHeads: 16 });
    expect(parse({ ...bare, model_type: 'llama' })).toMatchObject({ headDim: 64, qkNorm: false, attentionBias: false });
    expect(parse(base({ model_type: 'llama', attention_bias: true })).attentionBias).toBe(true);
    expect(parse(base({ attention_bias: true })).attentionBias).toBe(true);
    const { bos_token_id: _b, eos_token_id: _e, ...noIds } = QWEN3_0_6B;
    expect(parse({ ...noIds, model_type: 'llama' })).toMatchObject({ bosTokenId: 1, eosTokenIds: [2] });
    expect(parse(noIds)).toMatchObject({ bosTokenId: null, eosTokenIds: [] });
    expect(parse(base({ torch_dtype: 'float64' })).dtype).toBeNull();
  });

  describe('refusals name the file and the key', () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['unknown model_type', { model_type: 'mistral' }, /config\.json: field "model_type" is "mistral"; supported architectures: qwen3, qwen2, llama/],
      ['missing model_type', { model_type: undefined }, /field "model_type" is undefined/],
      [
        'unknown RoPE type (older key)',
        { rope_scaling: { rope_type: 'dynamic', factor: 2 } },
        /field "rope_scaling\.rope_type" names an unsupported RoPE type "dynamic" \(supported: default, linear, llama3, yarn\)/,
      ],
      ['unknown RoPE type (type key)', { rope_scaling: { type: 'su' } }, /field "rope_scaling\.type" names an unsupported RoPE type "su"/],
      [
        'unknown RoPE type (newer key)',
        { rope_parameters: { rope_type: 'longrope', rope_theta: 1 } },
        /field "rope_parameters\.rope_type" names an unsupported RoPE type "longrope"/,
      ],
      [
        'llama3 without low_freq_factor',
        { rope_scaling: { rope_type: 'llama3', factor: 8, high_freq_factor: 4 } },
        /field "rope_scaling\.low_freq_factor" is missing/,
      ],
      ['linear without factor', { rope_parameters: { rope_type: 'linear', rope_theta: 10 } }, /field "rope_parameters\.factor" is missing/],
      ['missing hidden_size', { hidden_size: undefined }, /field "hidden_size" is missing/],
      ['fractional layers', { num_hidden_layers: 2.5 }, /field "num_hidden_layers" must be a positive integer, got 2\.5/],
      ['kv heads that do not divide', { num_key_value_heads: 5 }, /field "num_key_value_heads" \(5\) must divide num_attention_heads \(16\)/],
      ['odd head_dim', { head_dim: 7 }, /field "head_dim" \(7\) must be even/],
      ['sliding-window attention', { use_sliding_window: true }, /field "use_sliding_window" is true; the qwen3 family here only implements false/],
      [
        'sliding-window layer types (transformers 5)',
        { layer_types: ['full_attention', 'sliding_attention'] },
        /field "layer_types" is \["full_attention","sliding_attention"\]; only "full_attention" layers are implemented/,
      ],
      ['llama MLP biases', { model_type: 'llama', mlp_bias: true }, /field "mlp_bias" is true/],
      ['another activation', { hidden_act: 'gelu' }, /field "hidden_act" is "gelu"/],
      ['partial rotary embeddings', { partial_rotary_factor: 0.5 }, /field "partial_rotary_factor" is 0\.5/],
      ['a string size', { vocab_size: '151936' }, /field "vocab_size" must be a number/],
      ['bad eos ids', { eos_token_id: ['a'] }, /field "eos_token_id" must be a token id or a list of them/],
    ];
    for (const [what, over, pattern] of cases) {
      it(what, () => expect(() => parse(base(over))).toThrow(pattern));
    }
    it('not an object', () => expect(() => parse([1])).toThrow(/config\.json: not a JSON object/));
    it('a missing or non-JSON file', () => {
      expect(() => readHfConfig(path.join(tmp, 'nowhere'))).toThrow(/nowhere\/config\.json: cannot read/);
      fs.writeFileSync(path.join(tmp, 'config.json'), '{"model_type": ');
      expect(() => readHfConfig(tmp)).toThrow(/config\.json: not JSON/);
    });
  });
});

describe('generation_config.json', () => {
  it("the fixture: its eos ids then config.json's, deduplicated, and the sampling fields", () => {
    const dir = path.join(FIXTURES, 'qwen3-tiny');
    const config = readHfConfig(dir);
    expect(config.eosTokenIds).toEqual([300]);
    expect(readGenerationConfig(dir, config)).toEqual({ stopIds: [302, 300], doSample: true, temperature: 0.7, topP: 0.8, topK: 20 });
  });
  it("merges a single id with config.json's list", () => {
    const config = parse(base({ eos_token_id: [1, 2] }));
    expect(parseGenerationConfig({ eos_token_id: 3 }, 'g.json', config).stopIds).toEqual([3, 1, 2]);
  });
  it("absent: the stop ids are config.json's eos ids", () => {
    const config = parse(base({ eos_token_id: [7, 8] }));
    expect(readGenerationConfig(tmp, config)).toEqual({ stopIds: [7, 8] });
  });
  it('bad fields name the file and the key', () => {
    const config = parse(QWEN3_0_6B);
    expect(() => parseGenerationConfig({ top_p: 1.5 }, '/m/generation_config.json', config)).toThrow(
      /generation_config\.json: field "top_p" must be in \(0, 1\]/,
    );
    expect(() => parseGenerationConfig({ top_k: 2.5 }, '/m/generation_config.json', config)).toThrow(/field "top_k"/);
    expect(() => parseGenerationConfig({ eos_token_id: 'x' }, '/m/generation_config.json', config)).toThrow(/field "eos_token_id"/);
    expect(() => parseGenerationConfig({ do_sample: 'yes' }, '/m/generation_config.json', config)).toThrow(/field "do_sample" must be true or false/);
  });
});
