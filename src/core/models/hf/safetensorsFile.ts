/**
 * A checkpoint's tensors on disk, read one at a time (Node: node:fs). `openTensorSource(path)`
 * accepts a model folder holding `model.safetensors`, or `model.safetensors.index.json` and its
 * shards, or the path of one `.safetensors` file. Only the headers are read up front (every
 * header is validated before anything is returned); each tensor is read on demand with positioned
 * reads (`fs.readSync` at an offset: `fs.readFile` refuses files over 2 GiB and would hold the
 * whole checkpoint in memory) and widened to float32 with the codecs of ../safetensors.ts.
 * Each header is parsed and validated by ../safetensorsHeader.ts (shared with the lab's reader).
 *
 * Errors name the file and the tensor: a missing file, a header that is not JSON, data_offsets
 * past the end of the file (truncated) or overlapping another tensor's, a dtype other than
 * F32/BF16/F16, an index naming a missing shard or a tensor its shard lacks, a tensor listed
 * twice (in one header or in two shards). File descriptors stay open until `close()` (and are
 * closed when opening fails half-way).
 *
 * Not here: which tensors an architecture needs (weights.ts). Tests:
 * test/core/models/hf/safetensorsFile.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FileAccessError, openRegularFile, readRegularTextFile } from '../../util/regularFile';
import { MODEL_FILE_LIMITS } from '../fileLimits';
import { SAFETENSORS_DTYPES } from '../safetensors';
import { parseHeader, readHeaderLength } from '../safetensorsHeader';
import { HF_WEIGHT_DTYPES, type HfWeightDtype, type TensorEntry, type TensorSource } from './types';

export const WEIGHTS_FILE = 'model.safetensors';
export const WEIGHTS_INDEX_FILE = 'model.safetensors.index.json' as const;

/** Largest single readSync (Node caps one read near 2 GiB). */
const READ_CHUNK = 1 << 30;
const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** A TensorSource backed by open files; `close()` releases them. */
export interface FileTensorSource extends TensorSource {
  /** The files it reads (one, or the shards). */
  files: string[];
  close(): void;
}

interface OpenFile {
  file: string;
  fd: number;
  closed: boolean;
}

function readAt(f: OpenFile, into: Uint8Array, position: number): void {
  if (f.closed) throw new Error(`${f.file}: read after the tensor source was closed`);
  let done = 0;
  while (done < into.length) {
    const n = fs.readSync(f.fd, into, done, Math.min(READ_CHUNK, into.length - done), position + done);
    if (n === 0) throw new Error(`${f.file}: truncated (file ended at byte ${position + done}, ${into.length - done} bytes short)`);
    done += n;
  }
}

/** The readable dtypes with their codecs, in the order errors list them. */
const HF_CODECS = Object.fromEntries(HF_WEIGHT_DTYPES.map((d) => [d, SAFETENSORS_DTYPES[d]])) as Pick<typeof SAFETENSORS_DTYPES, HfWeightDtype>;

/** Reads and validates one file's header (safetensorsHeader.ts); returns its tensors (not yet read). */
function readHeader(f: OpenFile): TensorEntry[] {
  const ctx = { source: f.file, reader: 'hf', dtypes: HF_CODECS, fileSize: fs.fstatSync(f.fd).size } as const;
  const prefix = new Uint8Array(Math.min(8, ctx.fileSize));
  readAt(f, prefix, 0);
  const json = new Uint8Array(readHeaderLength(prefix, ctx));
  readAt(f, json, 8);
  const { dataStart, entries } = parseHeader(json, ctx);
  return entries.map(({ name, dtype, shape, begin, end, count }) => ({
    name,
    dtype,
    shape,
    file: f.file,
    read: () => {
      if (dtype === 'F32' && LITTLE_ENDIAN_HOST) {
        const out = new Float32Array(count);
        readAt(f, new Uint8Array(out.buffer), dataStart + begin);
        return out;
      }
      const bytes = new Uint8Array(end - begin);
      readAt(f, bytes, dataStart + begin);
      return HF_CODECS[dtype].read(new DataView(bytes.buffer), 0, count);
    },
  }));
}

