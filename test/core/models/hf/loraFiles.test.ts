// peft LoRA adapter folders (src/core/models/hf/loraFiles.ts): the committed adapters made by peft
// (plain and rsLoRA scale), and every refusal naming the file and the field or tensor: missing
// files, a target module the model lacks, an adapter made for another base, an A without its B,
// peft features not implemented.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readHfConfig } from '../../../../src/core/models/hf/config';
import { parseLoraConfig, readLoraAdapter } from '../../../../src/core/models/hf/loraFiles';
import { openTensorSource } from '../../../../src/core/models/hf/safetensorsFile';
import { encodeSafetensors, type NamedArray } from '../../../../src/core/models/safetensors';

const FIXTURES = path.resolve(__dirname, '../../../fixtures/hf');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'srpo-hflora-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const qwen3 = readHfConfig(path.join(FIXTURES, 'qwen3-tiny'));
const P = 'base_model.model.model.layers';

/** A copy of a fixture adapter with its config and tensors edited. */
function edited(
  name: string,
  edit: { config?: (c: Record<string, unknown>) => void; tensors?: (t: Map<string, NamedArray>) => void },
  from = 'qwen3-tiny-lora',
): string {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir, { recursive: true });
  const cfg = JSON.parse(fs.readFileSync(path.join(FIXTURES, from, 'adapter_config.json'), 'utf8'));
  edit.config?.(cfg);
  fs.writeFileSync(path.join(dir, 'adapter_config.json'), JSON.stringify(cfg));
  const src = openTensorSource(path.join(FIXTURES, from, 'adapter_model.safetensors'));
  const tensors = new Map(src.names().map((n) => [n, { shape: src.get(n)!.shape, data: src.get(n)!.read() }]));
  src.close();
  edit.tensors?.(tensors);
  fs.writeFileSync(path.join(dir, 'adapter_model.safetensors'), encodeSafetensors(tensors));
  return dir;
}

describe('reading peft adapters', () => {
  it('qwen3-tiny-lora: r 4, alpha 8, scale alpha/r = 2, one pair per targeted linear per layer', () => {
    const { config, pairs } = readLoraAdapter(path.join(FIXTURES, 'qwen3-tiny-lora'), qwen3);
    expect(config).toEqual({ r: 4, alpha: 8, rslora: false, dropout: 0, targetModules: ['down_proj', 'o_proj', 'q_proj', 'v_proj'], baseModel: 'qwen3-tiny' });
    expect(pairs.map((p) => p.target)).toEqual(
      [0, 1].flatMap((l) => [
        `model.layers.${l}.mlp.down_proj.weight`,
        `model.layers.${l}.self_attn.o_proj.weight`,
        `model.layers.${l}.self_attn.q_proj.weight`,
        `model.layers.${l}.self_attn.v_proj.weight`,
      ]),
    );
    const q = pairs.find((p) => p.target === 'model.layers.0.self_attn.q_proj.weight')!;
    expect(q).toMatchObject({ r: 4, inFeatures: 32, outFeatures: 64, scale: 2 });
    expect(q.a.length).toBe(4 * 32);
    expect(q.b.length).toBe(64 * 4);
    expect(q.b.some((v) => v !== 0)).toBe(true); // non-zero B: the adapter changes the model
    const down = pairs.find((p) => p.target === 'model.layers.1.mlp.down_proj.weight')!;
    expect(down).toMatchObject({ inFeatures: 64, outFeatures: 32 });
    // The A of q_proj layer 0 is the file's tensor, row-major [r, in].
    const src = openTensorSource(path.join(FIXTURES, 'qwen3-tiny-lora', 'adapter_model.safetensors'));
    expect([...q.a]).toEqual([...src.get(`${P}.0.self_attn.q_proj.lora_A.weight`)!.read()]);
    src.close();
  });

  it('qwen3-tiny-rslora: scale alpha / sqrt(r) = 4', () => {
    const { config, pairs } = readLoraAdapter(path.join(FIXTURES, 'qwen3-tiny-rslora'), qwen3);
    expect(config.rslora).toBe(true);
    expect(config.targetModules).toEqual(['gate_proj', 'k_proj', 'q_proj', 'up_proj']);
    expect(new Set(pairs.map((p) => p.scale))).toEqual(new Set([4]));
    expect(pairs.length).toBe(8);
  });

  it('target_modules "all-linear" means the seven linears; lora_alpha defaults to 8 as in peft', () => {
    const c = parseLoraConfig({ r: 2, target_modules: 'all-linear' }, 'adapter_config.json');
    expect(c.targetModules).toEqual(['down_proj', 'gate_proj', 'k_proj', 'o_proj', 'q_proj', 'up_proj', 'v_proj']);
    expect(c.alpha).toBe(8);
  });
});

