/**
 * Opens a Hugging Face model folder as one object the lab can sample and score with: config.json
 * (config.ts), generation_config.json (stop ids), the tokenizer and chat template (tokenizer.ts),
 * an optional peft LoRA adapter folder (loraFiles.ts), and the weights streamed tensor by tensor
 * into the backend (safetensorsFile.ts -> model.ts `HfModel.fromSource`). Only orchestration:
 * every file's reading and checking is in the file named.
 *
 * Order: everything that is only files (configs, tokenizer, tokenizer vs vocab_size) is read and
 * checked first; then the weights' headers (no tensor data) are opened and config.json's sizes
 * held against them (weights.ts `checkConfigScale`) before anything sized by config.json is built
 * (the adapter's expected shapes, the model); then the adapter, so a bad folder fails before a
 * byte of weights is read; then the weights, whose loader disposes what it created on an error. Nothing half-loaded: on an error
 * no tensor is left behind and the error names the file, the tensor or the field.
 *
 * Tests: test/core/models/hf/load.test.ts (the fixtures of test/fixtures/hf, broken copies of
 * them, the leak count after a failed load), test/cli/model.test.ts.
 */
import { existsSync, statSync } from 'node:fs';
import { readGenerationConfig, readHfConfig } from './config';
import { readLoraAdapter } from './loraFiles';
import { HfModel } from './model';
import { openTensorSource } from './safetensorsFile';
import { checkTokenizerFitsModel, HfTokenizer } from './tokenizer';
import type { HfGenerationConfig, HfModelConfig, LoraAdapterConfig } from './types';
import { checkConfigScale } from './weights';

export interface LoadHfOptions {
  /** A peft adapter folder (adapter_config.json + adapter_model.safetensors) applied on the base. */
  adapter?: string;
  /** Create trainable variables (the LoRA factors with an adapter, else every weight). Default false. */
  trainable?: boolean;
}

export interface LoadedHfModel {
  dir: string;
  config: HfModelConfig;
  generation: HfGenerationConfig;
  tokenizer: HfTokenizer;
  model: HfModel;
  adapter?: { dir: string; config: LoraAdapterConfig };
  /** Frees the model's tensors. */
  dispose(): void;
}

/** Reads and checks the folder's files (no weights); the first half of `loadHfModel`, and `model info`. */
export function readHfFolder(dir: string): { config: HfModelConfig; generation: HfGenerationConfig } {
  if (!existsSync(dir)) throw new Error(`model folder ${dir} does not exist`);
  if (!statSync(dir).isDirectory()) throw new Error(`${dir} is not a folder (a Hugging Face model folder holds config.json, tokenizer.json and the weights)`);
  const config = readHfConfig(dir);
  return { config, generation: readGenerationConfig(dir, config) };
}

export function loadHfModel(dir: string, options: LoadHfOptions = {}): LoadedHfModel {
  const { config, generation } = readHfFolder(dir);
  const tokenizer = HfTokenizer.fromFolder(dir);
  checkTokenizerFitsModel(tokenizer, config, dir);
  let adapter: { dir: string; config: LoraAdapterConfig; pairs: ReturnType<typeof readLoraAdapter>['pairs'] } | undefined;
  const source = openTensorSource(dir); // headers only
  let model: HfModel;
  try {
    checkConfigScale(config, source);
    if (options.adapter !== undefined) {
      if (!existsSync(options.adapter)) throw new Error(`adapter folder ${options.adapter} does not exist`);
      const read = readLoraAdapter(options.adapter, config);
      adapter = { dir: options.adapter, config: read.config, pairs: read.pairs };
    }
    model = HfModel.fromSource(config, source, { lora: adapter?.pairs, trainable: options.trainable, validVocab: tokenizer.vocabSize });
  } finally {
    source.close?.(); // the weights are in the backend now (or the load failed): no open file descriptors either way
  }
  return {
    dir,
    config,
    generation,
    tokenizer,
    model,
    ...(adapter ? { adapter: { dir: adapter.dir, config: adapter.config } } : {}),
    dispose: () => model.dispose(),
  };
}
