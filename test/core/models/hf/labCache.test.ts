/**
 * The cache of fresh lab folders (models/hf/labCache.ts) that a run with `policies.init` null
 * trains: one folder per (shape, seed), found again on the next call; its weights a pure function
 * of both, so a deleted folder is written again byte for byte; `$SRPO_LAB_MODEL_CACHE` is where it
 * goes; the shape's MLP ratio and tied embeddings reach config.json (config/labShape.ts
 * `labShapeOf` reads them from a run config) and the folder loads. Each test has its own cache
 * folder.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { presetConfig } from '../../../../src/core/config';
import { labShapeOf } from '../../../../src/core/config/labShape';
import { labModelCacheRoot, labModelDir, labModelFilesDir } from '../../../../src/core/models/hf/labCache';
import type { LabShape } from '../../../../src/core/models/hf/labFolder';
import { loadHfModel } from '../../../../src/core/models/hf/load';

const SHAPE: LabShape = { dModel: 16, nLayers: 1, nHeads: 2, contextLength: 32, normEps: 1e-5, initStd: 0.02 };

const weights = (dir: string) => readFileSync(join(dir, 'model.safetensors'));
const configJson = (dir: string) => JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;

let cache: string;
const saved = process.env.SRPO_LAB_MODEL_CACHE;
beforeEach(() => {
  cache = join(mkdtempSync(join(tmpdir(), 'srpo-labcache-test-')), 'cache');
  process.env.SRPO_LAB_MODEL_CACHE = cache;
});
afterEach(() => {
  rmSync(dirname(cache), { recursive: true, force: true });
  if (saved === undefined) delete process.env.SRPO_LAB_MODEL_CACHE;
  else process.env.SRPO_LAB_MODEL_CACHE = saved;
});

describe('labModelDir', () => {
  it('writes the folder under $SRPO_LAB_MODEL_CACHE, and finds the same one on the next call', () => {
    expect(labModelCacheRoot()).toBe(cache);
    const dir = labModelDir(SHAPE, 7);
    expect(dirname(dir)).toBe(cache);
    expect(readdirSync(dir).sort()).toEqual([
      'chat_template.jinja',
      'config.json',
      'generation_config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    const bytes = weights(dir);
    expect(labModelDir(SHAPE, 7)).toBe(dir);
    expect(weights(dir).equals(bytes)).toBe(true);
  });

  it('the same shape and seed give identical weights in another cache; another seed or shape, other weights and another folder', () => {
    const a = labModelDir(SHAPE, 7);
    const first = weights(a);
    const b = labModelDir(SHAPE, 8);
    expect(b).not.toBe(a);
    expect(weights(b).length).toBe(first.length);
    expect(weights(b).equals(first)).toBe(false);
    const wider = labModelDir({ ...SHAPE, dModel: 32 }, 7);
    expect(wider).not.toBe(a);
    expect(configJson(wider).hidden_size).toBe(32);

    const other = join(dirname(cache), 'other');
    process.env.SRPO_LAB_MODEL_CACHE = other;
    const c = labModelDir(SHAPE, 7);
    expect(dirname(c)).toBe(other);
    expect(weights(c).equals(first)).toBe(true);
  });

  it('a deleted folder is written again, byte for byte', () => {
    const dir = labModelDir(SHAPE, 7);
    const files = Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f))]));
    rmSync(dir, { recursive: true });
    expect(existsSync(dir)).toBe(false);
    expect(labModelDir(SHAPE, 7)).toBe(dir);
    for (const [f, bytes] of Object.entries(files)) expect(readFileSync(join(dir, f)).equals(bytes), f).toBe(true);
  });

  it("the shape's mlpRatio and tiedEmbeddings reach config.json, and the folder loads with them", () => {
    const dir = labModelDir({ ...SHAPE, mlpRatio: 2, tiedEmbeddings: true }, 7);
    const json = configJson(dir);
    expect(json.intermediate_size).toBe(24); // 2 x 2 x 16 / 3 = 21.3, to a multiple of 8
    expect(json.tie_word_embeddings).toBe(true);
    expect(configJson(labModelDir(SHAPE, 7))).toMatchObject({ intermediate_size: 40, tie_word_embeddings: false }); // the defaults: ratio 4, untied
    const loaded = loadHfModel(dir);
    try {
      expect(loaded.config).toMatchObject({ intermediateSize: 24, tieWordEmbeddings: true, hiddenSize: 16, numLayers: 1 });
    } finally {
      loaded.dispose();
    }
  });
});

describe('labModelFilesDir', () => {
  it("a lab folder's files without weights, written once, in another folder than any seed's", () => {
    const dir = labModelFilesDir(SHAPE);
    expect(dirname(dir)).toBe(cache);
    expect(existsSync(join(dir, 'model.safetensors'))).toBe(false);
    expect(configJson(labModelDir(SHAPE, 7))).toMatchObject(configJson(dir)); // the weights' folder adds their dtype
    expect(labModelDir(SHAPE, 7)).not.toBe(dir);
    expect(labModelFilesDir(SHAPE)).toBe(dir);
    expect(readdirSync(cache).filter((f) => f.startsWith('.'))).toEqual([]); // no staging folder left
  });
});

describe('labShapeOf', () => {
  it("a run config's model preset with the preset's and the caller's overrides", () => {
    // math-quick overrides the tiny preset to d64 x 2 layers, 2 heads, ctx 256; the caller adds layers and the MLP ratio.
    const config = presetConfig('math-quick', { policies: { init: null, modelOverrides: { nLayers: 3, mlpRatio: 2 } } });
    expect(labShapeOf(config)).toEqual({
      dModel: 64,
      nLayers: 3,
      nHeads: 2,
      contextLength: 256,
      mlpRatio: 2,
      tiedEmbeddings: false,
      normEps: 1e-5,
      initStd: 0.02,
    });
  });

  it('a shape the model schema refuses is an error naming the field', () => {
    const config = presetConfig('math-quick', { policies: { init: null, modelOverrides: { nHeads: 3 } } });
    expect(() => labShapeOf(config)).toThrow(/nHeads.*must divide dModel/);
  });
});
