/**
 * The safetensors header, parsed and validated once for both readers: the lab's in-memory decoder
 * (safetensors.ts `decodeSafetensors`) and the Hugging Face file reader (hf/safetensorsFile.ts,
 * positioned reads); and written by one encoder for both writers (`encodeHeader`: the in-memory
 * encoder's optimizer states and adapters, hf/saveModel.ts's merged export). Pure: the caller hands in the bytes
 * it read (the 8-byte length prefix, then the JSON) and the file's size; nothing here touches
 * files or tensor data.
 *
 * Checks, in this order, each an Error `${source}: ...` naming the tensor where there is one:
 * file shorter than 8 bytes; header length past the end of the file, or over 100 MB (the
 * reference implementation's limit); header not UTF-8 JSON, not an object, or naming a key twice
 * (JSON.parse keeps the last silently); `__metadata__` not an object of strings; per tensor, in
 * header order: entry not an object, dtype outside the reader's set, shape not a list of sizes,
 * data_offsets not [begin, end], end before begin, end past the data section, a span that
 * disagrees with shape x dtype size; then two tensors sharing a byte. The dtype set (with bytes
 * per element) is passed in by each reader.
 *
 * The readers grew apart before they shared this, and tests pin each one's words, so the faults
 * they worded differently take their words from HEADER_READERS. Not checked, though the reference
 * implementation refuses them: holes and trailing bytes in the data section (a test pins a shard
 * with a trailing gap as valid).
 *
 * Tests: test/core/models/safetensorsHeader.test.ts (the checks either reader lacked, both
 * wordings), test/core/models/safetensors.test.ts and test/core/models/hf/safetensorsFile.test.ts.
 */

/** The readers, each with its own wording. */
export type HeaderReader = 'lab' | 'hf';

interface HeaderWording {
  /** The u64 prefix claims more header than the file holds (n: the prefix exactly, a u64 may exceed 2^53). */
  headerPastEnd: (n: bigint, after: number) => string;
  unsupportedDtype: (dtype: string, readable: string) => string;
  endBeforeBegin: (begin: number, end: number, dataLength: number) => string;
  endPastData: (begin: number, end: number, dataLength: number) => string;
}

const labOutOfRange = (begin: number, end: number, dataLength: number): string =>
  `data_offsets [${begin}, ${end}] out of range (data section is ${dataLength} bytes; file truncated?)`;

export const HEADER_READERS = {
  lab: {
    headerPastEnd: (n, after) => `truncated or corrupt: header length ${n} exceeds the ${after} bytes after it`,
    unsupportedDtype: (dtype, readable) => `unknown or unsupported dtype ${dtype} (readable: ${readable})`,
    endBeforeBegin: labOutOfRange,
    endPastData: labOutOfRange,
  },
  hf: {
    headerPastEnd: (n, after) => `truncated or not a safetensors file: header length ${n} exceeds the ${after} bytes after it`,
    unsupportedDtype: (dtype, readable) => `unsupported dtype ${dtype} (readable: ${readable})`,
    endBeforeBegin: (begin, end) => `data_offsets [${begin}, ${end}] end before they begin`,
    endPastData: (begin, end, dataLength) => `truncated: data_offsets [${begin}, ${end}] run past the end of the data section (${dataLength} bytes)`,
  },
} satisfies Record<HeaderReader, HeaderWording>;

/** The safetensors reference implementation refuses headers over 100 MB; so do we. */
export const MAX_HEADER_BYTES = 100_000_000;

/** What a parse needs besides the bytes: who is reading, which file, which dtypes it decodes. */
export interface HeaderContext<D extends string> {
  /** Named at the start of every error (a file path). */
  source: string;
  reader: HeaderReader;
  /** Readable dtypes and their bytes per element; key order is the order errors list them in. */
  dtypes: Readonly<Record<D, { bytes: number }>>;
  /** Size of the whole file (or buffer), bytes. */
  fileSize: number;
}

/** One tensor's header entry, validated; offsets are relative to the data section. */
export interface HeaderEntry<D extends string> {
  name: string;
  dtype: D;
  shape: number[];
  begin: number;
  end: number;
  /** Number of values (product of the shape). */
  count: number;
}

export interface SafetensorsHeader<D extends string> {
  /** Byte of the file where the data section starts (8 + header length). */
  dataStart: number;
  /** Tensors in header order (Object.entries order). */
  entries: HeaderEntry<D>[];
  /** `__metadata__`, or {} when absent. */
  metadata: Record<string, string>;
}

function failIn(source: string): (msg: string) => never {
  return (msg) => {
    throw new Error(`${source}: ${msg}`);
  };
}

/**
 * The header length N from the file's first bytes (`prefix`: its first 8 bytes, or all of it when
 * the file is shorter), checked against the file size and the 100 MB limit.
 */
export function readHeaderLength(prefix: Uint8Array, ctx: HeaderContext<string>): number {
  const fail = failIn(ctx.source);
  const size = ctx.fileSize;
  if (size < 8 || prefix.length < 8) fail(`truncated: ${size} bytes, shorter than the 8-byte header length`);
  // Compared and printed as a BigInt: Number() would round 2^62 + 1 and print 2^62 as 4611686018427388000.
  const n = new DataView(prefix.buffer, prefix.byteOffset, 8).getBigUint64(0, true);
  if (n > BigInt(size - 8)) fail(HEADER_READERS[ctx.reader].headerPastEnd(n, size - 8));
  if (n > BigInt(MAX_HEADER_BYTES)) fail(`header of ${n} bytes exceeds the ${MAX_HEADER_BYTES}-byte limit`);
  return Number(n);
}

