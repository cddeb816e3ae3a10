/**
 * Writes a Hugging Face model folder that transformers loads (`AutoModelForCausalLM.from_pretrained`)
 * from a base checkpoint and, optionally, LoRA pairs merged into it (Node: node:fs):
 *   model.safetensors, or model-0000i-of-0000N.safetensors + model.safetensors.index.json above
 *   `maxShardBytes` (default 5e9 bytes, transformers 4's "5GB"; transformers 5 defaults to 50GB);
 *   config.json (the source's, with `dtype` (and `torch_dtype`, where the source spelt it so) set
 *   to what was written); generation_config.json and the tokenizer files copied when present.
 *
 * Streaming: every shard's header is written first (names, dtypes and shapes are known up front
 * from the source's headers), then each tensor is read, merged (W + scale * B A, accumulated in
 * float64, rounded once to float32), converted (F32, or BF16 round-to-nearest-even, bf16.ts) and
 * appended before the next is read: one tensor in memory at a time, never the model. Atomic: the
 * folder is built under a hidden temporary name beside the destination and renamed onto it at the
 * end; any failure removes it, so the destination is either complete or absent (a process killed
 * mid-write leaves only the hidden `.NAME.partial-PID-XXXXXXXX` folder beside it). Errors name the
 * file and the tensor.
 *
 * Layout as transformers writes it: tensors sorted by name in each header, `__metadata__`
 * `{"format": "pt"}`, the header padded with spaces so the data starts 8-byte aligned; the index is
 * `{"metadata": {"total_parameters", "total_size"}, "weight_map"}`. Sharding is greedy, as
 * huggingface_hub's `split_state_dict_into_shards_factory`, but in name order (transformers goes in
 * the model's parameter order) and a tensor larger than the limit closes the current shard and gets
 * one of its own (the hub's keeps filling the current one around it).
 *
 * Not here: the adapter-only layout (saveAdapter.ts), reading (safetensorsFile.ts). Tests:
 * test/core/models/hf/saveModel.test.ts (structure against transformers' own save of the merged
 * fixture, merged == base + adapter through reference.ts, sharding, atomicity, errors); the check
 * with real transformers is scripts/fixtures/check_exports.py (dev only).
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { f32ToBf16 } from './bf16';
import { WEIGHTS_FILE, WEIGHTS_INDEX_FILE } from './safetensorsFile';
import type { HfModelConfig, LoraPair, TensorEntry, TensorSource } from './types';
import { checkWeights } from './weights';
import { fsError, lstatOrNull, withFsError } from '../../util/fsErrors';
import { checkRegularFile, readRegularTextFile } from '../../util/regularFile';
import { MODEL_FILE_LIMITS } from '../fileLimits';
import { encodeHeader } from '../safetensorsHeader';

/** The dtypes a merged model is written in. */
export type ExportDtype = 'BF16' | 'F32';

interface ExportCodec {
  bytes: number;
  /** config.json's `dtype` for it (torch's name). */
  torchName: string;
  /** Little-endian bytes of the values. */
  encode: (values: Float32Array) => Uint8Array;
}

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function f32Bytes(v: Float32Array): Uint8Array {
  if (LITTLE_ENDIAN_HOST) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  const out = new Uint8Array(v.byteLength);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < v.length; i++) dv.setFloat32(4 * i, v[i], true);
  return out;
}

function u16Bytes(v: Uint16Array): Uint8Array {
  if (LITTLE_ENDIAN_HOST) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  const out = new Uint8Array(v.byteLength);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < v.length; i++) dv.setUint16(2 * i, v[i], true);
  return out;
}

export const EXPORT_DTYPES = {
  F32: { bytes: 4, torchName: 'float32', encode: f32Bytes },
  BF16: { bytes: 2, torchName: 'bfloat16', encode: (v) => u16Bytes(f32ToBf16(v)) },
} satisfies Record<ExportDtype, ExportCodec>;

/** transformers 4's default `max_shard_size` ("5GB" = 5 * 10^9 bytes). */
export const DEFAULT_MAX_SHARD_BYTES = 5_000_000_000;

/** Files copied from the source folder when present (tokenizer and generation settings). */
export const COPIED_FILES = [
  'generation_config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'chat_template.jinja',
  'chat_template.json',
  'special_tokens_map.json',
  'added_tokens.json',
  'vocab.json',
  'merges.txt',
  'tokenizer.model',
] as const;

