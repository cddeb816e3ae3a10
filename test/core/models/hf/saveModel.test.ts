// Model folders written by the lab (src/core/models/hf/saveModel.ts): the merged BF16 qwen3-tiny +
// qwen3-tiny-lora against transformers' own save of peft's merge (test/fixtures/hf/expected-export,
// made by scripts/fixtures/check_exports.py --make-expected); merged == base + adapter through the
// float64 reference; sharding; streaming (header first, one tensor at a time); atomicity; the
// copied and rewritten files; errors naming the file and tensor. Loading with transformers itself:
// scripts/fixtures/check_exports.py (dev only).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readHfConfig } from '../../../../src/core/models/hf/config';
import { readLoraAdapter } from '../../../../src/core/models/hf/loraFiles';
import { referenceLogits, type WeightLookup } from '../../../../src/core/models/hf/reference';
import { openTensorSource } from '../../../../src/core/models/hf/safetensorsFile';
import { configWithDtype, mergeLoraPair, planShards, saveMergedModel, type ExportDtype, type SavedModel } from '../../../../src/core/models/hf/saveModel';
import type { HfModelConfig, LoraPair, TensorEntry, TensorSource } from '../../../../src/core/models/hf/types';

const FIXTURES = path.resolve(__dirname, '../../../fixtures/hf');
const EXPECTED_MERGED = path.join(FIXTURES, 'expected-export', 'qwen3-tiny-lora-merged');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'srpo-hfsavemodel-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

interface Sequences {
  sequences: { ids: number[]; logits: number[][] }[];
}
const readJson = <T = Record<string, unknown>>(file: string): T => JSON.parse(fs.readFileSync(file, 'utf8')) as T;

/** Writes `base` (+ `adapter`) to a fresh folder under tmp. */
function exportModel(
  name: string,
  base: string,
  dtype: ExportDtype,
  opts: { adapter?: string; maxShardBytes?: number; source?: (s: TensorSource) => TensorSource } = {},
): SavedModel {
  const sourceDir = path.join(FIXTURES, base);
  const config = readHfConfig(sourceDir);
  const lora = opts.adapter ? readLoraAdapter(path.join(FIXTURES, opts.adapter), config).pairs : undefined;
  const files = openTensorSource(sourceDir);
  try {
    return saveMergedModel(path.join(tmp, name), {
      sourceDir,
      config,
      source: opts.source ? opts.source(files) : files,
      lora,
      dtype,
      maxShardBytes: opts.maxShardBytes,
    });
  } finally {
    files.close();
  }
}

/** Every tensor of a folder, read (small fixtures only). */
function tensorsOf(dir: string): Map<string, { shape: number[]; dtype: string; data: Float32Array }> {
  const src = openTensorSource(dir);
  try {
    return new Map(src.names().map((n) => [n, { shape: src.get(n)!.shape, dtype: src.get(n)!.dtype, data: src.get(n)!.read() }]));
  } finally {
    src.close();
  }
}

/** Reference logits of the expected.json sequences of `seqFolder`, for a model folder (+ pairs). */
function logitsOf(dir: string, ids: number[][], lora?: LoraPair[]): Float64Array[][] {
  const config = readHfConfig(dir);
  const tensors = tensorsOf(dir);
  const weight: WeightLookup = (name) =>
    tensors.get(name)?.data ??
    (() => {
      throw new Error(`no tensor ${name}`);
    })();
  return ids.map((seq) => referenceLogits(config, weight, seq, lora));
}

/** Largest |a - b| / (1 + |b|). */
function maxRelErr(ours: Float64Array[][], theirs: (Float64Array | number[])[][]): number {
  let worst = 0;
  ours.forEach((seq, s) =>
    seq.forEach((row, t) => row.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - theirs[s][t][i]) / (1 + Math.abs(theirs[s][t][i])))))),
  );
  return worst;
}

const headerOf = (file: string): Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }> => {
  const b = fs.readFileSync(file);
  return JSON.parse(b.subarray(8, 8 + Number(b.readBigUInt64LE(0))).toString('utf8'));
};

