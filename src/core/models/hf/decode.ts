/**
 * The KV-cache decoding step of the Hugging Face model family (model.ts `decodeStep`): one new
 * token per row against the cache that `prefill` made, inference only (no tape, no LoRA dropout).
 * The same architecture as model.ts `block` (read its header), written for the cost of a step
 * rather than shared with training: at 8 rows a step on wasm is ~45% weight products, the rest
 * small kernels (~5-10 us of fixed cost each) and the cache's attention, so this path spends fewer
 * kernels on the same arithmetic:
 * - q and k go through their per-head RMSNorm (Qwen3) and RoPE as ONE block of nH + nKV heads,
 *   with per-head norm weights and per-step cos / sin tables [B, nH+nKV, hd] built once for all
 *   layers (the query rows carry head_dim^-0.5), then two slices: ~10 kernels fewer per layer,
 *   the same float32 operations per element as model.ts;
 * - a tied embedding stored [d, V] (the head's layout) is looked up from a row-major copy on
 *   wasm (`HF_DECODE_LOOKUP`): gathering B columns of the [d, V] table touches a page per
 *   element and cost ~0.8 ms of a ~11 ms step at 8 rows (measured, load ~15), B contiguous rows
 *   almost nothing. The copy costs V x d x 4 bytes once (wasm models are small: its 4 GB heap);
 *   it is rebuilt when the table is assigned (full fine-tuning), see `derived`;
 * - the RMSNorm epsilon is one kept scalar, not a new tensor per norm.
 * Together (the bench shape, t = 80, CPU time, old and new step alternated in one process, 40
 * pairs on a loaded machine): 216 kernels per step instead of 281; 8 rows -0.6 ms of ~10.8 (the
 * lookup most of it), one row -0.3 to -0.45 ms of ~4. Measured and not done: one fused q/k/v product (and gate/up) saves little at 8 rows (2.97 ->
 * 2.79 ms for all of a step's linears) and needs copies of those weights; attention products as
 * depthwise convolutions (`channelProduct`) are not faster at these sizes (0.66 vs 0.74 ms per
 * layer at 8 rows, t = 81; 3x slower at one row).
 *
 * Cache: per layer, chunks [B*nKV, t_i, hd], oldest first (keys untransposed: appending a step
 * is contiguous). A step appends to the last chunk until it holds `kvChunk` positions, then
 * starts a new one: tensors are immutable, so one growing tensor is copied whole every step,
 * while the chunks before the last are reused as they are.
 * Not here: prefill and the training forward (model.ts), sampling (sampler.ts).
 * Tests: test/core/models/hf/model.test.ts (prefill + decode steps equal the full forward and
 * transformers' logits), sampler.test.ts (KV decoding equals full recomputation),
 * decode.test.ts (the lookup variants, constants rebuilt after an assign, no leaks).
 */
import * as tf from '@tensorflow/tfjs';
import { KERNEL_BACKENDS, type KernelBackend } from '../layers';
import { gatherColumns } from './headOps';
import { ropeTables } from './layers';
import type { RopeFrequencies } from './rope';
import type { HfModelConfig } from './types';

/** Per layer key and value cache as chunks [B*nKV, t_i, hd], oldest first (header). */
export type HfKvCache = {
  k: tf.Tensor3D[][]; // [layer][chunk]
  v: tf.Tensor3D[][];
};

/**
 * Positions per KV-cache chunk (header). Each extra chunk costs ~10 small kernels per layer per
 * step, so short rollouts keep one growing chunk (a 16-token prompt + 128 new tokens: chunks of
 * 64 were ~5% slower per step than one, within the bench's noise), and long ones copy at most
 * this many positions per step instead of all of them (~10% per step at ~900 positions with
 * chunks of 64 on the bench shape).
 */
export const KV_CHUNK = 256;

export type HfStepOutput = {
  logits: tf.Tensor2D; // [B, V] for the last position of each row
  cache: HfKvCache;
};

/** A LoRA pair as model.ts keeps it: a = A^T [in, r], b = B^T [r, out]. */
export type DecodeLora = { a: tf.Tensor; b: tf.Tensor; scale: number };

