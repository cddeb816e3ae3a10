/**
 * The safetensors format, by hand, on bytes (no file system here: the writers of the optimizer
 * state in run checkpoints, train/checkpoints.ts, and of LoRA adapters, hf/saveAdapter.ts, do the
 * I/O; model folders are read by hf/safetensorsFile.ts with positioned reads):
 * 8-byte little-endian u64 header length N, N bytes of JSON header
 * `{ name: { dtype, shape, data_offsets: [begin, end] }, __metadata__?: { string: string } }`,
 * then the raw little-endian data; offsets are relative to the end of the header. The header
 * is padded with spaces so the data starts 8-byte aligned, as the reference writer does.
 *
 * Dtypes (decision): written as F32 only (the models train in float32 and a round trip must be
 * bit-exact); read: F32, and F16 / BF16 widened to float32 (files from other tools). Any other
 * dtype is an error naming it. Every malformed input is an Error naming the source and tensor;
 * the header is parsed and validated by safetensorsHeader.ts (shared with hf/safetensorsFile.ts).
 * Tests: test/core/models/safetensors.test.ts, test/core/models/safetensorsHeader.test.ts.
 */

import { encodeHeader, parseHeader, readHeaderLength, type HeaderLayoutEntry } from './safetensorsHeader';

export interface NamedArray {
  shape: number[];
  data: Float32Array;
}

interface DtypeCodec {
  bytes: number;
  /** Decode `count` little-endian values starting at byte `offset`. */
  read: (view: DataView, offset: number, count: number) => Float32Array;
}

function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * 2 ** -14 * (f / 1024);
  if (e === 31) return f ? NaN : s * Infinity;
  return s * 2 ** (e - 15) * (1 + f / 1024);
}

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

export const SAFETENSORS_DTYPES = {
  F32: {
    bytes: 4,
    read: (view, offset, count) => {
      if (LITTLE_ENDIAN_HOST) return new Float32Array(view.buffer.slice(view.byteOffset + offset, view.byteOffset + offset + 4 * count));
      const out = new Float32Array(count);
      for (let i = 0; i < count; i++) out[i] = view.getFloat32(offset + 4 * i, true);
      return out;
    },
  },
  F16: {
    bytes: 2,
    read: (view, offset, count) => Float32Array.from({ length: count }, (_, i) => halfToFloat(view.getUint16(offset + 2 * i, true))),
  },
  BF16: {
    bytes: 2,
    read: (view, offset, count) => {
      const bits = new Uint32Array(count);
      for (let i = 0; i < count; i++) bits[i] = view.getUint16(offset + 2 * i, true) << 16;
      return new Float32Array(bits.buffer);
    },
  },
} satisfies Record<string, DtypeCodec>;
export type SafetensorsDtype = keyof typeof SAFETENSORS_DTYPES;

/** Serialises float32 tensors (in the map's order) plus optional string metadata. */
export function encodeSafetensors(tensors: ReadonlyMap<string, NamedArray>, metadata?: Record<string, string>): Uint8Array {
  const layout: HeaderLayoutEntry[] = [];
  for (const [name, t] of tensors) {
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (n !== t.data.length) throw new Error(`safetensors: tensor "${name}" has ${t.data.length} values for shape [${t.shape}]`);
    layout.push({ name, dtype: 'F32', shape: t.shape, bytes: 4 * n });
  }
  const header = encodeHeader(layout, metadata);
  const out = new Uint8Array(header.length + layout.reduce((a, t) => a + t.bytes, 0));
  const view = new DataView(out.buffer);
  out.set(header, 0);
  let pos = header.length;
  for (const t of tensors.values()) {
    if (LITTLE_ENDIAN_HOST) out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), pos);
    else t.data.forEach((v, i) => view.setFloat32(pos + 4 * i, v, true));
    pos += t.data.byteLength;
  }
  return out;
}

export interface DecodedSafetensors {
  tensors: Map<string, NamedArray>;
  metadata: Record<string, string>;
}

/** Parses and validates a safetensors byte buffer; `source` (a file name) goes into every error. */
export function decodeSafetensors(bytes: Uint8Array, source: string): DecodedSafetensors {
  const ctx = { source, reader: 'lab', dtypes: SAFETENSORS_DTYPES, fileSize: bytes.length } as const;
  const n = readHeaderLength(bytes.subarray(0, 8), ctx);
  const { dataStart, entries, metadata } = parseHeader(bytes.subarray(8, 8 + n), ctx);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tensors = new Map<string, NamedArray>();
  for (const e of entries) tensors.set(e.name, { shape: e.shape, data: SAFETENSORS_DTYPES[e.dtype].read(view, dataStart + e.begin, e.count) });
  return { tensors, metadata };
}
