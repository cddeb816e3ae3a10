/**
 * float32 -> bfloat16 by round-to-nearest-even on the bit pattern, as torch converts
 * (c10/util/BFloat16.h `round_to_nearest_even`): add 0x7FFF plus the lowest kept bit, keep the
 * upper 16 bits. So ties go to the even mantissa, values above the largest bf16 round up to Inf,
 * Inf stays Inf, float32 subnormals round like any other value (bf16 has float32's exponent range,
 * so they stay subnormal or flush to a signed zero by the same rule), and -0 stays -0.
 *
 * NaN (any payload, either sign) becomes 0x7FC0, the canonical quiet NaN of c10's scalar path.
 * torch's vectorised CPU cast writes 0xFFFF instead; both are NaN to every reader, and plain
 * rounding could turn a NaN with a low-bits-only payload into Inf, which neither does.
 *
 * Not here: the file writing (saveModel.ts); bf16 -> float32 is exact and lives in
 * ../safetensors.ts. Tests: test/core/models/hf/bf16.test.ts (hand-computed bit patterns).
 */

const BF16_NAN = 0x7fc0;

/** The bf16 bit pattern of one float32 bit pattern (`u32` as an unsigned 32-bit integer). */
export function bf16BitsFromF32Bits(u32: number): number {
  const u = u32 >>> 0;
  if ((u & 0x7f800000) === 0x7f800000 && (u & 0x007fffff) !== 0) return BF16_NAN;
  const roundingBias = 0x7fff + ((u >>> 16) & 1);
  return ((u + roundingBias) >>> 16) & 0xffff; // u + bias < 2^32 for every non-NaN u
}

/** bf16 bit patterns of a float32 array, round-to-nearest-even. */
export function f32ToBf16(src: Float32Array): Uint16Array {
  const bits = new Uint32Array(src.buffer, src.byteOffset, src.length);
  const out = new Uint16Array(src.length);
  for (let i = 0; i < bits.length; i++) out[i] = bf16BitsFromF32Bits(bits[i]);
  return out;
}

/** The float32 value of a bf16 bit pattern (exact: the pattern shifted into the upper half). */
export function bf16ToF32(bits: number): number {
  const u = new Uint32Array([(bits & 0xffff) << 16]);
  return new Float32Array(u.buffer)[0];
}
