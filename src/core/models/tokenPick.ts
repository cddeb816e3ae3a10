/**
 * Picks the next token from one row of log-probs on the host: the slow, obvious reference of the
 * samplers' token choice (devicePick.ts `TOKEN_PICKERS.host`, and the lab's sampler.ts
 * `sampleToken`); the samplers choose on the device by default (devicePick.ts), tested draw for
 * draw against this. Greedy (argmax, first of ties)
 * at temperature 0; else, in transformers' `generate` warper order: temperature, then top-k, then
 * top-p (nucleus: the smallest set of the most probable tokens whose mass reaches topP), then one
 * uniform draw walked over the kept weights. Ids >= validVocab (padded head rows beyond the
 * tokenizer's tokens) are never picked, as if they were not there.
 *
 * Float order (fixed, because seeded rollouts must replay bit for bit): weights
 * w_i = exp(logp_i / T - max_j(logp_j / T)) in float64, their total summed in id order; with top-k
 * the total is re-summed over the k kept ids, most probable first; the nucleus adds weights most
 * probable first (ties by id) until the kept mass reaches topP x total, and the draw walks id
 * order without a cut, probability order with one. Not here: the decode loop, the recorded
 * behaviour log-prob (sampler.ts explains why it is the un-tempered one).
 *
 * Speed: ids with w < 1e-15 are left out of the first sort (sorting a 152k vocabulary per row per
 * step costs tens of ms); they sort after every other id, so the cut is exact: they are sorted
 * and appended only when a top-k or a nucleus reaches past the others.
 * Tests: test/core/models/tokenPick.test.ts (hand-worked draws, the exactness of the pre-filter),
 * sampler.test.ts and hf/sampler.test.ts (frequencies), devicePick.test.ts (the device path against it).
 */
import type { Uniform } from './random';

/** Weights below this (relative to the most probable id's 1) are sorted only when needed. */
const SORT_FLOOR = 1e-15;

/** Scratch weights, reused across calls (one vocabulary-sized array, not one per row per step). */
let scratch = new Float64Array(0);

/**
 * One id in [0, validVocab) drawn from `logp` (log-probs or logits: only differences matter).
 * temperature >= 0 (0: greedy); topK 0 is off; topP in (0, 1], 1 is off; rand: the row's stream.
 */
export function pickToken(logp: ArrayLike<number>, temperature: number, topK: number, topP: number, rand: Uniform, validVocab: number = logp.length): number {
  const V = Math.min(validVocab, logp.length);
  if (!(V >= 1)) throw new Error(`tokenPick: validVocab ${validVocab} leaves no token to pick from ${logp.length} log-probs`);
  if (temperature === 0) {
    let best = 0;
    for (let i = 1; i < V; i++) if (logp[i] > logp[best]) best = i;
    return best;
  }
  let max = -Infinity;
  for (let i = 0; i < V; i++) max = Math.max(max, logp[i] / temperature);
  const w = scratch.length >= V ? scratch : (scratch = new Float64Array(V));
  let total = 0;
  for (let i = 0; i < V; i++) total += w[i] = Math.exp(logp[i] / temperature - max);
  const cutK = topK > 0 && topK < V;
  if (!cutK && topP >= 1) {
    // No cut: walk ids in order (the common case, once per row per step).
    let u = rand() * total;
    for (let i = 0; i < V; i++) {
      u -= w[i];
      if (u < 0) return i;
    }
    return V - 1; // rounding: u landed on the total
  }

  // Ids by descending weight, ties by id; the tail below SORT_FLOOR joins only when reached.
  const byWeight = (a: number, b: number) => w[b] - w[a] || a - b;
  let order: number[] = [];
  for (let i = 0; i < V; i++) if (w[i] >= SORT_FLOOR) order.push(i);
  order.sort(byWeight);
  let complete = order.length === V;
  const appendTail = () => {
    const tail: number[] = [];
    for (let i = 0; i < V; i++) if (w[i] < SORT_FLOOR) tail.push(i);
    order = order.concat(tail.sort(byWeight));
    complete = true;
  };

  if (cutK) {
    if (!complete && order.length < topK) appendTail();
    order = order.slice(0, topK);
    complete = true; // the nucleus is taken within the k kept ids
    total = 0;
    for (const i of order) total += w[i];
  }
  if (topP < 1) {
    const target = topP * total;
    let kept = 0;
    let k = 0;
    while (kept < target) {
      if (k === order.length) {
        if (complete) break;
        appendTail();
        continue;
      }
      kept += w[order[k++]];
    }
    order = order.slice(0, Math.max(1, k));
    total = kept;
  }
  let u = rand() * total;
  for (const i of order) {
    u -= w[i];
    if (u < 0) return i;
  }
  return order[order.length - 1]; // rounding: u landed on the total
}
