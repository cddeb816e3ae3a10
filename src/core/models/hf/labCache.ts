/**
 * Where a run's fresh lab model lives: a run whose `policies.init` is null trains a seeded lab
 * folder (labFolder.ts) of its configured shape; this writes that folder once per (shape, seed)
 * and finds it after.
 *
 * Decision (docs/decisions/069): the folder goes to a cache, `$SRPO_LAB_MODEL_CACHE` or
 * `<tmp>/srpo-lab-models/<hash>`, not into the run. Its weights are a pure function of the shape
 * and the seed, so a deleted cache is rewritten identically (a resume reads its trained weights
 * from the run checkpoint and needs only the base's files); a write is atomic (labFolder.ts
 * stages and renames), so two runs racing for one folder both end with a complete one.
 *
 * Not here: the folder's files (labFolder.ts), a config's shape (config/labShape.ts).
 * Tests: test/core/models/hf/labCache.test.ts.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { labHfConfigJson, writeLabFolder, writeLabFolderFiles, type LabShape } from './labFolder';

/** Where lab folders are cached (see the header). */
export function labModelCacheRoot(): string {
  return process.env.SRPO_LAB_MODEL_CACHE || path.join(os.tmpdir(), 'srpo-lab-models');
}

function cacheDir(shape: LabShape, seed: number | null): string {
  const key = createHash('sha256')
    .update(JSON.stringify({ config: labHfConfigJson(shape), seed }))
    .digest('hex')
    .slice(0, 16);
  return path.join(labModelCacheRoot(), seed === null ? `files-${key}` : `model-${key}`);
}

const has = (dir: string, file: string): boolean => fs.existsSync(path.join(dir, file));

/** The folder of a fresh lab model of `shape` with weights seeded by `seed`: written on the first call, found on the next. */
export function labModelDir(shape: LabShape, seed: number): string {
  const dir = cacheDir(shape, seed);
  if (has(dir, 'model.safetensors')) return dir;
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  try {
    writeLabFolder(dir, shape, { seed });
  } catch (err) {
    if (!has(dir, 'model.safetensors')) throw err; // another process wrote it first: the same folder
  }
  return dir;
}

/**
 * A folder with a lab model's files but no weights (config.json, tokenizer, template), for the
 * checks made when a config is resolved (config/promptRoom.ts): cheap at any preset size.
 */
export function labModelFilesDir(shape: LabShape): string {
  const dir = cacheDir(shape, null);
  if (has(dir, 'tokenizer.json')) return dir;
  fs.mkdirSync(labModelCacheRoot(), { recursive: true });
  const staging = fs.mkdtempSync(path.join(labModelCacheRoot(), '.files-'));
  try {
    writeLabFolderFiles(staging, shape);
    try {
      fs.renameSync(staging, dir);
    } catch (err) {
      if (!has(dir, 'tokenizer.json')) throw err;
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return dir;
}