/** How a decoding step looks up a tied embedding stored [d, V]. */
const TIED_LOOKUPS = {
  /** Gather B columns of the table, then transpose the small [d, B] result (no copy of the table). */
  columns: gatherColumns, // [B, d]
  /** Gather B rows of a row-major copy [V, d] (`rows` of the decoder, built once per table). */
  rows: (ids: tf.Tensor1D, rows: tf.Tensor2D) => tf.gather(rows, ids) as tf.Tensor2D, // [B, d]
} satisfies Record<string, (ids: tf.Tensor1D, t: tf.Tensor2D) => tf.Tensor2D>;
type TiedLookup = keyof typeof TIED_LOOKUPS;

/**
 * The tied-embedding lookup per tfjs backend (../layers.ts `KERNEL_BACKENDS`): wasm gathers
 * rows of a copy (header); cpu (tests, reference) and tensorflow (tfjs-node, where the large
 * models run and a second copy of a 150k-row table would cost hundreds of MB) gather columns.
 */
export const HF_DECODE_LOOKUP = {
  wasm: 'rows',
  cpu: 'columns',
  tensorflow: 'columns',
} satisfies Record<KernelBackend, TiedLookup>;

function lookupFor(backend: string): TiedLookup {
  if (!Object.hasOwn(HF_DECODE_LOOKUP, backend))
    throw new Error(`hf/decode.ts: no decoding lookup for tfjs backend "${backend}"; known: ${KERNEL_BACKENDS.join(', ')}`);
  return HF_DECODE_LOOKUP[backend as KernelBackend];
}

const EMBED = 'model.embed_tokens.weight';

/**
 * The decoding step of one model: its weights by checkpoint name (model.ts layout: linears
 * [in, out], a tied head [d, V]), and the constants it derives from them (`derived`), which it
 * owns and `dispose` frees.
 */
export class HfDecoder {
  /** Tied-embedding lookup; tests set it to compare the variants. Default: per backend (HF_DECODE_LOOKUP). */
  tiedLookup: TiedLookup | null = null;
  private readonly constants = new Map<string, { sources: object[]; value: tf.Tensor }>();

  /**
   * Builds the derived constants at once (at load: so sampling never changes the count of live
   * tensors, which the leak tests hold fixed across calls); they are rebuilt only after their
   * weights are assigned.
   */
  constructor(
    private readonly config: HfModelConfig,
    private readonly params: ReadonlyMap<string, tf.Variable>,
    private readonly rot: tf.Tensor2D, // [hd, hd] rotate-half matrix (model.ts owns it)
    private readonly rope: RopeFrequencies,
  ) {
    this.epsilon();
    if (config.qkNorm) for (let l = 0; l < config.numLayers; l++) this.qkNormWeight(l);
    const backend = tf.getBackend(); // an unknown one fails at the first step, naming the known ones (`lookupFor`)
    if (config.tieWordEmbeddings && Object.hasOwn(HF_DECODE_LOOKUP, backend) && lookupFor(backend) === 'rows') this.embedRows();
  }

  /**
   * One step: ids[r] at positions[r], attending to the cache and itself. keyBias [B, t+1]: 0 for
   * visible keys, MASKED for pad keys. Returns the last position's logits and a new cache whose
   * earlier chunks alias the old one's (the caller disposes the old cache). Inputs checked by
   * model.ts `decodeStep`.
   */
  step(
    ids: readonly number[],
    positions: readonly number[],
    cache: HfKvCache,
    keyBias: Float32Array,
    lora: ReadonlyMap<string, DecodeLora> | null,
    kvChunk: number,
  ): HfStepOutput {
    const B = ids.length;
    const { numHeads: H, numKvHeads: nKv, headDim: hd } = this.config;
    const t = keyBias.length / B;
    const { cos, sin } = this.stepRope(positions);
    const eps = this.epsilon();
    return tf.tidy(() => {
      const bias = tf.tensor4d(keyBias, [B, 1, 1, t]); // [B, 1, 1, t]
      const rope = { cos: tf.tensor3d(cos, [B, H + nKv, hd]), sin: tf.tensor3d(sin, [B, H + nKv, hd]) };
      const next: HfKvCache = { k: [], v: [] };
      let x = this.embed(tf.tensor1d(ids as number[], 'int32')); // [B, d]
      for (let l = 0; l < this.config.numLayers; l++) {
        x = this.layer(
          l,
          x,
          rope,
          eps,
          (q, k, v) => {
            const kc = appendToCache(cache.k[l], tf.reshape(k, [B * nKv, 1, hd]) as tf.Tensor3D, kvChunk); // chunks [B*nKV, t_i, hd]
            const vc = appendToCache(cache.v[l], tf.reshape(v, [B * nKv, 1, hd]) as tf.Tensor3D, kvChunk);
            next.k.push(kc);
            next.v.push(vc);
            return attendCache(q, kc, vc, bias, B, H, nKv); // [B, nH*hd]
          },
          lora,
        );
      }
      const h = rms(x, this.w('model.norm.weight'), eps); // [B, d]
      return { logits: tf.matMul(h, this.w(this.config.tieWordEmbeddings ? EMBED : 'lm_head.weight')) as tf.Tensor2D, cache: next }; // [B, V]
    });
  }

