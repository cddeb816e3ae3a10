/**
 * Token choice for a whole decode step on the backend: from the step's logits [B, V] and one
 * uniform per row (drawn on the host from the row's seeded stream, as tokenPick.ts draws it),
 * the device computes the temperature, the top-k / top-p cut, the inverse-CDF draw and the
 * sampled token's behaviour log-prob (the UN-TEMPERED log-softmax over the whole head, as
 * ../sampler.ts records it); the host reads back 2 x B numbers instead of B x V (plus 2 x N x B
 * with N top alternatives per row, below). The two
 * samplers (../sampler.ts, hf/sampler.ts) choose through `TOKEN_PICKERS`: `device` (default) or
 * `host`, the slow, obvious reference (the whole log-softmax read back and walked by
 * tokenPick.ts `pickToken`), kept for tests and comparisons.
 *
 * The same draw as pickToken except where float32 rounding moves a boundary: pickToken walks
 * float64 weights exp(logp / T - max) in id order (no cut) or in probability order (a cut);
 * here the weights are the float32 softmax of z / T over the same ids in the same order, their
 * running sums float32 in two levels (blocks of ~sqrt(n), then within the block), and the draw
 * is the first id whose running sum exceeds u x total. The sums carry ~(sqrt(n) x 2) ulps of
 * error, so a draw differs only when u x total falls that close to a boundary (test: >= 99% of
 * draws identical; the lab sampler's tiny preset drew all 1,536 tokens of its bench identical).
 * Ids with zero weight are never drawn (u x total is kept strictly below the total), where
 * pickToken returns the last id when rounding lands u on the total.
 *
 * Without a cut (the rollouts' case): no sort. The weights are summed in blocks of ~sqrt(V) ids
 * (one pass over [B, V]), the block holding the draw is found on the block sums' running total
 * [B, V / bs], and only that block [B, bs] is gathered and walked: one read of the weights
 * instead of a running sum, a comparison and a count over all of them. With top-k: tf.topk(k)
 * (sorted, ties by lower id, as pickToken), then the running sum over the k kept weights; top-p
 * alone sorts the whole vocabulary (tf.topk with k = V), as pickToken's nucleus does.
 * Padded head rows (ids >= validVocab) are sliced off before the choice; the log-prob's
 * normaliser still runs over the whole head. Greedy (temperature 0) is argmax, first of ties.
 *
 * Top alternatives (`topLogprobs` N > 0, the external endpoint's `top_logprobs`): the N most
 * probable real ids of the same un-tempered log-softmax the sampled token's log-prob comes from
 * (z - lse, lse over the whole head; ids >= validVocab never listed), descending, ties by lower
 * id, read back in the same single read as the ids. Temperature, top-k and top-p do not change
 * the list (it describes the model, as the recorded log-prob does); the sampled id is in it only
 * when it is among the N.
 *
 * Not here: the decode loop, stop ids (the host checks the B ids it reads back).
 * Tests: test/core/models/devicePick.test.ts (device vs pickToken draw for draw, frequencies
 * against the exact probabilities, greedy, top-k, top-p, padded rows, top alternatives against the
 * host and a float64 loop, no leaks).
 */
import * as tf from '@tensorflow/tfjs';
import type { Uniform } from './random';
import { pickToken } from './tokenPick';

/** What a step's choice needs besides the logits. */
export interface PickSettings {
  /** >= 0; 0 is greedy (argmax) and takes no draw. */
  temperature: number;
  /** Keep the k most probable ids; 0 (or >= validVocab) is off. */
  topK: number;
  /** Nucleus mass in (0, 1]; 1 is off. */
  topP: number;
  /** Ids >= validVocab (padded head rows) are never picked. */
  validVocab: number;
  /** How many most probable alternatives to list per row (0 or absent: none; at most validVocab are listed). */
  topLogprobs?: number;
}

/** A row's most probable ids, descending by log-prob, ties by lower id. */
export interface TopAlternatives {
  ids: number[]; // [N]
  logp: number[]; // [N] nats, the same un-tempered log-softmax as RowPicks.logp
}