export interface SaveMergedModelOptions {
  /** The base model folder: config.json is rewritten from it, COPIED_FILES copied from it. */
  sourceDir: string;
  /** sourceDir's config.json, parsed (config.ts); the tensors are checked against it before writing. */
  config: HfModelConfig;
  /** The base weights, read one tensor at a time (openTensorSource(sourceDir), or weights in memory). */
  source: TensorSource;
  /** LoRA pairs merged into the weights they target (W + scale * B A); none: the base as it is. */
  lora?: LoraPair[];
  /** What the weights are written in. */
  dtype: ExportDtype;
  /** Largest shard in bytes of tensor data before a new one starts (default 5e9). */
  maxShardBytes?: number;
}

export interface SavedModel {
  dir: string;
  /** The weight files written (one, or the shards), relative to dir. */
  weightFiles: string[];
  /** Every file written, relative to dir, sorted. */
  files: string[];
  tensors: number;
  /** Bytes of tensor data (the index's total_size). */
  totalBytes: number;
}

/**
 * Whether a new folder may be written at `dest` (writeFolderAtomically's rules: absent, or an
 * empty folder that is replaced; never a symbolic link); throws in words naming the path.
 * Callers check before long work, so a refused destination costs nothing.
 */
export function checkFolderDestination(dest: string): { replaceEmpty: boolean } {
  const target = path.resolve(dest);
  const st = lstatOrNull(target);
  if (st?.isSymbolicLink()) {
    const to = withFsError(target, 'read the link', () => fs.readlinkSync(target));
    throw new Error(`${target}: is a symbolic link (to ${to}); the export writes a new folder and does not follow or replace links: choose another path`);
  }
  if (!st) return { replaceEmpty: false };
  if (!st.isDirectory() || withFsError(target, 'list', () => fs.readdirSync(target)).length > 0) {
    throw new Error(`${target}: already exists and is not an empty folder (choose a new folder or remove it)`);
  }
  return { replaceEmpty: true };
}

/**
 * Builds a folder under a temporary name beside `dest` and renames it onto `dest` once `fill`
 * returns; on any failure the temporary folder is removed and the error rethrown. `dest` must not
 * exist, or be an empty folder (which is replaced). A symbolic link at `dest` (to a folder, a file,
 * or nothing) is refused: following it would write somewhere the person did not name, and the
 * rename would replace the link. File-system errors name the path in words (util/fsErrors.ts).
 */
export function writeFolderAtomically(dest: string, fill: (dir: string) => void): void {
  const target = path.resolve(dest);
  const { replaceEmpty } = checkFolderDestination(target);
  const parent = path.dirname(target);
  withFsError(parent, 'create the folder', () => fs.mkdirSync(parent, { recursive: true }));
  // mkdtemp would make it 0700; a model folder is made like any other (mode from the umask).
  const tmp = path.join(parent, `.${path.basename(target)}.partial-${process.pid}-${randomBytes(4).toString('hex')}`);
  withFsError(target, 'write', () => fs.mkdirSync(tmp));
  try {
    fill(tmp);
    if (replaceEmpty) withFsError(target, 'replace the empty folder', () => fs.rmdirSync(target));
    withFsError(target, 'move the finished folder into place', () => fs.renameSync(tmp, target));
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw fsError(err, target, 'write');
  }
}

/** Writes all of `bytes` at the file's current end (writeSync may write less than asked). */
function writeAll(fd: number, bytes: Uint8Array, file: string): void {
  const CHUNK = 1 << 30;
  let done = 0;
  while (done < bytes.length) {
    const n = fs.writeSync(fd, bytes, done, Math.min(CHUNK, bytes.length - done));
    if (n <= 0) throw new Error(`${file}: write returned ${n} after ${done} of ${bytes.length} bytes`);
    done += n;
  }
}

/** W [out, in] += scale * B [out, r] A [r, in], in place; float64 sums rounded once to float32. */
export function mergeLoraPair(w: Float32Array, pair: LoraPair): Float32Array {
  const { a, b, r, inFeatures: nIn, outFeatures: nOut, scale } = pair;
  if (w.length !== nOut * nIn) throw new Error(`${pair.target}: has ${w.length} values, the LoRA pair needs [${nOut}, ${nIn}]`);
  if (a.length !== r * nIn || b.length !== nOut * r)
    throw new Error(`${pair.target}: LoRA A has ${a.length} values (want [${r}, ${nIn}]), B ${b.length} (want [${nOut}, ${r}])`);
  const row = new Float64Array(nIn); // [in]
  for (let o = 0; o < nOut; o++) {
    row.fill(0);
    for (let k = 0; k < r; k++) {
      const bok = b[o * r + k];
      if (bok === 0) continue;
      const ak = k * nIn;
      for (let i = 0; i < nIn; i++) row[i] += bok * a[ak + i];
    }
    const wo = o * nIn;
    for (let i = 0; i < nIn; i++) w[wo + i] = w[wo + i] + scale * row[i];
  }
  return w;
}

