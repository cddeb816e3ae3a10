/**
 * Model folders cannot hang or exhaust the loader: every file it reads is checked to be a regular
 * file within its stated size (src/core/models/fileLimits.ts, src/core/util/regularFile.ts)
 * before it is opened, so /dev/zero behind a symlink, a FIFO, a folder or an oversized file in
 * place of config.json, tokenizer.json, the chat template, the adapter config or the weights is
 * refused at once, naming the file and what it is; config.json's sizes are held against the
 * weights' headers before anything sized by them is built (`num_hidden_layers: 1000000`); and
 * numbers are printed as they are (a header length of 2^62, a lora_alpha of 1e309).
 *
 * FIFOs come from the shell's `mkfifo` (skipped, saying so, where it is missing). So that a
 * loader which did block on one (the old code) fails instead of hanging the run, a writer opens
 * each FIFO for a moment and closes it: a blocked reader then sees an empty file.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { MODEL_FILE_LIMITS } from '../../../../src/core/models/fileLimits';
import { loadHfModel, readHfFolder } from '../../../../src/core/models/hf/load';
import { readHfConfig } from '../../../../src/core/models/hf/config';
import { writeLabFolder } from '../../../../src/core/models/hf/labFolder';
import { parseLoraConfig } from '../../../../src/core/models/hf/loraFiles';
import { saveMergedModel } from '../../../../src/core/models/hf/saveModel';
import { openTensorSource } from '../../../../src/core/models/hf/safetensorsFile';
import { HfTokenizer } from '../../../../src/core/models/hf/tokenizer';
import { readRegularFile } from '../../../../src/core/util/regularFile';

const FIXTURES = resolve(__dirname, '../../../fixtures/hf');
const HAVE_DEV_ZERO = existsSync('/dev/zero');
const HAVE_MKFIFO = spawnSync('mkfifo', ['--version']).error === undefined && process.platform !== 'win32';
if (!HAVE_DEV_ZERO) console.warn('file-check tests with /dev/zero skipped: this system has no /dev/zero');
if (!HAVE_MKFIFO) console.warn('file-check tests with FIFOs skipped: no mkfifo on this system');

/** A writable copy of a fixture folder. */
function copyOf(name: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'hf-files-')), name);
  cpSync(join(FIXTURES, name), dir, { recursive: true });
  return dir;
}

/** Replaces `file` by a symlink to /dev/zero. */
function linkToZero(file: string): void {
  rmSync(file);
  symlinkSync('/dev/zero', file);
}

/** Replaces `file` by a FIFO and starts a writer that opens it for a second, then closes it (header). */
function replaceByFifo(file: string): ChildProcess {
  rmSync(file);
  const made = spawnSync('mkfifo', [file]);
  if (made.status !== 0) throw new Error(`mkfifo ${file} failed: ${made.stderr.toString()}`);
  return spawn('sh', ['-c', 'exec 3>"$0"; sleep 1', file], { stdio: 'ignore' });
}

/** Runs `fn` and returns its error message and the seconds it took to come; fails when `fn` returns. */
function errorOf(fn: () => unknown): { message: string; seconds: number } {
  const t0 = performance.now();
  try {
    fn();
  } catch (err) {
    return { message: (err as Error).message, seconds: (performance.now() - t0) / 1000 };
  }
  throw new Error('no error was thrown');
}

describe.skipIf(!HAVE_DEV_ZERO)('files linked to /dev/zero are refused before a byte is read', () => {
  it('config.json', () => {
    const dir = copyOf('qwen3-tiny');
    linkToZero(join(dir, 'config.json'));
    const { message, seconds } = errorOf(() => readHfFolder(dir));
    expect(message).toBe(`${join(dir, 'config.json')}: is a character device (such as /dev/zero), not a regular file`);
    expect(seconds).toBeLessThan(5);
    expect(() => loadHfModel(dir)).toThrow(/config\.json: is a character device/);
  });

  it('tokenizer.json', () => {
    const dir = copyOf('qwen3-tiny');
    linkToZero(join(dir, 'tokenizer.json'));
    expect(() => HfTokenizer.fromFolder(dir)).toThrow(`${join(dir, 'tokenizer.json')}: is a character device (such as /dev/zero), not a regular file`);
  });

  it('chat_template.jinja, tokenizer_config.json, generation_config.json', () => {
    for (const name of ['chat_template.jinja', 'tokenizer_config.json', 'generation_config.json']) {
      const dir = copyOf('qwen3-tiny');
      linkToZero(join(dir, name));
      const read = name === 'generation_config.json' ? () => readHfFolder(dir) : () => HfTokenizer.fromFolder(dir);
      expect(read, name).toThrow(`${join(dir, name)}: is a character device (such as /dev/zero), not a regular file`);
    }
  });

  it("an adapter's adapter_config.json and adapter_model.safetensors", () => {
    const base = copyOf('qwen3-tiny');
    for (const name of ['adapter_config.json', 'adapter_model.safetensors']) {
      const adapter = copyOf('qwen3-tiny-lora');
      linkToZero(join(adapter, name));
      expect(() => loadHfModel(base, { adapter }), name).toThrow(`${join(adapter, name)}: is a character device`);
    }
  });

  it('model.safetensors and a shard named by the index', () => {
    const dir = copyOf('qwen3-tiny');
    linkToZero(join(dir, 'model.safetensors'));
    expect(() => openTensorSource(dir)).toThrow(`${join(dir, 'model.safetensors')}: is a character device`);
    const sharded = copyOf('llama-tiny-sharded');
    linkToZero(join(sharded, 'model-00002-of-00004.safetensors'));
    expect(() => openTensorSource(sharded)).toThrow(/model-00002-of-00004\.safetensors: is a character device/);
  });
});