/** A step's choice: one id and its behaviour log-prob per row (and its top alternatives when asked). */
export interface RowPicks {
  ids: number[]; // [B]
  logp: number[]; // [B] nats, un-tempered log-softmax over the whole head
  /** One per row when PickSettings.topLogprobs > 0. */
  top?: TopAlternatives[]; // [B]
}

/**
 * Chooses one id per row from logits [B, V]. rands[r] is row r's stream; null marks a row that
 * is not running (no draw taken from anything; its id and log-prob are meaningless). Reads back
 * once. The caller owns `logits`.
 */
export type RowsPicker = (logits: tf.Tensor2D, rands: readonly (Uniform | null)[], s: PickSettings) => RowPicks;

/** Below this many ids a row's draw walks one running sum; above it, blocks (header). */
const FLAT_MAX = 4096;

/** 1 - 2^-23: keeps u x total strictly below the total in float32, so a zero weight is never drawn. */
const BELOW_ONE = 1 - 2 ** -23;

/**
 * log-softmax of logits [B, V] -> [B, V] nats, as tf.logSoftmax, through softmax: with
 * p = softmax(z), the largest p is exp(max z - lse), so lse = max z - log(max p), B logs instead
 * of B x V. On wasm softmax is one vectorised kernel while logSoftmax's Exp and Log are scalar
 * loops: [8, 8192] with its read-back 0.41 vs 0.76 ms (native: 0.41 vs 0.50), equal within
 * float32 rounding (~1e-5 at log-probs near -40, measured). The host picker's input.
 */
export function logSoftmaxRows(logits: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => {
    const lse = tf.sub(tf.max(logits, -1, true), tf.log(tf.max(tf.softmax(logits, -1), -1, true))); // [B, 1] nats
    return tf.sub(logits, lse) as tf.Tensor2D; // [B, V]
  });
}

/** Block size for a draw over n ids: a divisor of n near sqrt(n) (no padding), else 256 with zero padding. */
export function drawBlock(n: number): { bs: number; nb: number; padded: number } {
  const root = Math.sqrt(n);
  let best = 0;
  for (let d = Math.max(16, Math.floor(root / 8)); d <= Math.min(8192, Math.ceil(root * 8)); d++) {
    if (n % d === 0 && (best === 0 || Math.abs(Math.log(d / root)) < Math.abs(Math.log(best / root)))) best = d;
  }
  const bs = best || 256;
  const nb = Math.ceil(n / bs);
  return { bs, nb, padded: nb * bs };
}

/** An int32 scalar (a bare number would make the result float32). */
function int(n: number): tf.Scalar {
  return tf.scalar(n, 'int32');
}

/** Flat offsets r * stride of B rows: [B, 1] int32 (for gathers from a flattened [B, stride]). */
function rowOffsets(B: number, stride: number): tf.Tensor2D {
  return tf.mul(tf.range(0, B, 1, 'int32'), int(stride)).reshape([B, 1]) as tf.Tensor2D; // [B, 1]
}

/** x[r, idx[r]] for x [B, n] and idx [B, 1] int32 -> [B, 1]. */
function pickCols(x: tf.Tensor2D, idx: tf.Tensor2D): tf.Tensor2D {
  const [B, n] = x.shape;
  const flat = tf.reshape<tf.Rank.R1>(x, [B * n]); // [B*n]
  return tf.gather(flat as tf.Tensor, tf.add(idx, rowOffsets(B, n))) as tf.Tensor2D; // [B, 1]
}

/** How many entries of each row of c [B, n] are <= (or <) t [B, 1]: [B, 1] int32. */
function countBelow(c: tf.Tensor2D, t: tf.Tensor2D, strict: boolean): tf.Tensor2D {
  const hit = strict ? tf.less(c, t) : tf.lessEqual(c, t);
  return tf.sum(tf.cast(hit, 'int32'), 1, true) as tf.Tensor2D; // [B, 1]
}

/**
 * The first index of each row whose running sum of w [B, n] exceeds the target: index =
 * #{i : c_i <= target}, with target = min(u x total, total x BELOW_ONE) so the index lands on a
 * positive weight. Returns [B, 1] int32.
 */