describe("merged BF16 qwen3-tiny + qwen3-tiny-lora equals transformers' save of peft's merge", () => {
  const saved = exportModel('qwen3-merged-bf16', 'qwen3-tiny', 'BF16', { adapter: 'qwen3-tiny-lora' });

  it('model.safetensors: same header (names, BF16, shapes, offsets) and the same bytes', () => {
    const ours = path.join(saved.dir, 'model.safetensors');
    const theirs = path.join(EXPECTED_MERGED, 'model.safetensors');
    expect(headerOf(ours)).toEqual(headerOf(theirs));
    expect(
      Object.values(headerOf(ours))
        .filter((e) => 'dtype' in e)
        .every((e) => e.dtype === 'BF16'),
    ).toBe(true);
    expect(fs.readFileSync(ours).equals(fs.readFileSync(theirs))).toBe(true);
  });

  it('config.json is the text transformers wrote (dtype bfloat16), generation and tokenizer files copied', () => {
    expect(fs.readFileSync(path.join(saved.dir, 'config.json'), 'utf8')).toBe(fs.readFileSync(path.join(EXPECTED_MERGED, 'config.json'), 'utf8'));
    expect(readHfConfig(saved.dir).dtype).toBe('BF16');
    expect(saved.files).toEqual([
      'chat_template.jinja',
      'config.json',
      'generation_config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    for (const f of ['chat_template.jinja', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json']) {
      expect(fs.readFileSync(path.join(saved.dir, f)).equals(fs.readFileSync(path.join(FIXTURES, 'qwen3-tiny', f)))).toBe(true);
    }
    expect(saved).toMatchObject({ weightFiles: ['model.safetensors'], tensors: 24, totalBytes: 70080 });
  });

  it("the reference on it reproduces transformers' logits of peft's merged model within 1e-4", () => {
    const expected = readJson<Sequences>(path.join(EXPECTED_MERGED, 'expected.json'));
    const ours = logitsOf(
      saved.dir,
      expected.sequences.map((s) => s.ids),
    );
    expect(
      maxRelErr(
        ours,
        expected.sequences.map((s) => s.logits),
      ),
    ).toBeLessThan(1e-4);
  });

  it('bf16 costs accuracy against the unrounded base + adapter (bounded), and the merge is not vacuous', () => {
    const ids = readJson<Sequences>(path.join(FIXTURES, 'qwen3-tiny-lora', 'expected.json')).sequences.map((s) => s.ids);
    const base = path.join(FIXTURES, 'qwen3-tiny');
    const pairs = readLoraAdapter(path.join(FIXTURES, 'qwen3-tiny-lora'), readHfConfig(base)).pairs;
    const ours = logitsOf(saved.dir, ids);
    const err = maxRelErr(ours, logitsOf(base, ids, pairs));
    // Logits std ~5 through two random layers; bf16 keeps 8 significant bits of every weight. Measured
    // 0.18 (the bf16 weights are bit-identical to torch's cast of peft's float32 merge, see above).
    expect(err).toBeLessThan(0.5);
    expect(maxRelErr(ours, logitsOf(base, ids))).toBeGreaterThan(10 * err); // the base alone is far off
  });
});

describe('merged F32 == base + adapter through the float64 reference (within 1e-5)', () => {
  for (const [adapter, base] of [
    ['qwen3-tiny-lora', 'qwen3-tiny'],
    ['qwen3-tiny-rslora', 'qwen3-tiny'],
    ['qwen2-tiny-lora', 'qwen2-tiny'],
  ] as const) {
    it(`${adapter} merged into ${base}`, () => {
      const saved = exportModel(`f32-${adapter}`, base, 'F32', { adapter });
      const ids = readJson<Sequences>(path.join(FIXTURES, adapter, 'expected.json')).sequences.map((s) => s.ids);
      const baseDir = path.join(FIXTURES, base);
      const pairs = readLoraAdapter(path.join(FIXTURES, adapter), readHfConfig(baseDir)).pairs;
      const merged = logitsOf(saved.dir, ids);
      expect(maxRelErr(merged, logitsOf(baseDir, ids, pairs))).toBeLessThan(1e-5);
      expect(maxRelErr(merged, logitsOf(baseDir, ids))).toBeGreaterThan(1e-2); // not vacuous
      expect(
        Object.values(headerOf(path.join(saved.dir, 'model.safetensors')))
          .filter((e) => 'dtype' in e)
          .every((e) => e.dtype === 'F32'),
      ).toBe(true);
      expect(readHfConfig(saved.dir).dtype).toBe('F32');
    });
  }

  it('without an adapter, F16 weights widen to F32 exactly; tensors not adapted are copied exactly', () => {
    const saved = exportModel('llama-f32', 'llama-tiny-sharded', 'F32');
    const ours = tensorsOf(saved.dir);
    const src = tensorsOf(path.join(FIXTURES, 'llama-tiny-sharded'));
    expect([...ours.keys()].sort()).toEqual([...src.keys()].sort());
    for (const [name, t] of src) expect(Buffer.from(ours.get(name)!.data.buffer).equals(Buffer.from(t.data.buffer))).toBe(true);
  });
});