describe.skipIf(!HAVE_MKFIFO)('FIFOs never block the loader', () => {
  for (const name of ['tokenizer.json', 'config.json', 'model.safetensors', 'model.safetensors.index.json']) {
    it(`${name} replaced by a FIFO`, () => {
      const dir = copyOf(name === 'model.safetensors.index.json' ? 'llama-tiny-sharded' : 'qwen3-tiny');
      const writer = replaceByFifo(join(dir, name));
      try {
        const { message, seconds } = errorOf(() => loadHfModel(dir));
        expect(message).toBe(`${join(dir, name)}: is a FIFO (named pipe), not a regular file`);
        expect(seconds).toBeLessThan(0.9); // before the writer lets a blocked open go (1 s)
      } finally {
        writer.kill();
      }
    });
  }
});

describe.skipIf(!HAVE_MKFIFO)('export-model copies only regular files', () => {
  it('a source tokenizer.json replaced by a FIFO is refused, not copied (which would block)', () => {
    const dir = copyOf('qwen3-tiny');
    const config = readHfConfig(dir);
    const source = openTensorSource(dir);
    const writer = replaceByFifo(join(dir, 'tokenizer.json'));
    try {
      const out = join(mkdtempSync(join(tmpdir(), 'export-')), 'merged');
      const { message, seconds } = errorOf(() => saveMergedModel(out, { sourceDir: dir, config, source, dtype: 'BF16' }));
      expect(message).toBe(`${join(dir, 'tokenizer.json')}: is a FIFO (named pipe), not a regular file`);
      expect(seconds).toBeLessThan(0.9);
      expect(existsSync(out)).toBe(false);
    } finally {
      writer.kill();
      source.close();
    }
  });
});

describe('sizes and kinds', () => {
  it('a config.json over its 1 MiB limit, naming both sizes', () => {
    const dir = copyOf('qwen3-tiny');
    const file = join(dir, 'config.json');
    writeFileSync(file, readFileSync(file, 'utf8') + ' '.repeat(MODEL_FILE_LIMITS['config.json']));
    expect(() => readHfFolder(dir)).toThrow(/config\.json: is 1,049,\d+ bytes \(1\.0 MiB\), over the limit of 1,048,576 bytes \(1\.0 MiB\) for this file/);
  });

  it('a tokenizer.json over 64 MiB', () => {
    const dir = copyOf('qwen3-tiny');
    const file = join(dir, 'tokenizer.json');
    writeFileSync(file, Buffer.alloc(64 * 1024 * 1024 + 1, 0x20));
    expect(() => HfTokenizer.fromFolder(dir)).toThrow(/tokenizer\.json: is 67,108,865 bytes \(64\.0 MiB\), over the limit of 67,108,864 bytes/);
  });

  it('a folder where config.json should be', () => {
    const dir = copyOf('qwen3-tiny');
    rmSync(join(dir, 'config.json'));
    mkdirSync(join(dir, 'config.json'));
    expect(() => readHfFolder(dir)).toThrow(`${join(dir, 'config.json')}: is a folder, not a regular file`);
  });

  it('a regular file is read whole, and a missing one is named', () => {
    const dir = mkdtempSync(join(tmpdir(), 'regular-'));
    writeFileSync(join(dir, 'a.json'), 'x'.repeat(100_000));
    expect(readRegularFile(join(dir, 'a.json'), 100_000).length).toBe(100_000);
    expect(() => readRegularFile(join(dir, 'b.json'), 10)).toThrow(`${join(dir, 'b.json')}: cannot read (ENOENT)`);
  });
});