function drawFlat(w: tf.Tensor2D, u: tf.Tensor2D): tf.Tensor2D {
  const n = w.shape[1];
  const c = tf.cumsum(w, 1) as tf.Tensor2D; // [B, n] running sums in id (or kept) order
  const total = tf.slice(c, [0, n - 1], [-1, 1]); // [B, 1]
  const target = tf.minimum(tf.mul(u, total), tf.mul(total, BELOW_ONE)) as tf.Tensor2D; // [B, 1]
  return tf.minimum(countBelow(c, target, false), int(n - 1)) as tf.Tensor2D; // [B, 1]
}

/** a x b as an unevaluated float32 pair hi + lo (Dekker's product: float32 ops only, no fused multiply-add). */
function twoProduct(a: tf.Tensor, b: tf.Tensor): { hi: tf.Tensor; lo: tf.Tensor } {
  const split = (x: tf.Tensor) => {
    const c = tf.mul(x, 4097); // 2^12 + 1 splits a 24-bit mantissa in two halves
    const xh = tf.sub(c, tf.sub(c, x));
    return [xh, tf.sub(x, xh)];
  };
  const [ah, al] = split(a);
  const [bh, bl] = split(b);
  const hi = tf.mul(a, b);
  const lo = tf.add(tf.add(tf.add(tf.sub(tf.mul(ah, bh), hi), tf.mul(ah, bl)), tf.mul(al, bh)), tf.mul(al, bl));
  return { hi, lo };
}

/**
 * drawFlat for a long row without a running sum over all of it: block sums [B, nb] (one read of
 * w), the block j that holds u x total from their running sum, then the walk inside block j
 * only. The block prefix and u x total are carried as float32 pairs hi + lo (the prefix's
 * rounding error per step is (before - after) + sum, exact by Sterbenz's lemma once the prefix
 * outweighs a block; u comes as fround(u) + the rest): in plain float32 both resolve a position
 * only to ~6e-8 of the total, coarser than a token's weight in a flat 152k vocabulary (~1e-5 of
 * it), which moved ~1.5% of such draws; with the pairs the draw is where float64 puts it, up to
 * the float32 weights themselves. Returns the id [B, 1] int32 and the total weight [B, 1].
 */
function drawBlocked(w: tf.Tensor2D, u: tf.Tensor2D, uLo: tf.Tensor2D): { id: tf.Tensor2D; total: tf.Tensor2D } {
  const [B, n] = w.shape;
  const { bs, nb, padded } = drawBlock(n);
  const wp =
    padded > n
      ? tf.pad(w, [
          [0, 0],
          [0, padded - n],
        ])
      : w; // [B, nb*bs]: zero weights never drawn
  const blocks = tf.reshape(wp, [B * nb, bs]) as tf.Tensor2D; // [B*nb, bs]
  const sums = tf.reshape(tf.sum(blocks, 1), [B, nb]) as tf.Tensor2D; // [B, nb]
  const hi = tf.cumsum(sums, 1) as tf.Tensor2D; // [B, nb] prefix through block k, float32
  const hiBefore = tf.cumsum(sums, 1, true) as tf.Tensor2D; // [B, nb] prefix before block k
  const err = tf.add(tf.sub(hiBefore, hi), sums); // [B, nb] what each step's rounding lost
  const lo = tf.cumsum(err, 1) as tf.Tensor2D; // [B, nb]: prefix = hi + lo
  const loBefore = tf.cumsum(err, 1, true) as tf.Tensor2D; // [B, nb]
  const total = tf.slice(hi, [0, nb - 1], [-1, 1]) as tf.Tensor2D; // [B, 1]
  const totalLo = tf.slice(lo, [0, nb - 1], [-1, 1]);
  const p = twoProduct(u, total); // target = u x total as hi + lo
  const tHi = p.hi; // [B, 1]
  const tLo = tf.add(p.lo, tf.add(tf.mul(u, totalLo), tf.mul(uLo, total))); // [B, 1]
  // Blocks whose prefix is <= the target: hi + lo <= tHi + tLo, compared as (hi - tHi) <= (tLo - lo).
  const atOrBelow = tf.lessEqual(tf.sub(hi, tHi), tf.sub(tLo, lo));
  const j = tf.minimum(tf.sum(tf.cast(atOrBelow, 'int32'), 1, true), int(nb - 1)) as tf.Tensor2D; // [B, 1] block of the draw
  const rowsJ = tf.add(j, rowOffsets(B, nb)); // [B, 1] rows of `blocks`
  const pick = (x: tf.Tensor2D) => tf.gather(tf.reshape<tf.Rank.R1>(x, [B * nb]) as tf.Tensor, rowsJ) as tf.Tensor2D; // [B, 1]
  const rest = tf.add(tf.sub(tHi, pick(hiBefore)), tf.sub(tLo, pick(loBefore))); // [B, 1] target inside block j
  const inBlock = tf.reshape(tf.gather(blocks, rowsJ), [B, bs]) as tf.Tensor2D; // [B, bs]
  const c = tf.cumsum(inBlock, 1) as tf.Tensor2D; // [B, bs]
  const last = tf.slice(c, [0, bs - 1], [-1, 1]);
  const inside = tf.maximum(tf.minimum(rest, tf.mul(last, BELOW_ONE)), 0) as tf.Tensor2D; // [B, 1]
  const i = tf.minimum(countBelow(c, inside, false), int(bs - 1));
  return { id: tf.add(tf.mul(j, int(bs)), i) as tf.Tensor2D, total }; // [B, 1]
}