describe('config.json', () => {
  it('an older config (torch_dtype) gets both dtype keys; every other byte stays', () => {
    const saved = exportModel('llama-bf16', 'llama-tiny-sharded', 'BF16');
    const src = fs.readFileSync(path.join(FIXTURES, 'llama-tiny-sharded', 'config.json'), 'utf8');
    const out = fs.readFileSync(path.join(saved.dir, 'config.json'), 'utf8');
    expect(readJson(path.join(saved.dir, 'config.json'))).toEqual({ ...JSON.parse(src), torch_dtype: 'bfloat16', dtype: 'bfloat16' });
    expect(out.replace(/"(torch_)?dtype": "[a-z0-9]+",\n\s*/g, '')).toBe(src.replace(/"(torch_)?dtype": "[a-z0-9]+",\n\s*/g, ''));
  });

  it('configWithDtype keeps Python number spellings, inserts a missing dtype, and rewrites what it cannot edit', () => {
    const text = '{\n  "dtype": "float32",\n  "rms_norm_eps": 1e-06,\n  "sub": {\n    "dtype": "float16"\n  },\n  "rope_theta": 10000.0\n}\n';
    expect(configWithDtype(text, 'c.json', 'bfloat16')).toBe(text.replace('"float32"', '"bfloat16"'));
    expect(configWithDtype('{\n  "a": 1.0\n}\n', 'c.json', 'float32')).toBe('{\n  "dtype": "float32",\n  "a": 1.0\n}\n');
    expect(JSON.parse(configWithDtype('{"dtype":"float16","a":1}', 'c.json', 'bfloat16'))).toEqual({ dtype: 'bfloat16', a: 1 });
    expect(() => configWithDtype('{nope', 'src/config.json', 'float32')).toThrow(/src\/config\.json: cannot read as JSON/);
  });
});

describe('sharding', () => {
  const LIMIT = 40_000;
  const one = exportModel('qwen3-rs-one', 'qwen3-tiny', 'F32', { adapter: 'qwen3-tiny-rslora' });
  const sharded = exportModel('qwen3-rs-sharded', 'qwen3-tiny', 'F32', { adapter: 'qwen3-tiny-rslora', maxShardBytes: LIMIT });
  const index = readJson<{ metadata: { total_size: number; total_parameters: number }; weight_map: Record<string, string> }>(
    path.join(sharded.dir, 'model.safetensors.index.json'),
  );

  it('shard files named as transformers names them, with an index listing every tensor once', () => {
    const n = sharded.weightFiles.length;
    expect(n).toBeGreaterThan(2);
    expect(sharded.weightFiles).toEqual(
      Array.from({ length: n }, (_, i) => `model-${String(i + 1).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.safetensors`),
    );
    expect(fs.existsSync(path.join(sharded.dir, 'model.safetensors'))).toBe(false);
    expect(index.metadata).toEqual({ total_size: one.totalBytes, total_parameters: one.totalBytes / 4 });
    expect(Object.keys(index.weight_map).sort()).toEqual(
      Object.keys(headerOf(path.join(one.dir, 'model.safetensors')))
        .filter((k) => k !== '__metadata__')
        .sort(),
    );
    for (const [name, file] of Object.entries(index.weight_map)) expect(Object.keys(headerOf(path.join(sharded.dir, file)))).toContain(name);
  });

  it('greedy in name order: each shard within the limit unless it is one tensor, and the next tensor would not have fit', () => {
    const shards = sharded.weightFiles.map((f) => Object.entries(headerOf(path.join(sharded.dir, f))).filter(([k]) => k !== '__metadata__'));
    const names = shards.flat().map(([k]) => k);
    expect(names).toEqual([...names].sort());
    const size = (s: (typeof shards)[number]): number => s.reduce((acc, [, e]) => acc + e.data_offsets[1] - e.data_offsets[0], 0);
    shards.forEach((s, i) => {
      if (s.length > 1) expect(size(s)).toBeLessThanOrEqual(LIMIT);
      if (i + 1 < shards.length) {
        const next = shards[i + 1][0][1];
        expect(size(s) + next.data_offsets[1] - next.data_offsets[0]).toBeGreaterThan(LIMIT);
      }
    });
    expect(shards.some((s) => s.length === 1 && size(s) > LIMIT)).toBe(true); // the 40,960-byte embedding alone
  });

  it('the sharded folder reads back to the same tensors as the single file', () => {
    const a = tensorsOf(one.dir);
    const b = tensorsOf(sharded.dir);
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    for (const [name, t] of a) expect(Buffer.from(b.get(name)!.data.buffer).equals(Buffer.from(t.data.buffer))).toBe(true);
  });

  it("planShards: huggingface_hub's example sizes, and an oversized tensor alone", () => {
    const plan = (sizes: number[], limit: number): number[][] =>
      planShards(
        sizes.map((bytes) => ({ bytes })),
        limit,
      ).map((s) => s.map((t) => t.bytes));
    expect(plan([6, 6, 2, 6, 2, 2], 10)).toEqual([[6], [6, 2], [6, 2, 2]]);
    expect(plan([3, 12, 3], 10)).toEqual([[3], [12], [3]]);
    expect(plan([12], 10)).toEqual([[12]]);
  });
});

