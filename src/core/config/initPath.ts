/**
 * The path fields of a run config (today only `policies.init`), checked where a config is
 * resolved for a new run (`srpo-lab train`, the API's validateConfig / createRun) so that a bad
 * path is refused before any run exists, instead of failing inside the engine. A registry: each
 * path field names how to read it and its check; a check returns null (fine) or a message.
 *
 * `policies.init` must be a Hugging Face model folder the engine can start from: `config.json`
 * naming a `model_type`, plus `model.safetensors` or `model.safetensors.index.json` (a sharded
 * model). The lab's own warm starts are such folders (models/hf/labFolder.ts). A checkpoint of
 * the lab's former character Transformer (a config.json without `model_type`, or one sub-folder
 * per policy) is refused, saying how to make its successor (policies/registry.ts, decision 069).
 * Messages name the field, the path given and what was expected, never what the folder holds:
 * an error must not become a way to list a folder. In web mode these checks run only on paths
 * inside the folders `serve --allow` names (src/core/host/pathRoots.ts checks first, with one
 * refusal for every path outside them), so "does not exist" says nothing about the rest of the disk.
 *
 * Not here: reading the folder (models/hf/load.ts), resolving defaults (runConfig.ts).
 * Tests: test/core/config/initPath.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { missingDataSlots, missingDataSlotsMessage } from '../data/datasetTasks';
import type { RunConfig } from './runConfig';

/** The weights file of a model folder: one file, or the index of a sharded Hugging Face model. */
export const MODEL_WEIGHT_FILES: readonly string[] = ['model.safetensors', 'model.safetensors.index.json'];

const isFile = (p: string): boolean => {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
};

const isDir = (p: string): boolean => {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/** Whether `dir` holds one model: config.json and its weights. */
export function isModelFolder(dir: string): boolean {
  return isFile(path.join(dir, 'config.json')) && MODEL_WEIGHT_FILES.some((f) => isFile(path.join(dir, f)));
}

/** Whether `dir` holds a Hugging Face config.json (it names a `model_type`; the lab's own does not). */
export function isHfModelFolder(dir: string): boolean {
  try {
    const json = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')) as { model_type?: unknown };
    return typeof json.model_type === 'string';
  } catch {
    return false;
  }
}

let root: string | null = null;

/**
 * The lab's root (the folder with its package.json, where the presets' resources/warmstart
 * lives): what the engine resolves relative `policies.init` paths against. Found by walking up
 * from this file, so it holds from src/ and from the bundles in out/ alike.
 */
export function labRoot(): string {
  if (root) return root;
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  root = fs.existsSync(path.join(dir, 'package.json')) ? dir : process.cwd();
  return root;
}

/** Null when `init` names a folder the engine can start from; else why not (no folder contents). */
export function checkInitPath(init: string, baseDir = labRoot()): string | null {
  const dir = path.resolve(baseDir, init);
  const shown = path.isAbsolute(init) ? `"${init}"` : `"${init}" (resolved against the lab folder: ${dir})`;
  if (!fs.existsSync(dir)) return `${shown} does not exist`;
  if (!isDir(dir)) return `${shown} is not a folder`;
  const former =
    `is a checkpoint of the lab's former character Transformer, which this version no longer reads (its weights do not convert to the one model family's). ` +
    'Make a new warm start: npm run lab -- warmstart --preset NAME --out DIR (the quick presets ship theirs in resources/warmstart)';
  if (isModelFolder(dir)) return isHfModelFolder(dir) ? null : `${shown} ${former}`;
  const expected = 'expected a Hugging Face model folder: config.json (with model_type) and model.safetensors or model.safetensors.index.json';
  let subdirs: string[];
  try {
    subdirs = fs.readdirSync(dir).filter((n) => isDir(path.join(dir, n)));
  } catch {
    return `${shown} cannot be read`;
  }
  // One sub-folder per policy, each a model folder: the former run-checkpoint layout.
  if (subdirs.length > 0 && subdirs.every((n) => isModelFolder(path.join(dir, n)))) return `${shown} ${former}`;
  return `${shown} is not a model folder (${expected})`;
}

interface PathField {
  read(config: RunConfig): string | null;
  check(value: string, baseDir: string): string | null;
}

/** Every path field of the run config and its check (a new path field is one line here). */
export const RUN_CONFIG_PATH_FIELDS = {
  'policies.init': { read: (c) => c.policies.init, check: checkInitPath },
  // Dataset slots ("$aime24") of the *-paper-data presets that --set tasks.paths.NAME did not fill.
  'tasks.paths': { read: (c) => missingDataSlots(c).join(',') || null, check: (v) => missingDataSlotsMessage(v.split(',')) },
} satisfies Record<string, PathField>;

/** The path fields of `config` that fail their check, as `{ path, message }`. */
export function runConfigPathErrors(config: RunConfig, baseDir = labRoot()): { path: string; message: string }[] {
  return Object.entries(RUN_CONFIG_PATH_FIELDS).flatMap(([field, f]: [string, PathField]) => {
    const value = f.read(config);
    const message = value === null ? null : f.check(value, baseDir);
    return message === null ? [] : [{ path: field, message }];
  });
}

/** Throws `run config: field "policies.init": ...` for the first path field that fails. */
export function assertRunConfigPaths(config: RunConfig, baseDir = labRoot()): void {
  const [first] = runConfigPathErrors(config, baseDir);
  if (first) throw new Error(`run config: field "${first.path}": ${first.message}`);
}
