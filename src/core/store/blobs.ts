/**
 * Token-level blobs of the members table: token ids as Int32, behaviour log-probs as Float32,
 * the loss mask as Uint8, always little-endian (4, 4 and 1 bytes per token), so a database
 * moves between machines unchanged. On a little-endian host (x86, ARM: every machine the lab
 * runs on) encoding is one copy of the typed array's bytes and decoding one copy into a fresh,
 * aligned array; the DataView path keeps big-endian hosts correct. Float32 bits are kept as they
 * are (NaN payloads, -0, subnormals). Not compression: a 48-token member costs ~400 bytes.
 *
 * Tests: test/core/store/blobs.test.ts (both paths, bit-exact), steps.test.ts (round trip).
 */
import { endianness } from 'node:os';

const HOST_LE = endianness() === 'LE';

type Typed = Int32Array | Float32Array | Uint8Array;

function bytesOf(a: Typed): Buffer {
  // Copy: better-sqlite3 binds Buffers, and the caller may reuse its arrays after writeStep.
  return Buffer.from(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
}

export function encodeInt32(a: Int32Array, hostLE = HOST_LE): Buffer {
  if (hostLE) return bytesOf(a);
  const out = Buffer.alloc(a.length * 4);
  for (let i = 0; i < a.length; i++) out.writeInt32LE(a[i], i * 4);
  return out;
}

export function encodeFloat32(a: Float32Array, hostLE = HOST_LE): Buffer {
  if (hostLE) return bytesOf(a);
  const out = Buffer.alloc(a.length * 4);
  const bits = new Uint32Array(a.buffer, a.byteOffset, a.length); // keeps NaN payloads
  for (let i = 0; i < a.length; i++) out.writeUInt32LE(bits[i], i * 4);
  return out;
}

export function encodeUint8(a: Uint8Array): Buffer {
  return bytesOf(a);
}

function checkWidth(b: Uint8Array, width: number, what: string): number {
  if (b.byteLength % width !== 0) throw new Error(`${what} blob of ${b.byteLength} bytes is not a multiple of ${width}`);
  return b.byteLength / width;
}

export function decodeInt32(b: Uint8Array, hostLE = HOST_LE): Int32Array {
  const n = checkWidth(b, 4, 'Int32');
  const out = new Int32Array(n);
  if (hostLE) new Uint8Array(out.buffer).set(b);
  else {
    const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    for (let i = 0; i < n; i++) out[i] = v.getInt32(i * 4, true);
  }
  return out;
}

export function decodeFloat32(b: Uint8Array, hostLE = HOST_LE): Float32Array {
  const n = checkWidth(b, 4, 'Float32');
  const out = new Float32Array(n);
  if (hostLE) new Uint8Array(out.buffer).set(b);
  else {
    const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    const bits = new Uint32Array(out.buffer);
    for (let i = 0; i < n; i++) bits[i] = v.getUint32(i * 4, true);
  }
  return out;
}

export function decodeUint8(b: Uint8Array): Uint8Array {
  return Uint8Array.from(b);
}