  /** Frees the derived constants (the model's weights are not the decoder's). */
  dispose(): void {
    for (const c of this.constants.values()) c.value.dispose();
    this.constants.clear();
  }

  /**
   * One decoder layer on the rows x [B, d] (model.ts `block`, inference): `attend` maps the
   * scaled, RoPE'd queries [B, nH, hd] and the RoPE'd keys and values [B, nKV, hd] / [B, nKV*hd]
   * to the heads' output [B, nH*hd].
   */
  private layer(
    l: number,
    x: tf.Tensor2D,
    rope: { cos: tf.Tensor3D; sin: tf.Tensor3D },
    eps: tf.Scalar,
    attend: (q: tf.Tensor3D, k: tf.Tensor3D, v: tf.Tensor2D) => tf.Tensor2D,
    lora: ReadonlyMap<string, DecodeLora> | null,
  ): tf.Tensor2D {
    const { numHeads: H, numKvHeads: nKv, headDim: hd } = this.config;
    const B = x.shape[0];
    const pre = `model.layers.${l}.`;
    const h = rms(x, this.w(`${pre}input_layernorm.weight`), eps); // [B, d]
    const q = this.linear(h, `${pre}self_attn.q_proj`, lora); // [B, nH*hd]
    const k = this.linear(h, `${pre}self_attn.k_proj`, lora); // [B, nKV*hd]
    const v = this.linear(h, `${pre}self_attn.v_proj`, lora); // [B, nKV*hd]
    let qk = tf.reshape(tf.concat([q, k], 1), [B, H + nKv, hd]) as tf.Tensor3D; // [B, nH+nKV, hd]: query heads, then key heads
    if (this.config.qkNorm) qk = rms(qk, this.qkNormWeight(l), eps); // per-head q_norm / k_norm
    const rotated = tf.reshape(tf.matMul(tf.reshape(qk, [B * (H + nKv), hd]) as tf.Tensor2D, this.rot), [B, H + nKv, hd]); // rotate_half
    qk = tf.add(tf.mul(qk, rope.cos), tf.mul(rotated, rope.sin)) as tf.Tensor3D; // [B, nH+nKV, hd]; queries scaled by head_dim^-0.5
    const qs = tf.slice(qk, [0, 0, 0], [B, H, hd]); // [B, nH, hd]
    const kr = tf.slice(qk, [0, H, 0], [B, nKv, hd]); // [B, nKV, hd]
    x = tf.add(x, this.linear(attend(qs, kr, v), `${pre}self_attn.o_proj`, lora)); // [B, d]
    const h2 = rms(x, this.w(`${pre}post_attention_layernorm.weight`), eps); // [B, d]
    const gate = this.linear(h2, `${pre}mlp.gate_proj`, lora); // [B, I]
    const up = this.linear(h2, `${pre}mlp.up_proj`, lora); // [B, I]
    const act = tf.mul(tf.mul(gate, tf.sigmoid(gate)), up) as tf.Tensor2D; // silu(gate) * up
    return tf.add(x, this.linear(act, `${pre}mlp.down_proj`, lora)); // [B, d]
  }