/**
 * Running sums of each row of w [B, n] -> [B, n], in two levels for long rows (sums inside
 * blocks of ~sqrt(n), plus the blocks before): float32 error ~(bs + nb) ulps instead of n, so a
 * nucleus boundary over thousands of kept ids moves as rarely as the blocked draw's.
 */
function runningSum(w: tf.Tensor2D): tf.Tensor2D {
  const [B, n] = w.shape;
  if (n <= 256) return tf.cumsum(w, 1) as tf.Tensor2D;
  const { bs, nb, padded } = drawBlock(n);
  const wp =
    padded > n
      ? tf.pad(w, [
          [0, 0],
          [0, padded - n],
        ])
      : w; // [B, nb*bs]
  const inside = tf.cumsum(tf.reshape(wp, [B * nb, bs]), 1) as tf.Tensor2D; // [B*nb, bs]
  const sums = tf.reshape(tf.slice(inside, [0, bs - 1], [-1, 1]), [B, nb]); // [B, nb]
  const before = tf.reshape(tf.cumsum(sums, 1, true), [B * nb, 1]); // [B*nb, 1] exclusive: no rounding of its own
  const c = tf.reshape(tf.add(inside, before), [B, padded]) as tf.Tensor2D; // [B, nb*bs]
  return padded > n ? (tf.slice(c, [0, 0], [B, n]) as tf.Tensor2D) : c; // [B, n]
}

/** How many alternatives a row lists: topLogprobs capped by the real ids (0 when off). */
export function topCount(s: PickSettings, V: number): number {
  const n = s.topLogprobs ?? 0;
  if (!(Number.isInteger(n) && n >= 0)) throw new Error(`devicePick: topLogprobs ${n} must be an integer >= 0`);
  return Math.min(n, s.validVocab, V);
}

/**
 * The device's choice for logits [B, V] and uniforms u [B] (ignored at temperature 0): [2 + 2N, B]
 * float32, row 0 the ids (exact in float32 below 2^24), row 1 their behaviour log-probs, then with
 * N = topCount(s, V) > 0 the rows 2..2+N the ids of each row's N most probable real tokens
 * (descending) and the rows 2+N..2+2N their log-probs. Call inside tf.tidy (every intermediate
 * is freed there).
 *
 * Weights are softmax probabilities (one fused kernel on every backend; wasm's Exp alone is a
 * scalar loop). At temperature 1 over the whole head without a cut the log-prob is log p[id] of
 * that same softmax (the id was drawn from it, so p[id] is far from underflow); otherwise
 * z[id] - lse from a softmax of the raw logits, since there p[id] of a real id can underflow
 * float32 (greedy while padded head rows dominate: hf/sampler.test.ts).
 */
