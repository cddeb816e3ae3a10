// peft adapter folders written by the lab (src/core/models/hf/saveAdapter.ts): the round trip
// through the reader, byte equality with what peft's own save_pretrained wrote for the same adapter
// (the committed fixtures were made by peft 0.21), adapter_config.json's keys against peft's, and
// refusals that leave nothing at the destination. Loading with peft itself:
// scripts/fixtures/check_exports.py (dev only; figures in its output).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readHfConfig } from '../../../../src/core/models/hf/config';
import { readLoraAdapter } from '../../../../src/core/models/hf/loraFiles';
import { saveLoraAdapter } from '../../../../src/core/models/hf/saveAdapter';
import type { LoraPair } from '../../../../src/core/models/hf/types';

const FIXTURES = path.resolve(__dirname, '../../../fixtures/hf');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'srpo-hfsaveadapter-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const qwen3 = readHfConfig(path.join(FIXTURES, 'qwen3-tiny'));
const qwen2 = readHfConfig(path.join(FIXTURES, 'qwen2-tiny'));
const readJson = (file: string): Record<string, unknown> => JSON.parse(fs.readFileSync(file, 'utf8'));

/** The keys peft 0.21 writes that we leave to LoraConfig's defaults (newer features, all off). */
const LEFT_TO_PEFT_DEFAULTS = [
  'alora_invocation_tokens',
  'arrow_config',
  'corda_config',
  'ensure_weight_tying',
  'eva_config',
  'exclude_modules',
  'kasa_config',
  'layer_replication',
  'lora_bias',
  'lora_ga_config',
  'monteclora_config',
  'peft_version',
  'qalora_group_size',
  'target_parameters',
  'trainable_token_indices',
  'use_bdlora',
  'use_qalora',
  'velora_config',
];

describe('round trip: readLoraAdapter(saveLoraAdapter(x)) == x', () => {
  for (const [name, base, config] of [
    ['qwen3-tiny-lora', 'qwen3-tiny', qwen3],
    ['qwen3-tiny-rslora', 'qwen3-tiny', qwen3],
    ['qwen2-tiny-lora', 'qwen2-tiny', qwen2],
  ] as const) {
    it(`${name}: config and every pair bit for bit`, () => {
      const x = readLoraAdapter(path.join(FIXTURES, name), config);
      const dir = saveLoraAdapter(path.join(tmp, `rt-${name}`), { config: x.config, pairs: x.pairs, baseModel: `org/${base}` });
      const y = readLoraAdapter(dir, config);
      expect(y.config).toEqual({ ...x.config, baseModel: `org/${base}` });
      expect(y.pairs.length).toBe(x.pairs.length);
      y.pairs.forEach((p, i) => {
        const q = x.pairs[i];
        expect({ ...p, a: undefined, b: undefined }).toEqual({ ...q, a: undefined, b: undefined });
        expect(Buffer.from(p.a.buffer).equals(Buffer.from(q.a.buffer))).toBe(true);
        expect(Buffer.from(p.b.buffer).equals(Buffer.from(q.b.buffer))).toBe(true);
      });
    });
  }

  it("pairs in any order are written in peft's (sorted) order", () => {
    const x = readLoraAdapter(path.join(FIXTURES, 'qwen3-tiny-lora'), qwen3);
    const dir = saveLoraAdapter(path.join(tmp, 'reversed'), { config: x.config, pairs: [...x.pairs].reverse(), baseModel: 'qwen3-tiny' });
    expect(
      fs.readFileSync(path.join(dir, 'adapter_model.safetensors')).equals(fs.readFileSync(path.join(FIXTURES, 'qwen3-tiny-lora', 'adapter_model.safetensors'))),
    ).toBe(true);
  });
});