  /** x @ W (+ scale (x A^T) B^T with an adapter) (+ bias): model.ts `proj` without a tape. */
  private linear(x: tf.Tensor2D, module: string, lora: ReadonlyMap<string, DecodeLora> | null): tf.Tensor2D {
    const name = `${module}.weight`;
    let y: tf.Tensor2D = tf.matMul(x, this.w<tf.Rank.R2>(name)); // [B, out]
    const ad = lora?.get(name);
    if (ad) y = tf.add(y, tf.mul(tf.matMul(tf.matMul(x, ad.a as tf.Tensor2D), ad.b as tf.Tensor2D), ad.scale)) as tf.Tensor2D; // + scale (x A^T) B^T
    const bias = this.params.get(`${module}.bias`);
    return bias ? (tf.add(y, bias) as tf.Tensor2D) : y; // [B, out]
  }

  /** Token embeddings [B, d]: rows of an untied table, or the tied [d, V] table by this backend's lookup. */
  private embed(ids: tf.Tensor1D): tf.Tensor2D {
    const table = this.w<tf.Rank.R2>(EMBED);
    if (!this.config.tieWordEmbeddings) return tf.gather(table, ids) as tf.Tensor2D; // [B, d]
    const lookup = this.tiedLookup ?? lookupFor(tf.getBackend());
    if (lookup === 'columns') return TIED_LOOKUPS.columns(ids, table);
    return TIED_LOOKUPS.rows(ids, this.embedRows());
  }

  /** The tied table [d, V] as a row-major copy [V, d] (the `rows` lookup). */
  private embedRows(): tf.Tensor2D {
    const table = this.w<tf.Rank.R2>(EMBED);
    return this.derived('embed_rows', [table], () => tf.transpose(table)) as tf.Tensor2D; // [V, d]
  }

  /** The RMSNorm epsilon as one kept scalar. */
  private epsilon(): tf.Scalar {
    return this.derived('eps', [], () => tf.scalar(this.config.rmsNormEps)) as tf.Scalar;
  }

  /** q_norm's weight for the nH query heads, then k_norm's for the nKV key heads: [nH+nKV, hd]. */
  private qkNormWeight(l: number): tf.Tensor2D {
    const { numHeads: H, numKvHeads: nKv, headDim: hd } = this.config;
    const qn = this.w(`model.layers.${l}.self_attn.q_norm.weight`);
    const kn = this.w(`model.layers.${l}.self_attn.k_norm.weight`);
    return this.derived(`qk_norm.${l}`, [qn, kn], () =>
      tf.concat([tf.tile(tf.reshape(qn, [1, hd]), [H, 1]), tf.tile(tf.reshape(kn, [1, hd]), [nKv, 1])], 0),
    ) as tf.Tensor2D;
  }

  /**
   * cos and sin [B, nH+nKV, hd] of a step's positions: the query heads' rows times head_dim^-0.5
   * (float32 products, as model.ts's cosQ / sinQ), the key heads' rows plain.
   */
  private stepRope(positions: readonly number[]): { cos: Float32Array; sin: Float32Array } {
    const { numHeads: H, numKvHeads: nKv, headDim: hd } = this.config;
    const B = positions.length;
    const base = ropeTables(positions, this.rope.invFreq, this.rope.attentionScale); // [B, hd] each
    const s = 1 / Math.sqrt(hd);
    const expand = (t: Float32Array) => {
      const out = new Float32Array(B * (H + nKv) * hd);
      for (let b = 0; b < B; b++) {
        const row = t.subarray(b * hd, (b + 1) * hd);
        for (let j = 0; j < H + nKv; j++) {
          const o = (b * (H + nKv) + j) * hd;
          if (j < H) for (let i = 0; i < hd; i++) out[o + i] = row[i] * s;
          else out.set(row, o);
        }
      }
      return out;
    };
    return { cos: expand(base.cos), sin: expand(base.sin) };
  }

  /**
   * A tensor derived from model weights (or a constant: no sources), built once and kept across
   * steps; rebuilt when a source was assigned since (a tfjs Variable gets a new dataId on each
   * assign, e.g. an optimizer step under full fine-tuning). Kept out of the caller's tf.tidy.
   */
  private derived(key: string, sources: tf.Tensor[], build: () => tf.Tensor): tf.Tensor {
    const hit = this.constants.get(key);
    if (hit && hit.sources.length === sources.length && hit.sources.every((s, i) => s === sources[i].dataId)) return hit.value;
    hit?.value.dispose();
    const value = tf.keep(tf.tidy(build));
    this.constants.set(key, { sources: sources.map((s) => s.dataId), value });
    return value;
  }

