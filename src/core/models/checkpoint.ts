/**
 * Checkpoint directories (Node: uses node:fs). A checkpoint of one model is a directory with
 * `model.safetensors` (every parameter, float32, names from config.ts `parameterShapes`),
 * `config.json` (the frozen model config) and `tokenizer.json`. Loading validates everything
 * against the config before touching a model: missing or extra tensors, shapes, dtypes, corrupt
 * files are each an Error naming the file and the tensor. Every file is first checked to be a
 * regular file of a plausible size (../util/regularFile.ts; config.json at most 1 MiB,
 * tokenizer.json 64 MiB: fileLimits.ts; model.safetensors at most what the config's float32
 * parameters and the largest header take), so a FIFO or /dev/zero in its place fails at once.
 *
 * Not here: optimiser state and trainer progress (the trainer's checkpoint wraps this one).
 * Tests: test/core/models/checkpoint.test.ts (bit-exact round trip, each corruption).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readJsonFile } from '../util/jsonFile';
import { readRegularFile } from '../util/regularFile';
import { parameterShapes, resolveModelConfig, type ModelConfig } from './config';
import { MODEL_FILE_LIMITS } from './fileLimits';
import { decodeSafetensors, encodeSafetensors, type NamedArray } from './safetensors';
import { MAX_HEADER_BYTES } from './safetensorsHeader';
import { CharTokenizer } from './tokenizer';
import { readParameters, Transformer } from './transformer';

export const CHECKPOINT_FILES = { weights: 'model.safetensors', config: 'config.json', tokenizer: 'tokenizer.json' } as const;

/** Writes the model (read back from the device: call outside tf.tidy), its config and the tokenizer. */
export function saveCheckpoint(dir: string, model: Transformer, tokenizer: CharTokenizer, metadata: Record<string, string> = {}): void {
  fs.mkdirSync(dir, { recursive: true });
  const params = readParameters(model);
  const tensors = new Map<string, NamedArray>(parameterShapes(model.config).map(({ name, shape }) => [name, { shape, data: params.get(name)! }]));
  fs.writeFileSync(path.join(dir, CHECKPOINT_FILES.weights), encodeSafetensors(tensors, { format: 'srpo-lab', ...metadata }));
  fs.writeFileSync(path.join(dir, CHECKPOINT_FILES.config), JSON.stringify(model.config, null, 2) + '\n');
  fs.writeFileSync(path.join(dir, CHECKPOINT_FILES.tokenizer), JSON.stringify(tokenizer.toJSON()) + '\n');
}

export interface LoadedCheckpoint {
  config: ModelConfig;
  tokenizer: CharTokenizer;
  /** Parameters by name, validated against the config. */
  weights: Map<string, Float32Array>;
  metadata: Record<string, string>;
}

/** Reads and validates a checkpoint directory without creating a model. */
export function readCheckpoint(dir: string): LoadedCheckpoint {
  const configFile = path.join(dir, CHECKPOINT_FILES.config);
  let config: ModelConfig;
  try {
    config = resolveModelConfig(readJsonFile(configFile, MODEL_FILE_LIMITS['config.json']));
  } catch (err) {
    const msg = (err as Error).message;
    throw new Error(msg.startsWith(configFile) ? msg : `${configFile}: ${msg}`);
  }
  const tokFile = path.join(dir, CHECKPOINT_FILES.tokenizer);
  const tokenizer = CharTokenizer.fromJSON(readJsonFile(tokFile, MODEL_FILE_LIMITS['tokenizer.json']), tokFile);
  if (tokenizer.vocabSize !== config.vocabSize)
    throw new Error(`${configFile}: vocabSize ${config.vocabSize} does not match ${tokFile} (${tokenizer.vocabSize} tokens)`);
  const wFile = path.join(dir, CHECKPOINT_FILES.weights);
  const expected = parameterShapes(config);
  // Read whole, so bounded by what the config needs: float32 parameters, the length prefix, the largest header allowed.
  const maxBytes = 8 + MAX_HEADER_BYTES + 4 * expected.reduce((s, { shape }) => s + shape.reduce((a, b) => a * b, 1), 0);
  const bytes = readRegularFile(wFile, maxBytes);
  const { tensors, metadata } = decodeSafetensors(bytes, wFile);
  const weights = new Map<string, Float32Array>();
  for (const { name, shape } of expected) {
    const t = tensors.get(name);
    if (!t) throw new Error(`${wFile}: tensor "${name}" is missing (expected shape [${shape}])`);
    if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
      throw new Error(`${wFile}: tensor "${name}" has shape [${t.shape}], the config needs [${shape}]`);
    }
    weights.set(name, t.data);
  }
  const extra = [...tensors.keys()].filter((n) => !expected.some((e) => e.name === n));
  if (extra.length)
    throw new Error(`${wFile}: tensor "${extra[0]}" is not a parameter of this config${extra.length > 1 ? ` (and ${extra.length - 1} more)` : ''}`);
  return { config, tokenizer, weights, metadata };
}

/** Loads a checkpoint into a new model (the caller disposes it). */
export function loadCheckpoint(dir: string): { model: Transformer; tokenizer: CharTokenizer; metadata: Record<string, string> } {
  const c = readCheckpoint(dir);
  const model = new Transformer(c.config);
  model.assign(c.weights);
  return { model, tokenizer: c.tokenizer, metadata: c.metadata };
}