interface PlannedTensor {
  name: string;
  shape: number[];
  count: number;
  bytes: number;
  entry: TensorEntry;
}

/** Greedy shards in name order; a tensor over the limit alone in its own shard. */
export function planShards<T extends { bytes: number }>(tensors: T[], maxShardBytes: number): T[][] {
  const shards: T[][] = [];
  let current: T[] = [];
  let size = 0;
  for (const t of tensors) {
    if (current.length > 0 && size + t.bytes > maxShardBytes) {
      shards.push(current);
      current = [];
      size = 0;
    }
    current.push(t);
    size += t.bytes;
  }
  if (current.length > 0) shards.push(current);
  return shards;
}

/** One shard: header first, then each tensor read, merged, converted and appended in turn. */
function writeShard(file: string, tensors: PlannedTensor[], dtype: ExportDtype, lora: Map<string, LoraPair>): void {
  const codec = EXPORT_DTYPES[dtype];
  const fd = fs.openSync(file, 'wx');
  try {
    writeAll(
      fd,
      encodeHeader(
        tensors.map((t) => ({ name: t.name, dtype, shape: t.shape, bytes: t.bytes })),
        { format: 'pt' },
      ),
      file,
    );
    for (const t of tensors) {
      try {
        const values = t.entry.read(); // [count] float32
        if (values.length !== t.count) throw new Error(`read ${values.length} values, its shape [${t.shape}] holds ${t.count}`);
        const pair = lora.get(t.name);
        if (pair) mergeLoraPair(values, pair);
        const bytes = codec.encode(values);
        if (bytes.length !== t.bytes) throw new Error(`encoded to ${bytes.length} bytes, expected ${t.bytes}`);
        writeAll(fd, bytes, file);
      } catch (err) {
        throw new Error(`${file}: tensor "${t.name}" (from ${t.entry.file}): ${(err as Error).message}`, { cause: err });
      }
    }
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Deep equality of parsed JSON values. */
function sameJson(x: unknown, y: unknown): boolean {
  if (x === y) return true;
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null || Array.isArray(x) !== Array.isArray(y)) return false;
  const kx = Object.keys(x);
  const ky = Object.keys(y);
  return kx.length === ky.length && kx.every((k) => k in y && sameJson((x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k]));
}

/**
 * config.json's text with `dtype` (and `torch_dtype`, where present) set to `torchName`, every
 * other byte as the source wrote it: JSON.stringify would turn Python's `1e-06` and `10000.0` into
 * `0.000001` and `10000` (equal values, but a diff a user would not expect). The edit is checked by
 * parsing it back; a layout it does not recognise is rewritten whole instead.
 */
export function configWithDtype(text: string, file: string, torchName: string): string {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: cannot read as JSON (${(err as Error).message})`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error(`${file}: not a JSON object`);
  const want: Record<string, unknown> = { ...(json as Record<string, unknown>), dtype: torchName };
  if ('torch_dtype' in want) want.torch_dtype = torchName;
  let out = text;
  for (const key of ['dtype', 'torch_dtype'].filter((k) => k in json)) {
    out = out.replace(new RegExp(`^(\\s{2}"${key}":\\s*)("[^"]*"|null)`, 'm'), (_, lead: string) => `${lead}"${torchName}"`);
  }
  if (!('dtype' in json)) out = out.replace(/^\{\n/, `{\n  "dtype": "${torchName}",\n`);
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(out);
  } catch {
    // not recognised: rewritten whole below
  }
  return sameJson(parsed, want) ? out : `${JSON.stringify(want, null, 2)}\n`;
}