export function pickOnDevice(logits: tf.Tensor2D, u: tf.Tensor1D, s: PickSettings, uLo?: tf.Tensor1D): tf.Tensor2D {
  const [B, V] = logits.shape;
  const Vc = Math.min(s.validVocab, V);
  if (!(Vc >= 1)) throw new Error(`devicePick: validVocab ${s.validVocab} leaves no token to pick from ${V} logits`);
  const x = Vc < V ? (tf.slice(logits, [0, 0], [B, Vc]) as tf.Tensor2D) : logits; // [B, Vc] real ids
  const u2 = tf.reshape(u, [B, 1]) as tf.Tensor2D;
  const u2Lo = (uLo ? tf.reshape(uLo, [B, 1]) : tf.zeros([B, 1])) as tf.Tensor2D; // u - fround(u)
  const tempered = (z: tf.Tensor2D) => (s.temperature === 1 ? z : (tf.div(z, s.temperature) as tf.Tensor2D));
  let id: tf.Tensor2D; // [B, 1] int32
  let probs: tf.Tensor2D | null = null; // [B, V]: the un-tempered softmax over the whole head, when already made
  const cutK = s.topK > 0 && s.topK < Vc;
  if (s.temperature === 0) {
    id = tf.reshape(tf.argMax(x, 1), [B, 1]); // first of ties
  } else if (!cutK && s.topP >= 1) {
    const w = tf.softmax(tempered(x), 1) as tf.Tensor2D; // [B, Vc] tempered probabilities, id order
    if (s.temperature === 1 && Vc === V) probs = w;
    id = Vc <= FLAT_MAX ? drawFlat(w, u2) : drawBlocked(w, u2, u2Lo).id;
  } else {
    const n = cutK ? s.topK : Vc; // top-p alone: the full sort
    const { values, indices } = tf.topk(x, n, true); // [B, n] descending, ties by lower id
    const w = tf.softmax(tempered(values as tf.Tensor2D), 1) as tf.Tensor2D; // [B, n] most probable first
    const c = runningSum(w); // [B, n]
    let kept = tf.slice(c, [0, n - 1], [-1, 1]) as tf.Tensor2D; // [B, 1] mass of the kept ids
    let k: tf.Tensor = int(n); // [B, 1] ids kept (a scalar without a nucleus)
    if (s.topP < 1) {
      // The nucleus: the fewest most-probable ids whose mass reaches topP x total (pickToken's loop).
      k = tf.minimum(tf.add(countBelow(c, tf.mul(kept, s.topP), true), int(1)), int(n));
      kept = pickCols(c, tf.sub(k, int(1)) as tf.Tensor2D);
    }
    const target = tf.minimum(tf.mul(u2, kept), tf.mul(kept, BELOW_ONE)) as tf.Tensor2D; // [B, 1]
    const pos = tf.minimum(countBelow(c, target, false), tf.sub(k, int(1))) as tf.Tensor2D; // [B, 1]
    id = pickCols(indices as tf.Tensor2D, pos);
  }
  const N = topCount(s, V);
  let logp: tf.Tensor; // [B, 1] nats
  const rowsOut: tf.Tensor[] = [tf.reshape(tf.cast(id, 'float32'), [1, B])];
  if (probs && N === 0) {
    logp = tf.log(pickCols(probs, id)); // drawn from probs itself: p[id] > 0, and below 1e-38 it is never drawn
    rowsOut.push(tf.reshape(logp, [1, B]));
  } else {
    // z[id] - lse with lse = max z - log(max p) (logSoftmaxRows): max p >= 1/V never underflows, a greedy p[id] might.
    const lse = tf.sub(tf.max(logits, 1, true), tf.log(tf.max(tf.softmax(logits, 1), 1, true))); // [B, 1] nats
    logp = tf.sub(pickCols(logits, id), lse);
    rowsOut.push(tf.reshape(logp, [1, B]));
    if (N > 0) {
      // The same z - lse as the sampled token's (so its entry equals its log-prob bit for bit), real ids only.
      const { values, indices } = tf.topk(tf.sub(x, lse), N, true); // [B, N] descending, ties by lower id
      rowsOut.push(tf.transpose(tf.cast(indices, 'float32')), tf.transpose(values)); // [N, B] each
    }
  }
  return tf.concat(rowsOut, 0) as tf.Tensor2D; // [2 + 2N, B]
}

