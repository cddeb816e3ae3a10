// The shared safetensors header validator (src/core/models/safetensorsHeader.ts), through both
// readers: the lab's in-memory decodeSafetensors and the Hugging Face openTensorSource. Each check
// one reader lacked before they shared it has a test here that fails without it; the faults the
// readers word differently are shown side by side with each reader's exact words.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openTensorSource } from '../../../src/core/models/hf/safetensorsFile';
import { decodeSafetensors } from '../../../src/core/models/safetensors';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'srpo-sthdr-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A safetensors byte buffer from a raw header text and data bytes (no validation). */
function bytesOf(headerText: string, data: Uint8Array = new Uint8Array()): Uint8Array {
  const json = Buffer.from(headerText);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  return new Uint8Array(Buffer.concat([len, json, Buffer.from(data)]));
}

/** The same bytes written to tmp/name, for the file reader. */
function fileOf(name: string, bytes: Uint8Array): string {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, bytes);
  return file;
}

/** Opens with the file reader, reads every tensor, closes; returns name -> values. */
function readAll(file: string): Record<string, number[]> {
  const src = openTensorSource(file);
  try {
    return Object.fromEntries(src.names().map((n) => [n, [...src.get(n)!.read()]]));
  } finally {
    src.close();
  }
}

const f32 = (...v: number[]) => new Uint8Array(Float32Array.from(v).buffer);
const entry = (begin: number, end: number, shape = [(end - begin) / 4]) => ({ dtype: 'F32', shape, data_offsets: [begin, end] });

describe('checks the lab reader lacked', () => {
  it('a tensor listed twice in one header is an error (JSON.parse would keep the last silently)', () => {
    const e = JSON.stringify(entry(0, 4));
    const bytes = bytesOf(`{"w": ${e}, "w": ${JSON.stringify(entry(4, 8))}}`, f32(1, 2));
    expect(() => decodeSafetensors(bytes, 'dup.safetensors')).toThrow('dup.safetensors: tensor "w" is listed twice in the header');
  });

  it('a header over 100 MB is refused before it is decoded', () => {
    const n = 100_000_001;
    const bytes = new Uint8Array(8 + n);
    new DataView(bytes.buffer).setBigUint64(0, BigInt(n), true);
    expect(() => decodeSafetensors(bytes, 'huge.safetensors')).toThrow('huge.safetensors: header of 100000001 bytes exceeds the 100000000-byte limit');
  });

  it('__metadata__ that is a list is not a map of strings', () => {
    const bytes = bytesOf(JSON.stringify({ __metadata__: ['srpo-lab'], w: entry(0, 4) }), f32(1));
    expect(() => decodeSafetensors(bytes, 'meta.safetensors')).toThrow('meta.safetensors: __metadata__ must map strings to strings');
  });
});

describe('checks the Hugging Face reader lacked', () => {
  it('__metadata__ with a value that is not a string', () => {
    const file = fileOf('meta.safetensors', bytesOf(JSON.stringify({ __metadata__: { format: 'pt', total: 4 }, w: entry(0, 4) }), f32(1)));
    expect(() => openTensorSource(file)).toThrow(`${file}: __metadata__ must map strings to strings`);
  });

  it('two tensors sharing bytes, whatever their order in the header, name both', () => {
    const header = { b: entry(4, 12), a: entry(0, 8) };
    const file = fileOf('overlap.safetensors', bytesOf(JSON.stringify(header), f32(1, 2, 3)));
    expect(() => openTensorSource(file)).toThrow(`${file}: tensor "b": data_offsets [4, 12] overlap those of tensor "a" [0, 8]`);
    // A tensor inside another's span, after a third that ends first.
    const nested = { a: entry(0, 16), b: entry(4, 8), c: entry(16, 20) };
    const file2 = fileOf('nested.safetensors', bytesOf(JSON.stringify(nested), f32(1, 2, 3, 4, 5)));
    expect(() => openTensorSource(file2)).toThrow(`${file2}: tensor "b": data_offsets [4, 8] overlap those of tensor "a" [0, 16]`);
  });

  it('touching spans, empty tensors and out-of-order headers are not overlaps (the check is not vacuous)', () => {
    const header = { c: entry(8, 12), empty: entry(4, 4, [0]), a: entry(0, 4), b: entry(4, 8), alsoEmpty: entry(12, 12, [2, 0]) };
    const values = readAll(fileOf('touching.safetensors', bytesOf(JSON.stringify(header), f32(1, 2, 3))));
    expect(values).toEqual({ c: [3], empty: [], a: [1], b: [2], alsoEmpty: [] });
  });

  it('the lab reader refuses tensors that share bytes too', () => {
    expect(() => decodeSafetensors(bytesOf(JSON.stringify({ a: entry(0, 4), alias: entry(0, 4) }), f32(7)), 'alias.safetensors')).toThrow(
      'alias.safetensors: tensor "alias": data_offsets [0, 4] overlap those of tensor "a" [0, 4]',
    );
  });
});

describe('faults the two readers word differently keep each reader its words', () => {
  /** [what, header text, data] -> [lab message, hf message] (after "<source>: "). */
  const cases: [string, string, Uint8Array, string, string][] = [
    [
      'an unknown dtype',
      JSON.stringify({ w: { dtype: 'F64', shape: [1], data_offsets: [0, 8] } }),
      new Uint8Array(8),
      'tensor "w": unknown or unsupported dtype "F64" (readable: F32, F16, BF16)',
      'tensor "w": unsupported dtype "F64" (readable: F32, BF16, F16)',
    ],
    [
      'data_offsets that end before they begin',
      JSON.stringify({ w: entry(4, 0, [1]) }),
      new Uint8Array(4),
      'tensor "w": data_offsets [4, 0] out of range (data section is 4 bytes; file truncated?)',
      'tensor "w": data_offsets [4, 0] end before they begin',
    ],
    [
      'data_offsets past the end of the data',
      JSON.stringify({ w: entry(0, 8) }),
      new Uint8Array(4),
      'tensor "w": data_offsets [0, 8] out of range (data section is 4 bytes; file truncated?)',
      'tensor "w": truncated: data_offsets [0, 8] run past the end of the data section (4 bytes)',
    ],
  ];
  for (const [what, text, data, lab, hf] of cases) {
    it(what, () => {
      const bytes = bytesOf(text, data);
      expect(() => decodeSafetensors(bytes, 'lab.safetensors')).toThrow(`lab.safetensors: ${lab}`);
      const file = fileOf('hf.safetensors', bytes);
      expect(() => openTensorSource(file)).toThrow(`${file}: ${hf}`);
    });
  }

  it('a header length past the end of the file', () => {
    const bytes = bytesOf('{"a": 1}').subarray(0, 12); // claims 8 header bytes, holds 4
    expect(() => decodeSafetensors(bytes, 'lab.safetensors')).toThrow('lab.safetensors: truncated or corrupt: header length 8 exceeds the 4 bytes after it');
    const file = fileOf('short.safetensors', bytes);
    expect(() => openTensorSource(file)).toThrow(`${file}: truncated or not a safetensors file: header length 8 exceeds the 4 bytes after it`);
  });
});