/** A source that calls `onRead(name)` before each read. */
function watched(src: TensorSource, onRead: (name: string) => void): TensorSource {
  return {
    origin: src.origin,
    names: () => src.names(),
    get: (name) => {
      const e = src.get(name);
      if (!e) return undefined;
      const w: TensorEntry = { ...e, read: () => (onRead(name), e.read()) };
      return w;
    },
  };
}

describe('streaming and atomicity', () => {
  it('each shard: header written first, then each tensor read once and appended before the next is read', () => {
    const sizes: [string, number][] = [];
    const saved = exportModel('streamed', 'qwen3-tiny', 'BF16', {
      adapter: 'qwen3-tiny-lora',
      maxShardBytes: 30_000,
      source: (s) =>
        watched(s, (name) => {
          const partial = fs.readdirSync(tmp).filter((f) => f.startsWith('.streamed.partial-'));
          expect(partial.length).toBe(1);
          const files = fs.readdirSync(path.join(tmp, partial[0])).sort();
          sizes.push([name, fs.statSync(path.join(tmp, partial[0], files[files.length - 1])).size]);
        }),
    });
    const names = sizes.map(([n]) => n);
    expect(names).toEqual([...new Set(names)]); // once each
    expect(names.length).toBe(saved.tensors);
    for (const file of saved.weightFiles) {
      const bytes = fs.readFileSync(path.join(saved.dir, file));
      const dataStart = 8 + Number(bytes.readBigUInt64LE(0));
      for (const [name, entry] of Object.entries(headerOf(path.join(saved.dir, file)))) {
        if (name === '__metadata__') continue;
        expect(sizes.find(([n]) => n === name)![1]).toBe(dataStart + entry.data_offsets[0]);
      }
    }
    expect(fs.readdirSync(tmp).filter((f) => f.includes('.partial-'))).toEqual([]);
  });

  it('a read failing mid-write leaves no folder at the destination, no partial folder, and names file and tensor', () => {
    let reads = 0;
    const failing = (s: TensorSource): TensorSource =>
      watched(s, (name) => {
        reads++;
        if (name === 'model.layers.1.mlp.down_proj.weight') throw new Error('disk on fire');
      });
    expect(() => exportModel('failed', 'qwen3-tiny', 'BF16', { adapter: 'qwen3-tiny-lora', maxShardBytes: 30_000, source: failing })).toThrow(
      /failed\.partial-[^/]+\/model-0000\d-of-0000\d\.safetensors: tensor "model\.layers\.1\.mlp\.down_proj\.weight" \(from .*qwen3-tiny\/model\.safetensors\): disk on fire/,
    );
    expect(reads).toBeGreaterThan(5); // it failed mid-write, after earlier tensors were written
    expect(fs.existsSync(path.join(tmp, 'failed'))).toBe(false);
    expect(fs.readdirSync(tmp).filter((f) => f.includes('.partial-'))).toEqual([]);
  });

  it('a destination holding files is refused before anything is read', () => {
    const dest = path.join(tmp, 'occupied');
    fs.mkdirSync(dest);
    fs.writeFileSync(path.join(dest, 'keep'), 'x');
    expect(() => exportModel('occupied', 'qwen3-tiny', 'F32')).toThrow(/occupied: already exists and is not an empty folder/);
    expect(fs.readdirSync(dest)).toEqual(['keep']);
  });
});