function openFile(file: string, opened: OpenFile[], referrer?: string): OpenFile {
  let fd: number;
  try {
    fd = openRegularFile(file); // a FIFO, a device or a folder is refused before it is opened: nothing blocks
  } catch (err) {
    if (!(err instanceof FileAccessError)) throw err;
    const by = referrer ? ` (named by ${referrer})` : '';
    throw new Error(`${file}: cannot open${by}: ${err.code}`);
  }
  const f = { file, fd, closed: false };
  opened.push(f);
  return f;
}

/** Reads the index: tensor name -> shard file (absolute), validated. */
function readIndex(indexFile: string): Map<string, string> {
  let json: unknown;
  try {
    json = JSON.parse(readRegularTextFile(indexFile, MODEL_FILE_LIMITS[WEIGHTS_INDEX_FILE]));
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err; // not a regular file, too large, unreadable: already worded
    throw new Error(`${indexFile}: cannot read as JSON (${(err as Error).message})`);
  }
  const map = (json as { weight_map?: unknown } | null)?.weight_map;
  if (!map || typeof map !== 'object' || Array.isArray(map)) throw new Error(`${indexFile}: field "weight_map" is missing or not an object`);
  const out = new Map<string, string>();
  for (const [name, shard] of Object.entries(map as Record<string, unknown>)) {
    if (typeof shard !== 'string' || shard.length === 0) throw new Error(`${indexFile}: weight_map["${name}"] is not a file name`);
    out.set(name, path.resolve(path.dirname(indexFile), shard));
  }
  return out;
}

function makeSource(origin: string, files: OpenFile[], tensors: Map<string, TensorEntry>): FileTensorSource {
  return {
    origin,
    files: files.map((f) => f.file),
    names: () => [...tensors.keys()],
    get: (name) => tensors.get(name),
    close: () => {
      for (const f of files) {
        if (!f.closed) fs.closeSync(f.fd);
        f.closed = true;
      }
    },
  };
}

/** Opens a folder (single file or index + shards) or one .safetensors file; headers only. */
export function openTensorSource(location: string): FileTensorSource {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(location);
  } catch {
    throw new Error(`${location}: no such file or folder`);
  }
  const opened: OpenFile[] = [];
  try {
    const tensors = new Map<string, TensorEntry>();
    const add = (entry: TensorEntry): void => {
      const prior = tensors.get(entry.name);
      if (prior) throw new Error(`${entry.file}: tensor "${entry.name}" is listed twice (also in ${prior.file})`);
      tensors.set(entry.name, entry);
    };
    const indexFile = path.join(location, WEIGHTS_INDEX_FILE);
    if (stat.isDirectory() && fs.existsSync(indexFile)) {
      const weightMap = readIndex(indexFile);
      const shards = new Map<string, OpenFile>();
      for (const [name, shard] of weightMap) {
        if (!shards.has(shard)) {
          const f = openFile(shard, opened, `${indexFile} for tensor "${name}"`);
          shards.set(shard, f);
          for (const entry of readHeader(f)) add(entry);
        }
      }
      for (const [name, shard] of weightMap) {
        const entry = tensors.get(name);
        if (!entry) throw new Error(`${shard}: has no tensor "${name}" (named by ${indexFile})`);
        if (entry.file !== shard) throw new Error(`${entry.file}: holds tensor "${name}", which ${indexFile} places in ${shard}`);
      }
      return makeSource(location, opened, tensors);
    }
    const file = stat.isDirectory() ? path.join(location, WEIGHTS_FILE) : location;
    if (stat.isDirectory() && !fs.existsSync(file)) throw new Error(`${location}: no ${WEIGHTS_FILE} or ${WEIGHTS_INDEX_FILE} in this folder`);
    for (const entry of readHeader(openFile(file, opened))) add(entry);
    return makeSource(location, opened, tensors);
  } catch (err) {
    for (const f of opened) fs.closeSync(f.fd);
    throw err;
  }
}
