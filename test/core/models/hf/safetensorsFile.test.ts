// Checkpoint tensors on disk (src/core/models/hf/safetensorsFile.ts): single files and sharded
// folders (the committed fixtures), each dtype decoded from hand-written bytes, every malformed
// input an error naming the file and the tensor, and file descriptors released by close() and by
// a failed open.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openTensorSource } from '../../../../src/core/models/hf/safetensorsFile';

const FIXTURES = path.resolve(__dirname, '../../../fixtures/hf');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'srpo-hfst-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Writes a safetensors file from a raw header object and data bytes (no validation: tests write bad ones too). */
function writeRaw(file: string, header: unknown, data: Uint8Array, headerText?: string): string {
  const json = Buffer.from(headerText ?? JSON.stringify(header));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, Buffer.concat([len, json, Buffer.from(data)]));
  return file;
}

/** Little-endian bytes of u16 / f32 values. */
const u16 = (...v: number[]) => new Uint8Array(Uint16Array.from(v).buffer);
const f32 = (...v: number[]) => new Uint8Array(Float32Array.from(v).buffer);
const cat = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));

/** Open file descriptors of this process (Linux). */
const openFds = () => fs.readdirSync('/proc/self/fd').length;

describe('reading tensors', () => {
  it('decodes F32, BF16 and F16 from known bit patterns', () => {
    // BF16 0x3FC0 = 1.5, 0xC000 = -2; F16 0x3E00 = 1.5, 0xC000 = -2, 0x0001 = 2^-24 (subnormal), 0x7C00 = inf.
    const data = cat(f32(0.25, -3), u16(0x3fc0, 0xc000), u16(0x3e00, 0xc000, 0x0001, 0x7c00));
    const file = writeRaw(
      path.join(tmp, 'dtypes.safetensors'),
      {
        __metadata__: { format: 'pt' },
        a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] },
        b: { dtype: 'BF16', shape: [1, 2], data_offsets: [8, 12] },
        c: { dtype: 'F16', shape: [2, 2], data_offsets: [12, 20] },
      },
      data,
    );
    const src = openTensorSource(file);
    try {
      expect(src.names().sort()).toEqual(['a', 'b', 'c']);
      expect(src.get('b')).toMatchObject({ name: 'b', dtype: 'BF16', shape: [1, 2], file });
      expect([...src.get('a')!.read()]).toEqual([0.25, -3]);
      expect([...src.get('b')!.read()]).toEqual([1.5, -2]);
      expect([...src.get('c')!.read()]).toEqual([1.5, -2, 2 ** -24, Infinity]);
      expect(src.get('missing')).toBeUndefined();
    } finally {
      src.close();
    }
  });

  it('a folder with model.safetensors (qwen3-tiny, BF16): every tensor, no metadata entry', () => {
    const src = openTensorSource(path.join(FIXTURES, 'qwen3-tiny'));
    try {
      expect(src.files).toEqual([path.join(FIXTURES, 'qwen3-tiny', 'model.safetensors')]);
      expect(src.names()).toContain('model.layers.1.self_attn.q_norm.weight');
      expect(src.names()).not.toContain('__metadata__');
      const emb = src.get('model.embed_tokens.weight')!;
      expect(emb).toMatchObject({ dtype: 'BF16', shape: [320, 32] });
      const values = emb.read();
      expect(values.length).toBe(320 * 32);
      // Widened bf16: every value's low 16 bits are zero.
      expect(new Uint32Array(values.buffer).every((b) => (b & 0xffff) === 0)).toBe(true);
    } finally {
      src.close();
    }
  });

  it('a sharded folder (index + 4 F16 shards): each tensor from the shard the index names', () => {
    const dir = path.join(FIXTURES, 'llama-tiny-sharded');
    const index = JSON.parse(fs.readFileSync(path.join(dir, 'model.safetensors.index.json'), 'utf8')).weight_map as Record<string, string>;
    const src = openTensorSource(dir);
    try {
      expect(src.files.length).toBe(4);
      expect(src.names().sort()).toEqual(Object.keys(index).sort());
      for (const [name, shard] of Object.entries(index)) {
        const entry = src.get(name)!;
        expect(entry.file).toBe(path.join(dir, shard));
        expect(entry.dtype).toBe('F16');
      }
      const head = src.get('lm_head.weight')!.read();
      expect(head.length).toBe(320 * 32);
      expect(head.every(Number.isFinite)).toBe(true);
    } finally {
      src.close();
    }
  });

  it('reads a tensor stored past 2 GiB with positioned reads (a sparse 2.5 GiB file)', () => {
    // fs.readFile refuses files over 2 GiB; the source must read at offsets instead. The file is
    // sparse (ftruncate), so it costs no disk space.
    const file = path.join(tmp, 'big.safetensors');
    const far = 2.5 * 2 ** 30; // data offset of the tensor, bytes
    const header = Buffer.from(
      JSON.stringify({ pad: { dtype: 'F32', shape: [far / 4], data_offsets: [0, far] }, far: { dtype: 'BF16', shape: [3], data_offsets: [far, far + 6] } }),
    );
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(header.length));
    const fd = fs.openSync(file, 'w');
    try {
      fs.writeSync(fd, Buffer.concat([len, header]), 0, 8 + header.length, 0);
      fs.writeSync(fd, Buffer.from(u16(0x3f80, 0x4000, 0xbf80)), 0, 6, 8 + header.length + far); // bf16 1, 2, -1
    } finally {
      fs.closeSync(fd);
    }
    expect(fs.statSync(file).size).toBeGreaterThan(2 ** 31);
    const src = openTensorSource(file);
    try {
      expect([...src.get('far')!.read()]).toEqual([1, 2, -1]);
    } finally {
      src.close();
      fs.rmSync(file);
    }
  });

  it('accepts the path of one .safetensors file (a shard)', () => {
    const file = path.join(FIXTURES, 'llama-tiny-sharded', 'model-00001-of-00004.safetensors');
    const src = openTensorSource(file);
    expect(src.origin).toBe(file);
    expect(src.names()).toContain('model.embed_tokens.weight');
    src.close();
  });
});

