/**
 * The in-memory safetensors codec (models/safetensors.ts), which writes and reads the optimizer
 * state of run checkpoints (train/checkpoints.ts) and adapter files (hf/saveAdapter.ts): a round
 * trip is bit-exact, the bytes are the standard layout, F16 / BF16 widen to float32, and a corrupt
 * buffer is an error naming the source and the tensor. The header checks both readers share, in
 * both wordings: safetensorsHeader.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { decodeSafetensors, encodeSafetensors, type NamedArray } from '../../../src/core/models/safetensors';

/** Three tensors of distinct shapes and seeded values (not an init pattern a decoder could fake). */
function sample(): Map<string, NamedArray> {
  let x = 7;
  const next = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  const t = (shape: number[]) => ({ shape, data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, next) });
  return new Map([
    ['step.m', t([3, 5])],
    ['step.v', t([7])],
    ['zz.last', t([2, 2, 2])],
  ]);
}

/** The header's JSON text and where the data starts. */
function headerOf(bytes: Uint8Array): { header: Record<string, any>; dataStart: number } {
  const n = Number(Buffer.from(bytes).readBigUInt64LE(0));
  return { header: JSON.parse(Buffer.from(bytes.subarray(8, 8 + n)).toString('utf8')), dataStart: 8 + n };
}

/** Bytes with a new header (same data section) built by `edit`. */
function withHeader(bytes: Uint8Array, edit: (h: Record<string, any>) => void): Uint8Array {
  const { header, dataStart } = headerOf(bytes);
  edit(header);
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([len, json, bytes.subarray(dataStart)]);
}

describe('encodeSafetensors / decodeSafetensors', () => {
  it('round-trip bit-exact: every tensor, its shape, the order and the metadata', () => {
    const tensors = sample();
    const back = decodeSafetensors(encodeSafetensors(tensors, { step: '7' }), 'opt.safetensors');
    expect([...back.tensors.keys()]).toEqual([...tensors.keys()]);
    for (const [name, t] of tensors) {
      expect(back.tensors.get(name)!.shape, name).toEqual(t.shape);
      expect(Buffer.from(back.tensors.get(name)!.data.buffer).equals(Buffer.from(t.data.buffer)), name).toBe(true);
    }
    expect(back.metadata).toEqual({ step: '7' });
  });

  it('keeps NaN payloads, infinities and -0 bit for bit', () => {
    const data = new Float32Array([NaN, Infinity, -Infinity, -0, 1e-45]);
    const back = decodeSafetensors(encodeSafetensors(new Map([['x', { shape: [5], data }]])), 'mem').tensors.get('x')!.data;
    expect(Buffer.from(back.buffer).equals(Buffer.from(data.buffer))).toBe(true);
  });

  it('writes the standard layout: 8-aligned data, F32 entries with their offsets, __metadata__', () => {
    const bytes = encodeSafetensors(sample(), { step: '7' });
    const { header, dataStart } = headerOf(bytes);
    expect(dataStart % 8).toBe(0);
    expect(header.__metadata__).toEqual({ step: '7' });
    expect(header['step.m']).toEqual({ dtype: 'F32', shape: [3, 5], data_offsets: [0, 60] });
    expect(header['step.v']).toEqual({ dtype: 'F32', shape: [7], data_offsets: [60, 88] });
    expect(bytes.length).toBe(dataStart + 88 + 32);
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

  it('refuses to encode a tensor whose values do not fill its shape, naming it', () => {
    expect(() => encodeSafetensors(new Map([['w', { shape: [2, 3], data: new Float32Array(5) }]]))).toThrow(
      'safetensors: tensor "w" has 5 values for shape [2,3]',
    );
  });
});

describe('a corrupt buffer is an error naming the source and the tensor', () => {
  const good = encodeSafetensors(sample());

  it('truncated: the last tensor past the end, a buffer shorter than its header, or than 8 bytes', () => {
    expect(() => decodeSafetensors(good.subarray(0, good.length - 4), 'opt.safetensors')).toThrow(
      /^opt\.safetensors: tensor "zz\.last": data_offsets \[88, 120\] out of range/,
    );
    expect(() => decodeSafetensors(good.subarray(0, 40), 'opt.safetensors')).toThrow(/^opt\.safetensors: truncated or corrupt: header length/);
    expect(() => decodeSafetensors(good.subarray(0, 5), 'opt.safetensors')).toThrow(/^opt\.safetensors: truncated/);
  });

  it('a header that is not JSON', () => {
    const bytes = Uint8Array.from(good);
    bytes[8] = 0x7a; // 'z' instead of '{'
    expect(() => decodeSafetensors(bytes, 'opt.safetensors')).toThrow(/^opt\.safetensors: header is not JSON/);
  });

  it('offsets out of range, naming the tensor', () => {
    const bytes = withHeader(good, (h) => (h['step.v'].data_offsets = [0, 1e9]));
    expect(() => decodeSafetensors(bytes, 'opt.safetensors')).toThrow(/^opt\.safetensors: tensor "step\.v": data_offsets \[0, 1000000000\] out of range/);
  });

  it('an unknown dtype, naming the tensor', () => {
    const bytes = withHeader(good, (h) => (h['step.m'].dtype = 'Q4'));
    expect(() => decodeSafetensors(bytes, 'opt.safetensors')).toThrow(/^opt\.safetensors: tensor "step\.m": unknown or unsupported dtype "Q4"/);
  });

  it('a shape that disagrees with the span of its offsets, naming the tensor', () => {
    const bytes = withHeader(good, (h) => (h['step.m'].shape = [3, 4]));
    expect(() => decodeSafetensors(bytes, 'opt.safetensors')).toThrow(/^opt\.safetensors: tensor "step\.m"/);
  });

  it('the check is not vacuous: the untouched buffer decodes', () => {
    expect(
      decodeSafetensors(
        withHeader(good, () => {}),
        'opt.safetensors',
      ).tensors.size,
    ).toBe(3);
  });
});