describe.skipIf(!HAVE_DEV_ZERO)("the lab's own folders (models/hf/labFolder.ts) take the same checks", () => {
  function labFolder(): string {
    const dir = join(mkdtempSync(join(tmpdir(), 'lab-folder-')), 'lab');
    writeLabFolder(dir, { dModel: 16, nLayers: 1, nHeads: 2, contextLength: 32, normEps: 1e-5, initStd: 0.02 }, { seed: 3 });
    return dir;
  }

  it('config.json, tokenizer.json and model.safetensors linked to /dev/zero, with nothing half-loaded', () => {
    const before = tf.memory().numTensors;
    for (const name of ['config.json', 'tokenizer.json', 'model.safetensors']) {
      const dir = labFolder();
      linkToZero(join(dir, name));
      const { message, seconds } = errorOf(() => loadHfModel(dir));
      expect(message, name).toContain(`${join(dir, name)}: is a character device`);
      expect(seconds).toBeLessThan(5);
    }
    expect(tf.memory().numTensors).toBe(before);
  });

  it('the check is not vacuous: the untouched folder loads', () => {
    const loaded = loadHfModel(labFolder());
    expect(loaded.config.numLayers).toBe(1);
    loaded.dispose();
  });
});

describe("config.json's sizes are held against the weights' headers first", () => {
  function withConfig(edit: (c: Record<string, unknown>) => void): string {
    const dir = copyOf('qwen3-tiny');
    const file = join(dir, 'config.json');
    const c = JSON.parse(readFileSync(file, 'utf8'));
    edit(c);
    writeFileSync(file, JSON.stringify(c));
    return dir;
  }

  it('num_hidden_layers: 1000000 is refused in seconds, naming both counts', () => {
    const dir = withConfig((c) => {
      c.num_hidden_layers = 1_000_000;
      delete c.layer_types;
    });
    const before = tf.memory().numTensors;
    const { message, seconds } = errorOf(() => loadHfModel(dir));
    expect(message).toBe(`${dir}: config.json says 1000000 layers (num_hidden_layers) but the weights hold layers 0..1`);
    expect(seconds).toBeLessThan(5);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('fewer layers than the weights hold, too', () => {
    const dir = withConfig((c) => {
      c.num_hidden_layers = 1;
      delete c.layer_types;
    });
    expect(() => loadHfModel(dir)).toThrow(`${dir}: config.json says 1 layer (num_hidden_layers) but the weights hold layers 0..1`);
  });

  it('a head_dim of a billion is refused before a RoPE table is built', () => {
    const dir = withConfig((c) => {
      c.head_dim = 1_000_000_000;
    });
    const { message, seconds } = errorOf(() => loadHfModel(dir));
    expect(message).toMatch(
      /the weights do not fit config\.json \(qwen3\):\n(.*\n)* {2}.*model\.safetensors: tensor "model\.layers\.0\.self_attn\.q_proj\.weight" has shape \[64, 32\], expected \[4000000000, 32\]/,
    );
    expect(seconds).toBeLessThan(5);
  });
});

describe('numbers are printed as they are', () => {
  it('a header length of 2^62 is printed exactly', () => {
    const dir = mkdtempSync(join(tmpdir(), 'u64-'));
    for (const [name, n] of [
      ['pow62.safetensors', 2n ** 62n],
      ['pow62plus1.safetensors', 2n ** 62n + 1n], // Number() would print this one as 4611686018427388000 too
    ] as const) {
      const bytes = Buffer.alloc(16);
      bytes.writeBigUInt64LE(n, 0);
      writeFileSync(join(dir, name), bytes);
      expect(() => openTensorSource(join(dir, name))).toThrow(
        `${join(dir, name)}: truncated or not a safetensors file: header length ${n.toString()} exceeds the 8 bytes after it`,
      );
    }
  });

  it('lora_alpha: 1e309 is out of range, naming the file and the field', () => {
    const base = copyOf('qwen3-tiny');
    const adapter = copyOf('qwen3-tiny-lora');
    const file = join(adapter, 'adapter_config.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/"lora_alpha": 8/, '"lora_alpha": 1e309'));
    expect(() => loadHfModel(base, { adapter })).toThrow(
      `${file}: field "lora_alpha" is out of range: a number beyond 1.7976931348623157e+308 in size, which reads as infinity`,
    );
    expect(() => parseLoraConfig(JSON.parse('{"r": 1e309, "target_modules": ["q_proj"]}'), 'a.json')).toThrow(
      /field "r" must be a positive integer, got Infinity \(a number beyond/,
    );
  });

  it('a config.json number of 1e309 is out of range too', () => {
    const dir = copyOf('qwen3-tiny');
    const file = join(dir, 'config.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/"rms_norm_eps": [^,]+,/, '"rms_norm_eps": 1e309,'));
    expect(() => readHfFolder(dir)).toThrow(`${file}: field "rms_norm_eps" is out of range`);
  });
});
