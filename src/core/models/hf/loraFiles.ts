/**
 * A peft LoRA adapter folder read from disk and checked against the base it is loaded onto
 * (Node: node:fs). `adapter_config.json` gives `r`, `lora_alpha`, `use_rslora`, `lora_dropout`,
 * `target_modules`; `adapter_model.safetensors` holds, per adapted linear,
 * `base_model.model.<base weight name without .weight>.lora_A.weight` [r, in] and `.lora_B.weight`
 * [out, r]. The adapted linear computes y = W x + scale * B (A x), scale = alpha / r, or
 * alpha / sqrt(r) with use_rslora (peft tuners/lora/layer.py `update_layer`).
 *
 * Refused with an error naming the file and the field or tensor: missing files; a target module
 * the model lacks (only its seven linears can be adapted); a tensor whose shape does not fit the
 * base weight (an adapter made for another base); an A without its B; peft features this family
 * does not implement (DoRA, per-module rank or alpha patterns, biases, modules_to_save,
 * fan_in_fan_out). Applying the pairs is model.ts's job (tfjs) and reference.ts's (float64).
 *
 * Tests: test/core/models/hf/loraFiles.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { jsonValueText, NOT_FINITE, readJsonFile } from '../../util/jsonFile';
import { MODEL_FILE_LIMITS } from '../fileLimits';
import { openTensorSource } from './safetensorsFile';
import type { HfModelConfig, LoraAdapterConfig, LoraPair } from './types';
import { expectedWeights } from './weights';

export const ADAPTER_CONFIG_FILE = 'adapter_config.json' as const;
export const ADAPTER_WEIGHTS_FILE = 'adapter_model.safetensors';

/** The linears of a layer an adapter may target (peft's `target_modules` names). */
export const LORA_TARGET_MODULES = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;

/** adapter_config.json keys whose other values this family does not implement: key -> accepted values. */
const UNSUPPORTED: Record<string, (v: unknown) => boolean> = {
  peft_type: (v) => v === 'LORA',
  use_dora: (v) => v === false,
  bias: (v) => v === 'none',
  lora_bias: (v) => v === false,
  fan_in_fan_out: (v) => v === false,
  modules_to_save: (v) => Array.isArray(v) && v.length === 0,
  rank_pattern: (v) => typeof v === 'object' && v !== null && Object.keys(v).length === 0,
  alpha_pattern: (v) => typeof v === 'object' && v !== null && Object.keys(v).length === 0,
};

const KEY = /^base_model\.model\.(model\.layers\.(\d+)\.(?:self_attn|mlp)\.([a-z_]+))\.lora_([AB])(?:\.[A-Za-z0-9_-]+)?\.weight$/;

function readJson(file: string): Record<string, unknown> {
  if (!fs.existsSync(file)) throw new Error(`${file}: missing (a peft LoRA adapter folder holds ${ADAPTER_CONFIG_FILE} and ${ADAPTER_WEIGHTS_FILE})`);
  const json = readJsonFile(file, MODEL_FILE_LIMITS[ADAPTER_CONFIG_FILE]);
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error(`${file}: not a JSON object`);
  return json as Record<string, unknown>;
}

/** Normalises adapter_config.json; `file` goes into every error. */
export function parseLoraConfig(json: Record<string, unknown>, file: string): LoraAdapterConfig {
  const fail = (key: string, msg: string): never => {
    throw new Error(`${file}: field "${key}" ${msg}`);
  };
  for (const [key, ok] of Object.entries(UNSUPPORTED)) {
    if (json[key] != null && !ok(json[key])) fail(key, `is ${JSON.stringify(json[key])}, which this LoRA implementation does not support`);
  }
  const r = json.r;
  if (!Number.isInteger(r) || (r as number) < 1) fail('r', `must be a positive integer, got ${jsonValueText(r)}`);
  const alpha = json.lora_alpha ?? 8; // peft's default
  if (typeof alpha !== 'number') fail('lora_alpha', `must be a number, got ${JSON.stringify(alpha)}`);
  if (!Number.isFinite(alpha)) fail('lora_alpha', NOT_FINITE);
  const rslora = json.use_rslora ?? false;
  if (typeof rslora !== 'boolean') fail('use_rslora', `must be true or false, got ${JSON.stringify(rslora)}`);
  const dropout = json.lora_dropout ?? 0;
  if (typeof dropout !== 'number' || dropout < 0 || dropout >= 1) fail('lora_dropout', `must be in [0, 1), got ${jsonValueText(dropout)}`);
  let targets = json.target_modules;
  if (targets === 'all-linear') targets = [...LORA_TARGET_MODULES];
  if (!Array.isArray(targets) || targets.length === 0 || !targets.every((t) => typeof t === 'string')) {
    fail('target_modules', `must be a non-empty list of module names (or "all-linear"), got ${JSON.stringify(json.target_modules)}`);
  }
  for (const t of targets as string[]) {
    if (!(LORA_TARGET_MODULES as readonly string[]).includes(t))
      fail('target_modules', `names "${t}", which the model lacks or which cannot be adapted here (adaptable: ${LORA_TARGET_MODULES.join(', ')})`);
  }
  const base = json.base_model_name_or_path;
  return {
    r: r as number,
    alpha: alpha as number,
    rslora: rslora as boolean,
    dropout: dropout as number,
    targetModules: [...(targets as string[])].sort(),
    baseModel: typeof base === 'string' ? base : null,
  };
}