describe('file descriptors', () => {
  it('close() releases every shard; reads after it throw', () => {
    const before = openFds();
    const src = openTensorSource(path.join(FIXTURES, 'llama-tiny-sharded'));
    expect(openFds()).toBe(before + 4);
    const entry = src.get('model.norm.weight')!;
    src.close();
    expect(openFds()).toBe(before);
    expect(() => entry.read()).toThrow(/read after the tensor source was closed/);
    src.close(); // idempotent
  });

  it('an open that fails half-way (a later shard missing) leaves nothing open', () => {
    const dir = path.join(tmp, 'half');
    fs.cpSync(path.join(FIXTURES, 'llama-tiny-sharded'), dir, { recursive: true });
    fs.rmSync(path.join(dir, 'model-00004-of-00004.safetensors'));
    const before = openFds();
    expect(() => openTensorSource(dir)).toThrow(
      /model-00004-of-00004\.safetensors: cannot open \(named by .*model\.safetensors\.index\.json for tensor "lm_head\.weight"\): ENOENT/,
    );
    expect(openFds()).toBe(before);
  });
});

describe('bad input is an error naming the file and the tensor', () => {
  const one = (name: string, header: unknown, data: Uint8Array, text?: string) => writeRaw(path.join(tmp, name), header, data, text);

  it('a missing path, or a folder without weights', () => {
    expect(() => openTensorSource(path.join(tmp, 'nope'))).toThrow(/nope: no such file or folder/);
    fs.mkdirSync(path.join(tmp, 'empty'), { recursive: true });
    expect(() => openTensorSource(path.join(tmp, 'empty'))).toThrow(/empty: no model\.safetensors or model\.safetensors\.index\.json in this folder/);
  });

  it('a truncated file: data_offsets past the end, naming the tensor', () => {
    const dir = path.join(tmp, 'cut');
    fs.mkdirSync(dir, { recursive: true });
    const bytes = fs.readFileSync(path.join(FIXTURES, 'qwen2-tiny', 'model.safetensors'));
    fs.writeFileSync(path.join(dir, 'model.safetensors'), bytes.subarray(0, bytes.length - 100));
    expect(() => openTensorSource(dir)).toThrow(
      /cut\/model\.safetensors: tensor "[^"]+": truncated: data_offsets \[\d+, \d+\] run past the end of the data section/,
    );
  });

  it('a file shorter than its header length, or than 8 bytes', () => {
    const file = one('short.safetensors', {}, new Uint8Array(), '{"a":');
    fs.truncateSync(file, 10);
    expect(() => openTensorSource(file)).toThrow(/short\.safetensors: truncated or not a safetensors file: header length 5 exceeds the 2 bytes/);
    fs.writeFileSync(file, 'abc');
    expect(() => openTensorSource(file)).toThrow(/short\.safetensors: truncated: 3 bytes/);
  });

  it('a header that is not JSON', () => {
    expect(() => openTensorSource(one('notjson.safetensors', null, new Uint8Array(4), '{"a": [1, 2'))).toThrow(/notjson\.safetensors: header is not JSON/);
    expect(() => openTensorSource(one('array.safetensors', [1], new Uint8Array()))).toThrow(/array\.safetensors: header is not a JSON object/);
  });

  it('a tensor listed twice in one header (JSON.parse would silently keep the last)', () => {
    const entry = '{"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}';
    const text = `{"__metadata__": {"w": "x"}, "w": ${entry}, "v": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "w": ${entry}}`;
    expect(() => openTensorSource(one('dup.safetensors', null, new Uint8Array(4), text))).toThrow(/dup\.safetensors: tensor "w" is listed twice in the header/);
    // Nested keys of the same name (metadata, entry fields) are not duplicates.
    const ok = `{"__metadata__": {"dtype": "x", "w\\"q": "y"}, "w": ${entry}}`;
    const src = openTensorSource(one('nodup.safetensors', null, f32(5), ok));
    expect([...src.get('w')!.read()]).toEqual([5]);
    src.close();
  });

  it('an unsupported dtype', () => {
    const file = one('f64.safetensors', { w: { dtype: 'F64', shape: [1], data_offsets: [0, 8] } }, new Uint8Array(8));
    expect(() => openTensorSource(file)).toThrow(/f64\.safetensors: tensor "w": unsupported dtype "F64" \(readable: F32, BF16, F16\)/);
  });

  it('offsets that disagree with the shape, and malformed entries', () => {
    expect(() => openTensorSource(one('span.safetensors', { w: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }, new Uint8Array(8)))).toThrow(
      /span\.safetensors: tensor "w": data_offsets span 8 bytes, shape \[3\] of F32 needs 12/,
    );
    expect(() => openTensorSource(one('shape.safetensors', { w: { dtype: 'F32', shape: [-1], data_offsets: [0, 4] } }, new Uint8Array(4)))).toThrow(
      /tensor "w": shape \[-1\] is not a list of sizes/,
    );
    expect(() => openTensorSource(one('offs.safetensors', { w: { dtype: 'F32', shape: [1], data_offsets: [4] } }, new Uint8Array(4)))).toThrow(
      /tensor "w": data_offsets \[4\] is not \[begin, end\]/,
    );
  });

  describe('sharded folders', () => {
    /** A two-shard folder: a.safetensors holds x, b.safetensors holds y (and `extraInB`). */
    function sharded(name: string, weightMap: Record<string, string>, extraInB = false): string {
      const dir = path.join(tmp, name);
      writeRaw(path.join(dir, 'a.safetensors'), { x: { dtype: 'F32', shape: [1], data_offsets: [0, 4] } }, f32(1));
      const bHeader: Record<string, unknown> = { y: { dtype: 'F32', shape: [1], data_offsets: [0, 4] } };
      if (extraInB) bHeader.x = { dtype: 'F32', shape: [1], data_offsets: [4, 8] };
      writeRaw(path.join(dir, 'b.safetensors'), bHeader, f32(2, 3));
      fs.writeFileSync(path.join(dir, 'model.safetensors.index.json'), JSON.stringify({ metadata: { total_size: 8 }, weight_map: weightMap }));
      return dir;
    }

    it('a valid two-shard folder reads each tensor from its shard', () => {
      const src = openTensorSource(sharded('ok', { x: 'a.safetensors', y: 'b.safetensors' }));
      expect([...src.get('x')!.read(), ...src.get('y')!.read()]).toEqual([1, 2]);
      src.close();
    });
    it('an index naming a missing shard names the index, the shard and the tensor', () => {
      expect(() => openTensorSource(sharded('missing', { x: 'a.safetensors', y: 'b.safetensors', z: 'c.safetensors' }))).toThrow(
        /missing\/c\.safetensors: cannot open \(named by .*missing\/model\.safetensors\.index\.json for tensor "z"\): ENOENT/,
      );
    });
    it('an index naming a tensor its shard lacks', () => {
      expect(() => openTensorSource(sharded('lacks', { x: 'a.safetensors', q: 'b.safetensors' }))).toThrow(
        /lacks\/b\.safetensors: has no tensor "q" \(named by .*index\.json\)/,
      );
    });
    it('a tensor listed twice (in two shards) names both files', () => {
      expect(() => openTensorSource(sharded('twice', { x: 'a.safetensors', y: 'b.safetensors' }, true))).toThrow(
        /twice\/b\.safetensors: tensor "x" is listed twice \(also in .*twice\/a\.safetensors\)/,
      );
    });
    it('an index that is not JSON, or has no weight_map', () => {
      const dir = sharded('badindex', {});
      fs.writeFileSync(path.join(dir, 'model.safetensors.index.json'), '{');
      expect(() => openTensorSource(dir)).toThrow(/badindex\/model\.safetensors\.index\.json: cannot read as JSON/);
      fs.writeFileSync(path.join(dir, 'model.safetensors.index.json'), '{"metadata": {}}');
      expect(() => openTensorSource(dir)).toThrow(/index\.json: field "weight_map" is missing or not an object/);
    });
  });
});