/**
 * One uniform per row for the device pick (none at temperature 0; 0 for a row that is not
 * running): u [B] as float32 and the float64 draw's remaining bits uLo = u - fround(u).
 */
export function rowUniforms(B: number, rands: readonly (Uniform | null)[], s: PickSettings): { u: Float32Array; uLo: Float32Array } {
  const u = new Float32Array(B);
  const uLo = new Float32Array(B);
  if (s.temperature > 0)
    rands.forEach((rand, r) => {
      const x = rand ? rand() : 0;
      u[r] = x;
      uLo[r] = x - u[r];
    });
  return { u, uLo };
}

/** Reads back pickOnDevice's [2 + 2N, B] output (once) into RowPicks, and disposes it. */
export function readPicks(out: tf.Tensor2D, N: number): RowPicks {
  const B = out.shape[1];
  const all = out.dataSync() as Float32Array; // waits for the device
  out.dispose();
  const picks: RowPicks = { ids: Array.from(all.subarray(0, B)), logp: Array.from(all.subarray(B, 2 * B)) };
  if (N > 0) {
    const col = (first: number, r: number) => Array.from({ length: N }, (_, j) => all[(first + j) * B + r]);
    picks.top = Array.from({ length: B }, (_, r) => ({ ids: col(2, r), logp: col(2 + N, r) }));
  }
  return picks;
}

/** Token pickers by name: the device path, and the host reference it is tested against. */
export const TOKEN_PICKERS = {
  /** One uniform per running row drawn here, everything else on the backend; reads back (2 + 2N) x B numbers. */
  device: (logits, rands, s) => {
    const { u, uLo } = rowUniforms(logits.shape[0], rands, s);
    return readPicks(
      tf.tidy(() => pickOnDevice(logits, tf.tensor1d(u), s, tf.tensor1d(uLo))),
      topCount(s, logits.shape[1]),
    );
  },
  /** The whole [B, V] log-softmax read back and walked by pickToken (the slow reference). */
  host: (logits, rands, s) => {
    const [B, V] = logits.shape;
    const lsm = logSoftmaxRows(logits); // [B, V] nats
    const all = lsm.dataSync() as Float32Array; // waits for the device
    lsm.dispose();
    const ids: number[] = [];
    const logp: number[] = [];
    for (let r = 0; r < B; r++) {
      const rand = rands[r];
      const lp = all.subarray(r * V, (r + 1) * V);
      const tok = rand ? pickToken(lp, s.temperature, s.topK, s.topP, rand, s.validVocab) : 0;
      ids.push(tok);
      logp.push(lp[tok]);
    }
    const N = topCount(s, V);
    if (N === 0) return { ids, logp };
    const top = Array.from({ length: B }, (_, r) => {
      const lp = all.subarray(r * V, (r + 1) * V);
      const order = Array.from({ length: Math.min(s.validVocab, V) }, (_, i) => i); // real ids only
      order.sort((a, b) => lp[b] - lp[a] || a - b); // descending, ties by lower id
      const kept = order.slice(0, N);
      return { ids: kept, logp: kept.map((i) => lp[i]) };
    });
    return { ids, logp, top };
  },
} satisfies Record<string, RowsPicker>;

export type TokenPickerName = keyof typeof TOKEN_PICKERS;
export const TOKEN_PICKER_NAMES = Object.keys(TOKEN_PICKERS) as TokenPickerName[];

/** The picker of that name; the error lists the known ones. */
export function tokenPicker(name: string): RowsPicker {
  if (!Object.hasOwn(TOKEN_PICKERS, name)) throw new Error(`unknown token picker "${name}"; known: ${TOKEN_PICKER_NAMES.join(', ')}`);
  return TOKEN_PICKERS[name as TokenPickerName];
}