/**
 * The first key that occurs twice at the top level of a JSON object text, or null. JSON.parse
 * keeps the last of duplicate keys silently; a header naming one tensor twice is corrupt.
 */
export function duplicateTopLevelKey(text: string): string | null {
  const seen = new Set<string>();
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (depth === 1 && expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (seen.has(key)) return key;
        seen.add(key);
        expectKey = false;
      }
      i = j;
    } else if (ch === '{' || ch === '[') {
      depth++;
      expectKey = depth === 1 && ch === '{';
    } else if (ch === '}' || ch === ']') depth--;
    else if (ch === ',' && depth === 1) expectKey = true;
  }
  return null;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** Parses and validates the JSON header (`json`: the N bytes after the length prefix). */
export function parseHeader<D extends string>(json: Uint8Array, ctx: HeaderContext<D>): SafetensorsHeader<D> {
  const fail = failIn(ctx.source);
  const wording: HeaderWording = HEADER_READERS[ctx.reader];
  let header: unknown;
  let text = '';
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(json);
    header = JSON.parse(text);
  } catch (err) {
    fail(`header is not JSON (${(err as Error).message})`);
  }
  if (!isPlainObject(header)) return fail('header is not a JSON object');
  const twice = duplicateTopLevelKey(text);
  if (twice !== null) fail(`tensor "${twice}" is listed twice in the header`);
  const dataStart = 8 + json.length;
  const dataLength = ctx.fileSize - dataStart;
  const entries: HeaderEntry<D>[] = [];
  let metadata: Record<string, string> = {};
  for (const [name, raw] of Object.entries(header)) {
    if (name === '__metadata__') {
      if (!isPlainObject(raw) || !Object.values(raw).every((v) => typeof v === 'string')) fail('__metadata__ must map strings to strings');
      metadata = raw as Record<string, string>;
      continue;
    }
    const where = `tensor "${name}"`;
    if (!raw || typeof raw !== 'object') fail(`${where}: entry is not an object`);
    const e = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (typeof e.dtype !== 'string' || !Object.hasOwn(ctx.dtypes, e.dtype))
      fail(`${where}: ${wording.unsupportedDtype(JSON.stringify(e.dtype), Object.keys(ctx.dtypes).join(', '))}`);
    const dtype = e.dtype as D;
    if (!Array.isArray(e.shape) || !e.shape.every((d) => Number.isInteger(d) && d >= 0))
      fail(`${where}: shape ${JSON.stringify(e.shape)} is not a list of sizes`);
    const shape = e.shape as number[];
    const offs = e.data_offsets;
    if (!Array.isArray(offs) || offs.length !== 2 || !offs.every((o) => Number.isInteger(o) && o >= 0))
      fail(`${where}: data_offsets ${JSON.stringify(offs)} is not [begin, end]`);
    const [begin, end] = offs as [number, number];
    if (end < begin) fail(`${where}: ${wording.endBeforeBegin(begin, end, dataLength)}`);
    if (end > dataLength) fail(`${where}: ${wording.endPastData(begin, end, dataLength)}`);
    const count = shape.reduce((a, b) => a * b, 1);
    const bytes = count * ctx.dtypes[dtype].bytes;
    if (end - begin !== bytes) fail(`${where}: data_offsets span ${end - begin} bytes, shape [${shape}] of ${dtype} needs ${bytes}`);
    entries.push({ name, dtype, shape, begin, end, count });
  }
  refuseOverlaps(entries, fail);
  return { dataStart, entries, metadata };
}

/** Two tensors may not share a byte (empty tensors hold none); the error names both. */
function refuseOverlaps(entries: HeaderEntry<string>[], fail: (msg: string) => never): void {
  const byBegin = entries.filter((e) => e.end > e.begin).sort((a, b) => a.begin - b.begin || a.end - b.end);
  let reach: HeaderEntry<string> | undefined; // the entry reaching furthest so far
  for (const e of byBegin) {
    if (reach && e.begin < reach.end)
      fail(`tensor "${e.name}": data_offsets [${e.begin}, ${e.end}] overlap those of tensor "${reach.name}" [${reach.begin}, ${reach.end}]`);
    if (!reach || e.end > reach.end) reach = e;
  }
}

/** A tensor as a writer lays it out: its bytes follow the previous tensor's in the data section. */
export interface HeaderLayoutEntry {
  name: string;
  dtype: string;
  shape: readonly number[];
  bytes: number;
}

/**
 * The bytes a writer puts before the data section, the one encoder of both writers (safetensors.ts
 * `encodeSafetensors`, hf/saveModel.ts): the u64 little-endian length, then the JSON header
 * (`__metadata__` first when given, then the tensors in the order given, each span after the last)
 * padded with spaces so the data starts 8-byte aligned, as transformers writes it.
 */
export function encodeHeader(tensors: readonly HeaderLayoutEntry[], metadata?: Record<string, string>): Uint8Array {
  const header: Record<string, unknown> = {};
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  for (const t of tensors) {
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.bytes] };
    offset += t.bytes;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + Buffer.byteLength(json)) % 8)) % 8);
  const text = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + text.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true);
  out.set(text, 8);
  return out;
}