describe('refusals before anything is written', () => {
  const baseDir = path.join(FIXTURES, 'qwen3-tiny');
  const config: HfModelConfig = readHfConfig(baseDir);
  const pairs = readLoraAdapter(path.join(FIXTURES, 'qwen3-tiny-lora'), config).pairs;
  const attempt =
    (name: string, opts: { lora?: LoraPair[]; sourceDir?: string; drop?: string; dtype?: string }): (() => void) =>
    () => {
      const files = openTensorSource(baseDir);
      const source: TensorSource = opts.drop
        ? {
            origin: files.origin,
            names: () => files.names().filter((n) => n !== opts.drop),
            get: (n) => (n === opts.drop ? undefined : files.get(n)),
          }
        : files;
      try {
        saveMergedModel(path.join(tmp, name), {
          sourceDir: opts.sourceDir ?? baseDir,
          config,
          source,
          lora: opts.lora,
          dtype: (opts.dtype ?? 'BF16') as ExportDtype,
        });
      } finally {
        files.close();
        expect(fs.existsSync(path.join(tmp, name))).toBe(false);
      }
    };

  it('a checkpoint missing a tensor (the check of weights.ts)', () => {
    expect(attempt('missing', { drop: 'model.norm.weight' })).toThrow(/model\.norm\.weight/);
  });

  it('a LoRA pair for a tensor the checkpoint lacks, or of the wrong shape, or given twice', () => {
    expect(attempt('nolayer', { lora: [{ ...pairs[0], target: 'model.layers.7.mlp.down_proj.weight' }] })).toThrow(
      /LoRA pair for "model\.layers\.7\.mlp\.down_proj\.weight": .*qwen3-tiny has no such tensor/,
    );
    const q = pairs.find((p) => p.target.endsWith('q_proj.weight'))!;
    expect(attempt('shape', { lora: [{ ...q, target: 'model.layers.0.self_attn.k_proj.weight' }] })).toThrow(
      /LoRA pair for "model\.layers\.0\.self_attn\.k_proj\.weight": adapts \[64, 32\], but .*model\.safetensors has it as \[32, 32\]/,
    );
    expect(attempt('twice', { lora: [q, q] })).toThrow(/q_proj\.weight": given twice/);
  });

  it('a source folder without config.json; a dtype that cannot be written', () => {
    expect(attempt('noconfig', { sourceDir: tmp })).toThrow(/config\.json: missing/);
    expect(attempt('f16', { dtype: 'F16' })).toThrow(/dtype "F16" is not one of F32, BF16/);
  });
});

describe('mergeLoraPair', () => {
  it('W + scale * B A on a hand-computed 2x2', () => {
    // W [[1, 2], [3, 4]], A [[1, -1]] (r 1), B [[2], [0.5]], scale 3: delta [[6, -6], [1.5, -1.5]].
    const w = new Float32Array([1, 2, 3, 4]);
    mergeLoraPair(w, { target: 't', a: new Float32Array([1, -1]), b: new Float32Array([2, 0.5]), r: 1, inFeatures: 2, outFeatures: 2, scale: 3 });
    expect([...w]).toEqual([7, -4, 4.5, 2.5]);
  });

  it('names the tensor when sizes disagree', () => {
    expect(() =>
      mergeLoraPair(new Float32Array(3), { target: 'x.weight', a: new Float32Array(2), b: new Float32Array(2), r: 1, inFeatures: 2, outFeatures: 2, scale: 1 }),
    ).toThrow(/x\.weight: has 3 values, the LoRA pair needs \[2, 2\]/);
  });
});
