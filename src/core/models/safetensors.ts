/**
 * The safetensors format, by hand, on bytes (no file system here; checkpoint.ts does the I/O):
 * 8-byte little-endian u64 header length N, N bytes of JSON header
 * `{ name: { dtype, shape, data_offsets: [begin, end] }, __metadata__?: { string: string } }`,
 * then the raw little-endian data; offsets are relative to the end of the header. The header
 * is padded with spaces so the data starts 8-byte aligned, as the reference writer does.
 *
 * Dtypes (decision): written as F32 only (the models train in float32 and a round trip must be
 * bit-exact); read: F32, and F16 / BF16 widened to float32 (files from other tools). Any other
 * dtype is an error naming it. Every malformed input is an Error naming the source and tensor.
 * Tests: test/core/models/checkpoint.test.ts.
 */

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
  const header: Record<string, unknown> = {};
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  for (const [name, t] of tensors) {
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (n !== t.data.length) throw new Error(`safetensors: tensor "${name}" has ${t.data.length} values for shape [${t.shape}]`);
    header[name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + 4 * n] };
    offset += 4 * n;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + Buffer.byteLength(json)) % 8)) % 8);
  const headerBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + headerBytes.length + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let pos = 8 + headerBytes.length;
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
  const fail = (msg: string): never => {
    throw new Error(`${source}: ${msg}`);
  };
  if (bytes.length < 8) fail(`truncated: ${bytes.length} bytes, shorter than the 8-byte header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  if (n > bytes.length - 8) fail(`truncated or corrupt: header length ${n} exceeds the ${bytes.length - 8} bytes after it`);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + n)));
  } catch (err) {
    fail(`header is not JSON (${(err as Error).message})`);
  }
  if (!header || typeof header !== 'object' || Array.isArray(header)) fail('header is not a JSON object');
  const dataStart = 8 + n;
  const dataLength = bytes.length - dataStart;
  const tensors = new Map<string, NamedArray>();
  let metadata: Record<string, string> = {};
  for (const [name, entry] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') {
      const ok = entry && typeof entry === 'object' && Object.values(entry).every((v) => typeof v === 'string');
      if (!ok) fail('__metadata__ must map strings to strings');
      metadata = entry as Record<string, string>;
      continue;
    }
    const e = entry as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    const where = `tensor "${name}"`;
    if (!e || typeof e !== 'object') fail(`${where}: entry is not an object`);
    if (typeof e.dtype !== 'string' || !Object.hasOwn(SAFETENSORS_DTYPES, e.dtype)) {
      fail(`${where}: unknown or unsupported dtype ${JSON.stringify(e.dtype)} (readable: ${Object.keys(SAFETENSORS_DTYPES).join(', ')})`);
    }
    const codec = SAFETENSORS_DTYPES[e.dtype as SafetensorsDtype];
    if (!Array.isArray(e.shape) || !e.shape.every((d) => Number.isInteger(d) && d >= 0))
      fail(`${where}: shape ${JSON.stringify(e.shape)} is not a list of sizes`);
    const shape = e.shape as number[];
    const offs = e.data_offsets;
    if (!Array.isArray(offs) || offs.length !== 2 || !offs.every((o) => Number.isInteger(o) && o >= 0))
      fail(`${where}: data_offsets ${JSON.stringify(offs)} is not [begin, end]`);
    const [begin, end] = offs as [number, number];
    const count = shape.reduce((a, b) => a * b, 1);
    if (end < begin || end > dataLength) fail(`${where}: data_offsets [${begin}, ${end}] out of range (data section is ${dataLength} bytes; file truncated?)`);
    if (end - begin !== count * codec.bytes)
      fail(`${where}: data_offsets span ${end - begin} bytes, shape [${shape}] of ${e.dtype} needs ${count * codec.bytes}`);
    tensors.set(name, { shape, data: codec.read(view, dataStart + begin, count) });
  }
  return { tensors, metadata };
}
