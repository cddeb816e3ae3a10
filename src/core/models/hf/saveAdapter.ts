/**
 * Writes a LoRA adapter folder in peft's format, which `PeftModel.from_pretrained(base, dir)` loads
 * (Node: node:fs):
 *   adapter_config.json: peft's LoraConfig keys, sorted and indented as peft writes them
 *     (`json.dumps(indent=2, sort_keys=True)`);
 *   adapter_model.safetensors: float32 `base_model.model.<base weight without .weight>.lora_A.weight`
 *     [r, in] and `.lora_B.weight` [out, r] (peft's names without the adapter name), sorted, with
 *     `__metadata__` `{"format": "pt"}`.
 * Written atomically (a temporary folder beside the destination, then a rename; see saveModel.ts).
 *
 * Which keys: peft's loader needs only `peft_type`, and fills every missing key from LoraConfig's
 * defaults. We write the keys that carry meaning for the weights (r, lora_alpha, use_rslora,
 * target_modules, bias, fan_in_fan_out, use_dora, modules_to_save, rank/alpha patterns, layer
 * selection...) so that no future default can change what the adapter computes, and only keys
 * LoraConfig has had since peft 0.9 (older-but-supported pefts refuse unknown keys); not
 * `peft_version` (peft fills in its own). scripts/fixtures/check_exports.py checks that peft 0.21
 * reads this config into the same LoraConfig as its own save of the same adapter.
 *
 * Refused, naming the field or the pair: a config readLoraAdapter would refuse, a pair whose rank or
 * scale disagrees with the config (the file could not reproduce it), a target outside
 * target_modules, a pair given twice. Not here: reading (loraFiles.ts), merging (saveModel.ts).
 * Tests: test/core/models/hf/saveAdapter.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { encodeSafetensors, type NamedArray } from '../safetensors';
import { ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE, parseLoraConfig } from './loraFiles';
import { writeFolderAtomically } from './saveModel';
import type { LoraAdapterConfig, LoraPair } from './types';

export interface SaveLoraAdapterOptions {
  config: LoraAdapterConfig;
  pairs: LoraPair[];
  /** adapter_config.json's `base_model_name_or_path`: the base's hub id or folder. */
  baseModel: string;
}

const TARGET = /^model\.layers\.\d+\.(?:self_attn|mlp)\.([a-z_]+)\.weight$/;

/** adapter_config.json as an object with peft's keys (sorted by the writer). */
export function peftAdapterConfig(config: LoraAdapterConfig, baseModel: string): Record<string, unknown> {
  return {
    alpha_pattern: {},
    auto_mapping: null,
    base_model_name_or_path: baseModel,
    bias: 'none',
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    layers_pattern: null,
    layers_to_transform: null,
    loftq_config: {},
    lora_alpha: config.alpha,
    lora_dropout: config.dropout,
    megatron_config: null,
    megatron_core: 'megatron.core',
    modules_to_save: null,
    peft_type: 'LORA',
    r: config.r,
    rank_pattern: {},
    revision: null,
    target_modules: [...config.targetModules].sort(),
    task_type: 'CAUSAL_LM',
    use_dora: false,
    use_rslora: config.rslora,
  };
}

/** JSON with keys sorted at every level and two-space indents, as Python's json.dumps(indent=2, sort_keys=True). */
function sortedJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v && typeof v === 'object')
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, sort((v as Record<string, unknown>)[k])]),
      );
    return v;
  };
  return JSON.stringify(sort(value), null, 2);
}

/** Writes the adapter folder `dir` (which must not exist, or be empty); returns its absolute path. */
export function saveLoraAdapter(dir: string, opts: SaveLoraAdapterOptions): string {
  const { pairs, baseModel } = opts;
  const json = peftAdapterConfig(opts.config, baseModel);
  // The same checks the reader makes, so that what is written can be read back.
  const config = parseLoraConfig(json, `${dir}/${ADAPTER_CONFIG_FILE}`);
  if (pairs.length === 0) throw new Error(`${dir}: no LoRA pairs to save`);
  const scale = config.rslora ? config.alpha / Math.sqrt(config.r) : config.alpha / config.r;
  const tensors = new Map<string, NamedArray>();
  for (const p of pairs) {
    const fail = (msg: string): never => {
      throw new Error(`${dir}: LoRA pair for "${p.target}": ${msg}`);
    };
    const m = TARGET.exec(p.target);
    if (!m) fail('is not a layer linear weight (model.layers.N.<self_attn|mlp>.<module>.weight)');
    if (!config.targetModules.includes(m![1])) fail(`module "${m![1]}" is not in target_modules (${config.targetModules.join(', ')})`);
    if (p.r !== config.r) fail(`has rank ${p.r}, the config says r ${config.r}`);
    if (Math.abs(p.scale - scale) > 1e-12 * Math.abs(scale))
      fail(`has scale ${p.scale}, but lora_alpha ${config.alpha} and r ${config.r}${config.rslora ? ' with use_rslora' : ''} give ${scale}`);
    if (p.a.length !== p.r * p.inFeatures) fail(`A has ${p.a.length} values, [${p.r}, ${p.inFeatures}] needs ${p.r * p.inFeatures}`);
    if (p.b.length !== p.outFeatures * p.r) fail(`B has ${p.b.length} values, [${p.outFeatures}, ${p.r}] needs ${p.outFeatures * p.r}`);
    const stem = `base_model.model.${p.target.slice(0, -'.weight'.length)}`;
    if (tensors.has(`${stem}.lora_A.weight`)) fail('given twice');
    tensors.set(`${stem}.lora_A.weight`, { shape: [p.r, p.inFeatures], data: p.a });
    tensors.set(`${stem}.lora_B.weight`, { shape: [p.outFeatures, p.r], data: p.b });
  }
  const sorted = new Map([...tensors].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
  const weights = encodeSafetensors(sorted, { format: 'pt' });
  writeFolderAtomically(dir, (tmp) => {
    fs.writeFileSync(path.join(tmp, ADAPTER_CONFIG_FILE), sortedJson(json));
    fs.writeFileSync(path.join(tmp, ADAPTER_WEIGHTS_FILE), weights);
  });
  return path.resolve(dir);
}
