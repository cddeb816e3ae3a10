// float32 -> bfloat16 round-to-nearest-even (src/core/models/hf/bf16.ts) against hand-computed
// bit patterns: exact values, ties to even in both directions, just above / below a tie, overflow
// to Inf, Inf, NaN payloads, subnormals, signed zeros. (torch 2.13 CPU gives the same patterns for
// every non-NaN case here; it writes 0xFFFF for NaN, this writes the canonical 0x7FC0.)
import { describe, expect, it } from 'vitest';
import { bf16BitsFromF32Bits, bf16ToF32, f32ToBf16 } from '../../../../src/core/models/hf/bf16';

const f32 = (bits: number): number => new Float32Array(new Uint32Array([bits]).buffer)[0];

// [float32 bits, bf16 bits, why]
const CASES: [number, number, string][] = [
  [0x3f800000, 0x3f80, '1.0 is exact'],
  [0x40490fdb, 0x4049, 'pi: dropped bits 0x0FDB < half, truncates'],
  [0x3f807fff, 0x3f80, 'just below a tie rounds down'],
  [0x3f808000, 0x3f80, 'tie with even kept mantissa (…80) stays'],
  [0x3f818000, 0x3f82, 'tie with odd kept mantissa (…81) rounds up to even'],
  [0x3f808001, 0x3f81, 'just above a tie rounds up'],
  [0xbf818000, 0xbf82, 'negative tie, odd: away from zero to even'],
  [0xbf808000, 0xbf80, 'negative tie, even: stays'],
  [0x7f7f7fff, 0x7f7f, 'below the top tie: the largest finite bf16'],
  [0x7f7f8000, 0x7f80, 'tie at the largest bf16 (odd) overflows to Inf'],
  [0x7f7fffff, 0x7f80, 'largest float32 rounds to +Inf'],
  [0xff7fffff, 0xff80, 'most negative float32 rounds to -Inf'],
  [0x7f800000, 0x7f80, '+Inf'],
  [0xff800000, 0xff80, '-Inf'],
  [0x7fc00000, 0x7fc0, 'quiet NaN'],
  [0xffc00001, 0x7fc0, 'negative NaN with a payload: canonical NaN'],
  [0x7f800001, 0x7fc0, 'signalling NaN whose payload is only in the dropped bits: NaN, not Inf'],
  [0x00000000, 0x0000, '+0'],
  [0x80000000, 0x8000, '-0'],
  [0x00000001, 0x0000, 'smallest float32 subnormal flushes to +0'],
  [0x00008000, 0x0000, 'subnormal tie, even: to +0'],
  [0x00018000, 0x0002, 'subnormal tie, odd: up to even'],
  [0x00010000, 0x0001, 'smallest bf16 subnormal is exact'],
  [0x80008001, 0x8001, 'negative subnormal just above a tie'],
  [0x007fffff, 0x0080, 'largest float32 subnormal rounds up to the smallest normal'],
];

describe('bf16BitsFromF32Bits: round to nearest, ties to even', () => {
  for (const [input, want, why] of CASES) {
    it(`${why}: 0x${input.toString(16).padStart(8, '0')} -> 0x${want.toString(16).padStart(4, '0')}`, () => {
      expect(bf16BitsFromF32Bits(input)).toBe(want);
    });
  }
});

describe('f32ToBf16 on arrays', () => {
  it('gives the same patterns as the scalar function, element by element', () => {
    const src = new Float32Array(new Uint32Array(CASES.map((c) => c[0])).buffer);
    expect([...f32ToBf16(src)]).toEqual(CASES.map((c) => c[1]));
  });

  it('respects a subarray offset', () => {
    const src = new Float32Array([1, 1.0078125 /* 0x3F810000 */, -2]);
    expect([...f32ToBf16(src.subarray(1))]).toEqual([0x3f81, 0xc000]);
  });

  it('the error is at most half a bf16 ulp (relative 2^-8: 8 significant bits) on ordinary values', () => {
    let worst = 0;
    for (let i = 0; i < 2000; i++) {
      const v = Math.fround((Math.sin(i * 12.9898) * 43758.5453) % 7);
      if (v === 0) continue;
      const r = bf16ToF32(bf16BitsFromF32Bits(new Uint32Array(new Float32Array([v]).buffer)[0]));
      worst = Math.max(worst, Math.abs(r - v) / Math.abs(v));
    }
    expect(worst).toBeLessThanOrEqual(2 ** -8);
    expect(worst).toBeGreaterThan(2 ** -10); // not vacuous: rounding did happen
  });

  it('truncation would fail the tie and above-tie cases (the test is not vacuous)', () => {
    const truncate = (u: number): number => u >>> 16;
    const differing = CASES.filter(([u, want]) => truncate(u) !== want && !Number.isNaN(f32(u)));
    expect(differing.length).toBeGreaterThanOrEqual(8);
  });
});

describe('bf16ToF32', () => {
  it('is exact: the pattern in the upper half of a float32', () => {
    expect(bf16ToF32(0x3f80)).toBe(1);
    expect(bf16ToF32(0xc000)).toBe(-2);
    expect(bf16ToF32(0x7f80)).toBe(Infinity);
    expect(Number.isNaN(bf16ToF32(0x7fc0))).toBe(true);
    expect(bf16ToF32(0x0001)).toBe(f32(0x00010000));
  });
});