/** Checks the LoRA pairs against the source's tensors; returns them by target. */
function lorasByTarget(source: TensorSource, lora: LoraPair[]): Map<string, LoraPair> {
  const out = new Map<string, LoraPair>();
  for (const pair of lora) {
    const entry = source.get(pair.target);
    if (!entry) throw new Error(`LoRA pair for "${pair.target}": ${source.origin} has no such tensor`);
    if (out.has(pair.target)) throw new Error(`LoRA pair for "${pair.target}": given twice`);
    const [o, i] = entry.shape;
    if (entry.shape.length !== 2 || o !== pair.outFeatures || i !== pair.inFeatures) {
      throw new Error(
        `LoRA pair for "${pair.target}": adapts [${pair.outFeatures}, ${pair.inFeatures}], but ${entry.file} has it as [${entry.shape.join(', ')}]`,
      );
    }
    if (pair.a.length !== pair.r * i || pair.b.length !== o * pair.r) {
      throw new Error(`LoRA pair for "${pair.target}": A has ${pair.a.length} values (want [${pair.r}, ${i}]), B ${pair.b.length} (want [${o}, ${pair.r}])`);
    }
    out.set(pair.target, pair);
  }
  return out;
}

/** Writes the merged (or plain) model folder `outDir`; see the header. */
export function saveMergedModel(outDir: string, opts: SaveMergedModelOptions): SavedModel {
  const { sourceDir, config, source, dtype } = opts;
  const codec = EXPORT_DTYPES[dtype];
  if (!codec) throw new Error(`saveMergedModel: dtype ${JSON.stringify(dtype)} is not one of ${Object.keys(EXPORT_DTYPES).join(', ')}`);
  const maxShardBytes = opts.maxShardBytes ?? DEFAULT_MAX_SHARD_BYTES;
  if (!(maxShardBytes > 0)) throw new Error(`saveMergedModel: maxShardBytes must be positive, got ${maxShardBytes}`);
  const configFile = path.join(sourceDir, 'config.json');
  if (!fs.existsSync(configFile)) throw new Error(`${configFile}: missing (the exported model's config.json is the source's, with its dtype updated)`);
  const configText = configWithDtype(readRegularTextFile(configFile, MODEL_FILE_LIMITS['config.json']), configFile, codec.torchName);

  // Everything that can be refused is refused before the first byte is written.
  checkWeights(config, source);
  const lora = lorasByTarget(source, opts.lora ?? []);
  const planned: PlannedTensor[] = source
    .names()
    .filter((name) => !name.endsWith('.rotary_emb.inv_freq')) // buffers older writers saved; transformers recomputes them
    .sort()
    .map((name) => {
      const entry = source.get(name)!;
      const count = entry.shape.reduce((x, y) => x * y, 1);
      return { name, shape: entry.shape, count, bytes: count * codec.bytes, entry };
    });
  const shards = planShards(planned, maxShardBytes);
  const names =
    shards.length === 1
      ? [WEIGHTS_FILE]
      : shards.map((_, i) => `model-${String(i + 1).padStart(5, '0')}-of-${String(shards.length).padStart(5, '0')}.safetensors`);
  const totalBytes = planned.reduce((s, t) => s + t.bytes, 0);

  const written: string[] = [];
  writeFolderAtomically(outDir, (tmp) => {
    shards.forEach((shard, i) => {
      writeShard(path.join(tmp, names[i]), shard, dtype, lora);
      written.push(names[i]);
    });
    if (shards.length > 1) {
      const weightMap: Record<string, string> = {};
      shards.forEach((shard, i) => shard.forEach((t) => (weightMap[t.name] = names[i])));
      const index = { metadata: { total_parameters: planned.reduce((s, t) => s + t.count, 0), total_size: totalBytes }, weight_map: weightMap };
      fs.writeFileSync(path.join(tmp, WEIGHTS_INDEX_FILE), `${JSON.stringify(index, null, 2)}\n`);
      written.push(WEIGHTS_INDEX_FILE);
    }
    fs.writeFileSync(path.join(tmp, 'config.json'), configText);
    written.push('config.json');
    for (const name of COPIED_FILES) {
      const from = path.join(sourceDir, name);
      if (!fs.existsSync(from)) continue;
      checkRegularFile(from, (MODEL_FILE_LIMITS as Record<string, number>)[name]); // a FIFO would block the copy, /dev/zero never end it
      try {
        fs.copyFileSync(from, path.join(tmp, name));
      } catch (err) {
        throw new Error(`${from}: cannot copy into the exported model (${(err as Error).message})`);
      }
      written.push(name);
    }
  });
  return { dir: path.resolve(outDir), weightFiles: names, files: [...written].sort(), tensors: planned.length, totalBytes };
}
