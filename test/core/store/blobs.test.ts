/**
 * Token blobs: little-endian on disk, bit-exact both ways, on the fast little-endian path and on
 * the DataView path a big-endian host would take.
 */
import { describe, expect, it } from 'vitest';
import { decodeFloat32, decodeInt32, decodeUint8, encodeFloat32, encodeInt32, encodeUint8 } from '../../../src/core/store/blobs';

const awkwardFloats = (): Float32Array => {
  const f = new Float32Array([0, -0, 1.5, -3.25, 1e-45, -1e-40, Infinity, -Infinity, NaN, 3.4e38]);
  new Uint32Array(f.buffer)[8] = 0x7fc01234; // a NaN with a payload
  return f;
};
const bits = (f: Float32Array): number[] => Array.from(new Uint32Array(f.buffer, f.byteOffset, f.length));

describe('blobs', () => {
  it('writes little-endian bytes', () => {
    expect([...encodeInt32(new Int32Array([1, -2]))]).toEqual([1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff]);
    expect([...encodeFloat32(new Float32Array([1]))]).toEqual([0, 0, 0x80, 0x3f]);
    expect([...encodeInt32(new Int32Array([1, -2]), false)]).toEqual([1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff]);
    expect([...encodeFloat32(new Float32Array([1]), false)]).toEqual([0, 0, 0x80, 0x3f]);
  });

  for (const hostLE of [true, false]) {
    it(`round-trips bit-exactly (${hostLE ? 'little-endian fast path' : 'DataView path'})`, () => {
      const ints = new Int32Array([0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 50_256]);
      expect(Array.from(decodeInt32(encodeInt32(ints, hostLE), hostLE))).toEqual(Array.from(ints));
      const f = awkwardFloats();
      expect(bits(decodeFloat32(encodeFloat32(f, hostLE), hostLE))).toEqual(bits(f));
    });
  }

  it('decodes from unaligned buffers and from views into larger arrays', () => {
    const big = new Int32Array([9, 8, 7, 6]);
    const view = big.subarray(1, 3);
    const enc = encodeInt32(view);
    expect(enc.length).toBe(8);
    const unaligned = Buffer.concat([Buffer.from([0xaa]), enc]).subarray(1);
    expect(Array.from(decodeInt32(unaligned))).toEqual([8, 7]);
    const mask = new Uint8Array([1, 0, 1]);
    expect(Array.from(decodeUint8(encodeUint8(mask)))).toEqual([1, 0, 1]);
  });

  it('refuses a blob whose length is not a whole number of values', () => {
    expect(() => decodeInt32(Buffer.alloc(6))).toThrow(/6 bytes is not a multiple of 4/);
  });
});