describe("the files are peft's", () => {
  const x = readLoraAdapter(path.join(FIXTURES, 'qwen3-tiny-lora'), qwen3);
  const dir = saveLoraAdapter(path.join(tmp, 'as-peft'), { config: x.config, pairs: x.pairs, baseModel: 'qwen3-tiny' });

  it('adapter_model.safetensors is byte-identical to peft save_pretrained of the same adapter', () => {
    // Same names (base_model.model.model.layers.N.<...>.lora_A.weight), order, header padding, data.
    const ours = fs.readFileSync(path.join(dir, 'adapter_model.safetensors'));
    const peft = fs.readFileSync(path.join(FIXTURES, 'qwen3-tiny-lora', 'adapter_model.safetensors'));
    const header = (b: Buffer): string => b.subarray(8, 8 + Number(b.readBigUInt64LE(0))).toString('utf8');
    expect(header(ours)).toBe(header(peft));
    expect(header(ours)).toContain('"base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight":{"dtype":"F32","shape":[4,32]');
    expect(ours.equals(peft)).toBe(true);
  });

  it('adapter_config.json: every key we write has the value peft wrote; the rest are listed defaults', () => {
    const ours = readJson(path.join(dir, 'adapter_config.json'));
    const peft = readJson(path.join(FIXTURES, 'qwen3-tiny-lora', 'adapter_config.json'));
    for (const [key, value] of Object.entries(ours)) {
      if (key === 'target_modules') expect([...(value as string[])].sort()).toEqual([...(peft[key] as string[])].sort());
      else expect({ [key]: value }).toEqual({ [key]: peft[key] });
    }
    expect(
      Object.keys(peft)
        .filter((k) => !(k in ours))
        .sort(),
    ).toEqual(LEFT_TO_PEFT_DEFAULTS);
    expect(ours).toMatchObject({
      peft_type: 'LORA',
      task_type: 'CAUSAL_LM',
      r: 4,
      lora_alpha: 8,
      lora_dropout: 0,
      use_rslora: false,
      bias: 'none',
      base_model_name_or_path: 'qwen3-tiny',
    });
  });

  it('adapter_config.json is laid out as peft writes it (sorted keys, two-space indent)', () => {
    const text = fs.readFileSync(path.join(dir, 'adapter_config.json'), 'utf8');
    const keys = [...text.matchAll(/^ {2}"([a-z_]+)":/gm)].map((m) => m[1]);
    expect(keys).toEqual([...keys].sort());
    expect(keys.length).toBe(Object.keys(readJson(path.join(dir, 'adapter_config.json'))).length);
  });

  it('use_rslora and lora_alpha carry the rsLoRA scale', () => {
    const r = readLoraAdapter(path.join(FIXTURES, 'qwen3-tiny-rslora'), qwen3);
    const out = saveLoraAdapter(path.join(tmp, 'rs'), { config: r.config, pairs: r.pairs, baseModel: 'b' });
    expect(readJson(path.join(out, 'adapter_config.json'))).toMatchObject({
      use_rslora: true,
      lora_alpha: 8,
      r: 4,
      target_modules: ['gate_proj', 'k_proj', 'q_proj', 'up_proj'],
    });
  });
});

describe('refusals name the pair or field, and leave nothing at the destination', () => {
  const x = readLoraAdapter(path.join(FIXTURES, 'qwen3-tiny-lora'), qwen3);
  const q0 = x.pairs.find((p) => p.target === 'model.layers.0.self_attn.q_proj.weight')!;
  const refused = (name: string, pairs: LoraPair[], config = x.config): (() => string) => {
    const dest = path.join(tmp, name);
    return () => {
      try {
        return saveLoraAdapter(dest, { config, pairs, baseModel: 'b' });
      } finally {
        expect(fs.existsSync(dest)).toBe(false);
      }
    };
  };

  it('a pair whose rank or scale disagrees with the config', () => {
    expect(refused('rank', [{ ...q0, r: 2 }])).toThrow(/LoRA pair for "model\.layers\.0\.self_attn\.q_proj\.weight": has rank 2, the config says r 4/);
    expect(refused('scale', [{ ...q0, scale: 4 }])).toThrow(/q_proj\.weight": has scale 4, but lora_alpha 8 and r 4 give 2/);
    expect(refused('rscale', [{ ...q0 }], { ...x.config, rslora: true })).toThrow(/has scale 2, but lora_alpha 8 and r 4 with use_rslora give 4/);
  });

  it('a module outside target_modules, a non-linear target, a pair given twice, wrong A/B sizes', () => {
    const k0 = { ...q0, target: 'model.layers.0.self_attn.k_proj.weight' };
    expect(refused('module', [k0])).toThrow(/k_proj\.weight": module "k_proj" is not in target_modules \(down_proj, o_proj, q_proj, v_proj\)/);
    expect(refused('norm', [{ ...q0, target: 'model.norm.weight' }])).toThrow(/"model\.norm\.weight": is not a layer linear weight/);
    expect(refused('twice', [q0, q0])).toThrow(/q_proj\.weight": given twice/);
    expect(refused('asize', [{ ...q0, a: q0.a.subarray(1) }])).toThrow(/q_proj\.weight": A has 127 values, \[4, 32\] needs 128/);
    expect(refused('bsize', [{ ...q0, b: q0.b.subarray(4) }])).toThrow(/q_proj\.weight": B has 252 values, \[64, 4\] needs 256/);
  });

  it('no pairs; a config the reader would refuse', () => {
    expect(refused('none', [])).toThrow(/none: no LoRA pairs to save/);
    expect(refused('badr', [q0], { ...x.config, r: 0 })).toThrow(/adapter_config\.json: field "r" must be a positive integer, got 0/);
    expect(refused('lm', [q0], { ...x.config, targetModules: ['lm_head'] })).toThrow(/field "target_modules" names "lm_head"/);
  });

  it('a destination that holds files is refused and left as it was', () => {
    const dest = path.join(tmp, 'occupied');
    fs.mkdirSync(dest);
    fs.writeFileSync(path.join(dest, 'keep.txt'), 'mine');
    expect(() => saveLoraAdapter(dest, { config: x.config, pairs: x.pairs, baseModel: 'b' })).toThrow(/occupied: already exists and is not an empty folder/);
    expect(fs.readdirSync(dest)).toEqual(['keep.txt']);
  });

  it('an empty destination folder is filled', () => {
    const dest = path.join(tmp, 'empty-dest');
    fs.mkdirSync(dest);
    saveLoraAdapter(dest, { config: x.config, pairs: x.pairs, baseModel: 'b' });
    expect(fs.readdirSync(dest).sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors']);
    expect(fs.readdirSync(tmp).filter((f) => f.includes('.partial-'))).toEqual([]);
  });
});
