import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCheckpoint, readCheckpoint, saveCheckpoint } from '../../../src/core/models/checkpoint';
import { decodeSafetensors, encodeSafetensors } from '../../../src/core/models/safetensors';
import { CharTokenizer } from '../../../src/core/models/tokenizer';
import { readParameters, Transformer } from '../../../src/core/models/transformer';
import { microConfig, randomIds } from './helpers';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'srpo-ckpt-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** A fresh checkpoint directory of a micro model. */
function makeCheckpoint(name: string): string {
  const dir = path.join(root, name);
  const model = new Transformer(microConfig({ seed: 42 }));
  saveCheckpoint(dir, model, new CharTokenizer(), { step: '7' });
  model.dispose();
  return dir;
}

/** Rewrites model.safetensors with a new header (same data section) built by `edit`. */
function editHeader(dir: string, edit: (h: Record<string, any>) => void): string {
  const file = path.join(dir, 'model.safetensors');
  const bytes = fs.readFileSync(file);
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
  edit(header);
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  fs.writeFileSync(file, Buffer.concat([len, json, bytes.subarray(8 + n)]));
  return file;
}

describe('checkpoints', () => {
  it('round-trip bit-exact: every parameter, the config, the tokenizer and the logits', () => {
    const model = new Transformer(microConfig({ seed: 3 }));
    // Move the weights off their init so a loader that re-initialised would be caught.
    for (const v of model.variables()) tf.tidy(() => v.assign(tf.add(v, tf.randomNormal(v.shape, 0, 0.1, 'float32', 9))));
    const dir = path.join(root, 'roundtrip');
    saveCheckpoint(dir, model, new CharTokenizer(), { note: 'hi' });
    const loaded = loadCheckpoint(dir);
    const [a, b] = [readParameters(model), readParameters(loaded.model)];
    for (const [name, v] of a) expect(Buffer.from(b.get(name)!.buffer).equals(Buffer.from(v.buffer)), name).toBe(true);
    expect(loaded.model.config).toEqual(model.config);
    expect(loaded.metadata.note).toBe('hi');
    const ids = tf.tensor2d(randomIds(8, 1), [1, 8], 'int32');
    const [y1, y2] = [model.forward(ids), loaded.model.forward(ids)];
    expect(Buffer.from(y1.dataSync().buffer).equals(Buffer.from(y2.dataSync().buffer))).toBe(true);
    tf.dispose([ids, y1, y2]);
    model.dispose();
    loaded.model.dispose();
  });

  it('the file is standard safetensors: 8-aligned data, F32 entries, __metadata__', () => {
    const dir = makeCheckpoint('format');
    const bytes = fs.readFileSync(path.join(dir, 'model.safetensors'));
    const n = Number(bytes.readBigUInt64LE(0));
    expect((8 + n) % 8).toBe(0);
    const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
    expect(header.__metadata__.step).toBe('7');
    expect(header.wte).toMatchObject({ dtype: 'F32', shape: [108, 32] });
  });

  it('reads F16 and BF16 tensors as float32', () => {
    const f16 = new Uint8Array([0x00, 0x3c, 0x00, 0xc0]); // 1, -2
    const bf16 = new Uint8Array([0x80, 0x3f, 0x40, 0xc0]); // 1, -3
    const header = JSON.stringify({ a: { dtype: 'F16', shape: [2], data_offsets: [0, 4] }, b: { dtype: 'BF16', shape: [2], data_offsets: [4, 8] } });
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(header.length));
    const { tensors } = decodeSafetensors(Buffer.concat([len, Buffer.from(header), f16, bf16]), 'x.safetensors');
    expect(Array.from(tensors.get('a')!.data)).toEqual([1, -2]);
    expect(Array.from(tensors.get('b')!.data)).toEqual([1, -3]);
  });

  it('encode/decode keeps NaN payloads, infinities and -0 bit for bit', () => {
    const data = new Float32Array([NaN, Infinity, -Infinity, -0, 1e-45]);
    const back = decodeSafetensors(encodeSafetensors(new Map([['x', { shape: [5], data }]])), 'mem').tensors.get('x')!.data;
    expect(Buffer.from(back.buffer).equals(Buffer.from(data.buffer))).toBe(true);
  });

  describe('corrupt files are errors naming the file and the tensor', () => {
    it('truncated file', () => {
      const dir = makeCheckpoint('truncated');
      const file = path.join(dir, 'model.safetensors');
      const bytes = fs.readFileSync(file);
      fs.writeFileSync(file, bytes.subarray(0, bytes.length - 100));
      expect(() => readCheckpoint(dir)).toThrow(/model\.safetensors: tensor "head": data_offsets .* out of range/);
      fs.writeFileSync(file, bytes.subarray(0, 5));
      expect(() => readCheckpoint(dir)).toThrow(/model\.safetensors: truncated/);
      fs.writeFileSync(file, bytes.subarray(0, 40));
      expect(() => readCheckpoint(dir)).toThrow(/model\.safetensors: truncated or corrupt: header length/);
    });

    it('header that is not JSON', () => {
      const dir = makeCheckpoint('notjson');
      const file = path.join(dir, 'model.safetensors');
      const bytes = fs.readFileSync(file);
      bytes[8] = 0x7a; // 'z' instead of '{'
      fs.writeFileSync(file, bytes);
      expect(() => readCheckpoint(dir)).toThrow(/model\.safetensors: header is not JSON/);
    });

    it('offsets out of range', () => {
      const dir = makeCheckpoint('offsets');
      editHeader(dir, (h) => (h['h.1.mlp.wproj'].data_offsets = [0, 1e9]));
      expect(() => readCheckpoint(dir)).toThrow(/model\.safetensors: tensor "h\.1\.mlp\.wproj": data_offsets \[0, 1000000000\] out of range/);
    });

    it('shape that does not match the config', () => {
      const dir = makeCheckpoint('shape');
      editHeader(dir, (h) => (h['h.0.attn.wq'].shape = [16, 64]));
      expect(() => readCheckpoint(dir)).toThrow(/model\.safetensors: tensor "h\.0\.attn\.wq" has shape \[16,64\], the config needs \[32,32\]/);
    });

    it('unknown dtype', () => {
      const dir = makeCheckpoint('dtype');
      editHeader(dir, (h) => (h.wpe.dtype = 'Q4'));
      expect(() => readCheckpoint(dir)).toThrow(/model\.safetensors: tensor "wpe": unknown or unsupported dtype "Q4"/);
    });

    it('missing tensor, and a tensor the config does not have', () => {
      const dir = makeCheckpoint('missing');
      editHeader(dir, (h) => delete h.normf);
      expect(() => readCheckpoint(dir)).toThrow(/model\.safetensors: tensor "normf" is missing/);
      const dir2 = makeCheckpoint('extra');
      editHeader(dir2, (h) => (h['h.9.extra'] = { dtype: 'F32', shape: [0], data_offsets: [0, 0] })); // empty: no bytes shared with another tensor
      expect(() => readCheckpoint(dir2)).toThrow(/model\.safetensors: tensor "h\.9\.extra" is not a parameter/);
    });

    it('config and tokenizer files', () => {
      const dir = makeCheckpoint('config');
      fs.writeFileSync(path.join(dir, 'config.json'), '{"vocabSize": 108');
      expect(() => readCheckpoint(dir)).toThrow(/config\.json: not JSON/);
      const dir2 = makeCheckpoint('tokenizer');
      fs.writeFileSync(path.join(dir2, 'tokenizer.json'), '{"kind":"bpe"}');
      expect(() => readCheckpoint(dir2)).toThrow(/tokenizer\.json: not a char tokenizer/);
    });
  });
});