/** Reads an adapter folder and checks every tensor against `config`'s base weights. */
export function readLoraAdapter(dir: string, config: HfModelConfig): { config: LoraAdapterConfig; pairs: LoraPair[] } {
  const configFile = path.join(dir, ADAPTER_CONFIG_FILE);
  const adapter = parseLoraConfig(readJson(configFile), configFile);
  const weightsFile = path.join(dir, ADAPTER_WEIGHTS_FILE);
  if (!fs.existsSync(weightsFile)) throw new Error(`${weightsFile}: missing (only safetensors adapters are read; convert adapter_model.bin with peft)`);
  const baseShapes = new Map(expectedWeights(config).map((w) => [w.name, w.shape]));
  const scale = adapter.rslora ? adapter.alpha / Math.sqrt(adapter.r) : adapter.alpha / adapter.r;
  const source = openTensorSource(weightsFile);
  try {
    const halves = new Map<string, { a?: Float32Array; b?: Float32Array; module: string }>();
    for (const name of source.names()) {
      const m = KEY.exec(name);
      const fail = (msg: string): never => {
        throw new Error(`${weightsFile}: tensor "${name}" ${msg}`);
      };
      if (!m) fail('is not a LoRA A/B weight of a layer linear (base_model.model.model.layers.N.<self_attn|mlp>.<module>.lora_<A|B>.weight)');
      const [, modulePath, , module, half] = m!;
      if (!adapter.targetModules.includes(module)) fail(`adapts "${module}", which is not in target_modules (${adapter.targetModules.join(', ')})`);
      const target = `${modulePath}.weight`;
      const baseShape = baseShapes.get(target);
      if (!baseShape) fail(`adapts ${target}, which the base model lacks (it has ${config.numLayers} layers; an adapter made for another base?)`);
      const [outF, inF] = baseShape!;
      const entry = source.get(name)!;
      const want = half === 'A' ? [adapter.r, inF] : [outF, adapter.r];
      if (entry.shape.length !== 2 || entry.shape[0] !== want[0] || entry.shape[1] !== want[1]) {
        fail(
          `has shape [${entry.shape.join(', ')}], but ${target} is [${outF}, ${inF}] with r ${adapter.r}, so it must be [${want.join(', ')}] (an adapter made for another base?)`,
        );
      }
      const slot = halves.get(target) ?? { module };
      if (half === 'A') slot.a = entry.read();
      else slot.b = entry.read();
      halves.set(target, slot);
    }
    if (halves.size === 0) throw new Error(`${weightsFile}: holds no LoRA tensors`);
    const pairs: LoraPair[] = [];
    for (const [target, { a, b }] of halves) {
      if (!a || !b) throw new Error(`${weightsFile}: ${target} has lora_${a ? 'A' : 'B'} but no lora_${a ? 'B' : 'A'}`);
      const [outFeatures, inFeatures] = baseShapes.get(target)!;
      pairs.push({ target, a, b, r: adapter.r, inFeatures, outFeatures, scale });
    }
    pairs.sort((x, y) => (x.target < y.target ? -1 : x.target > y.target ? 1 : 0));
    return { config: adapter, pairs };
  } finally {
    source.close();
  }
}