describe('refusals name the file and the field or tensor', () => {
  it('missing adapter_config.json or adapter_model.safetensors', () => {
    fs.mkdirSync(path.join(tmp, 'empty'), { recursive: true });
    expect(() => readLoraAdapter(path.join(tmp, 'empty'), qwen3)).toThrow(
      /empty\/adapter_config\.json: missing \(a peft LoRA adapter folder holds adapter_config\.json and adapter_model\.safetensors\)/,
    );
    const dir = edited('noweights', {});
    fs.rmSync(path.join(dir, 'adapter_model.safetensors'));
    expect(() => readLoraAdapter(dir, qwen3)).toThrow(/noweights\/adapter_model\.safetensors: missing/);
  });

  it('an adapter made for another base (qwen2-tiny-lora onto qwen3-tiny): the shape, the base weight and r', () => {
    expect(() => readLoraAdapter(path.join(FIXTURES, 'qwen2-tiny-lora'), qwen3)).toThrow(
      /qwen2-tiny-lora\/adapter_model\.safetensors: tensor "base_model\.model\.model\.layers\.0\.self_attn\.(q|v)_proj\.lora_B\.weight" has shape \[(32|8), 4\], but model\.layers\.0\.self_attn\.\1_proj\.weight is \[(64|32), 32\] with r 4, so it must be \[\3, 4\] \(an adapter made for another base\?\)/,
    );
    // ... and it is valid on its own base.
    expect(readLoraAdapter(path.join(FIXTURES, 'qwen2-tiny-lora'), readHfConfig(path.join(FIXTURES, 'qwen2-tiny'))).pairs.length).toBe(4);
  });

  it('r in the config that does not match the tensors', () => {
    const dir = edited('rank', { config: (c) => (c.r = 8) });
    expect(() => readLoraAdapter(dir, qwen3)).toThrow(/lora_A\.weight" has shape \[4, (32|64)\], .* with r 8, so it must be \[8, (32|64)\]/);
  });

  it('a layer the base lacks', () => {
    const dir = edited('layer', {
      tensors: (t) => {
        t.set(`${P}.5.self_attn.q_proj.lora_A.weight`, t.get(`${P}.0.self_attn.q_proj.lora_A.weight`)!);
        t.set(`${P}.5.self_attn.q_proj.lora_B.weight`, t.get(`${P}.0.self_attn.q_proj.lora_B.weight`)!);
      },
    });
    expect(() => readLoraAdapter(dir, qwen3)).toThrow(
      /tensor "base_model\.model\.model\.layers\.5\.self_attn\.q_proj\.lora_A\.weight" adapts model\.layers\.5\.self_attn\.q_proj\.weight, which the base model lacks \(it has 2 layers/,
    );
  });

  it('a target module the model lacks, or one not adaptable here', () => {
    expect(() => readLoraAdapter(edited('lmhead', { config: (c) => (c.target_modules = ['q_proj', 'lm_head']) }), qwen3)).toThrow(
      /adapter_config\.json: field "target_modules" names "lm_head", which the model lacks or which cannot be adapted here \(adaptable: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj\)/,
    );
    expect(() => parseLoraConfig({ r: 4, target_modules: ['c_attn'] }, 'a.json')).toThrow(/names "c_attn"/);
    expect(() => parseLoraConfig({ r: 4, target_modules: '.*proj' }, 'a.json')).toThrow(/field "target_modules" must be a non-empty list/);
  });

  it('a tensor of a module outside target_modules, and a key that is not a layer linear', () => {
    expect(() => readLoraAdapter(edited('outside', { config: (c) => (c.target_modules = ['q_proj', 'v_proj', 'o_proj']) }), qwen3)).toThrow(
      /mlp\.down_proj\.lora_[AB]\.weight" adapts "down_proj", which is not in target_modules \(o_proj, q_proj, v_proj\)/,
    );
    const dir = edited('embedding', {
      tensors: (t) => t.set('base_model.model.model.embed_tokens.lora_embedding_A', { shape: [4, 320], data: new Float32Array(1280) }),
    });
    expect(() => readLoraAdapter(dir, qwen3)).toThrow(
      /tensor "base_model\.model\.model\.embed_tokens\.lora_embedding_A" is not a LoRA A\/B weight of a layer linear/,
    );
  });

  it('an A without its B', () => {
    const dir = edited('half', { tensors: (t) => t.delete(`${P}.1.self_attn.v_proj.lora_B.weight`) });
    expect(() => readLoraAdapter(dir, qwen3)).toThrow(/half\/adapter_model\.safetensors: model\.layers\.1\.self_attn\.v_proj\.weight has lora_A but no lora_B/);
  });

  it('peft features not implemented: DoRA, rank/alpha patterns, biases, another peft type, bad r', () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ use_dora: true }, /field "use_dora" is true, which this LoRA implementation does not support/],
      [{ rank_pattern: { q_proj: 8 } }, /field "rank_pattern"/],
      [{ alpha_pattern: { q_proj: 8 } }, /field "alpha_pattern"/],
      [{ bias: 'all' }, /field "bias" is "all"/],
      [{ peft_type: 'IA3' }, /field "peft_type" is "IA3"/],
      [{ modules_to_save: ['lm_head'] }, /field "modules_to_save"/],
      [{ r: 0 }, /field "r" must be a positive integer, got 0/],
      [{ use_rslora: 'yes' }, /field "use_rslora" must be true or false/],
    ];
    for (const [over, pattern] of bad) {
      expect(() => parseLoraConfig({ r: 4, lora_alpha: 8, target_modules: ['q_proj'], ...over }, '/a/adapter_config.json')).toThrow(
        new RegExp(`/a/adapter_config\\.json: ${pattern.source}`),
      );
    }
  });
});