  private w<R extends tf.Rank>(name: string): tf.Tensor<R> {
    const v = this.params.get(name);
    if (!v) throw new Error(`HfModel: no weight "${name}"`);
    return v as unknown as tf.Tensor<R>;
  }
}

/** x * rsqrt(mean(x^2) + eps) * w over the last axis (../layers.ts rmsNormValue with a kept eps). */
function rms<T extends tf.Tensor>(x: T, w: tf.Tensor, eps: tf.Scalar): T {
  return tf.mul(tf.mul(x, tf.rsqrt(tf.add(tf.mean(tf.mul(x, x), -1, true), eps))), w) as T;
}

/**
 * Attention of one new query per row against a layer's cache chunks: qs [B, nH, hd] (scaled),
 * chunks [B*nKV, t_i, hd] -> [B, nH*hd]. The g = nH / nKV query heads of a KV head are the rows
 * of one small product (GQA without repeating keys); bias [B, 1, 1, t] masks pad keys.
 */
function attendCache(qs: tf.Tensor3D, kc: tf.Tensor3D[], vc: tf.Tensor3D[], bias: tf.Tensor4D, B: number, H: number, nKv: number): tf.Tensor2D {
  const hd = qs.shape[2];
  const g = H / nKv;
  const t = bias.shape[3];
  const qg = tf.reshape(qs, [B * nKv, g, hd]) as tf.Tensor3D; // [B*nKV, g, hd]
  const parts = kc.map((c) => tf.matMul(qg, c, false, true)); // [B*nKV, g, t_i]
  const scores = parts.length === 1 ? parts[0] : tf.concat(parts, 2); // [B*nKV, g, t]: small next to the keys
  const att = tf.reshape(tf.softmax(tf.add(tf.reshape(scores, [B, nKv, g, t]), bias), -1), [B * nKv, g, t]) as tf.Tensor3D; // [B*nKV, g, t]
  let off = 0;
  const ys = vc.map((c) => {
    const n = c.shape[1];
    const a = vc.length === 1 ? att : (tf.slice(att, [0, 0, off], [B * nKv, g, n]) as tf.Tensor3D); // [B*nKV, g, t_i]
    off += n;
    return tf.matMul(a, c); // [B*nKV, g, hd]
  });
  const y = ys.length === 1 ? ys[0] : tf.addN(ys); // [B*nKV, g, hd]
  return tf.reshape(y, [B, H * hd]) as tf.Tensor2D; // [B, nH*hd]
}

/**
 * The cache of the batch rows `keep` only (indices into the batch, ascending): each chunk
 * [B*nKV, t_i, hd] -> [A*nKV, t_i, hd], a copy (the caller disposes the old cache). The sampler
 * drops rows that stopped, so later steps spend nothing on them.
 */
export function selectCacheRows(cache: HfKvCache, keep: readonly number[], nKv: number): HfKvCache {
  return tf.tidy(() => {
    const idx = tf.tensor1d(
      keep.flatMap((r) => Array.from({ length: nKv }, (_, j) => r * nKv + j)),
      'int32',
    ); // [A*nKV]
    const pick = (layers: tf.Tensor3D[][]) => layers.map((chunks) => chunks.map((c) => tf.gather(c, idx) as tf.Tensor3D));
    return { k: pick(cache.k), v: pick(cache.v) };
  });
}

/**
 * A layer's cache chunks with one more position: the last chunk grown by concatenation while it
 * holds fewer than `kvChunk` positions, else a new chunk. Earlier chunks are aliased (a reshape
 * to the same shape shares the data, no copy), so the caller may dispose the old cache.
 */
function appendToCache(chunks: tf.Tensor3D[], step: tf.Tensor3D, kvChunk: number): tf.Tensor3D[] {
  const last = chunks[chunks.length - 1];
  const alias = (c: tf.Tensor3D) => tf.reshape(c, c.shape) as tf.Tensor3D;
  if (last.shape[1] >= kvChunk) return [...chunks.map(alias), step];
  return [...chunks.slice(0, -1).map(alias), tf.concat([last, step], 1) as tf.Tensor3D]; // [B*nKV, t_last + 1, hd]
}
