/**
 * The token picker (src/core/models/tokenPick.ts) pinned on hand-worked values: log-probs whose
 * weights are powers of two, fixed uniform draws, and the id each draw must land on; greedy,
 * top-k, top-p, padded vocabulary rows; then the pre-sort filter checked exact against a full sort.
 */
import { describe, expect, it } from 'vitest';
import { pickToken } from '../../../src/core/models/tokenPick';
import { mulberry32 } from '../../../src/core/models/random';

const LN2 = Math.log(2);
/** Weights 1, 1/2, 1/4, 1/8 at temperature 1 (total 1.875). */
const HALVING = [0, -LN2, -2 * LN2, -3 * LN2];
/** The same weights shuffled: id 0 -> 1/4, id 1 -> 1, id 2 -> 1/8, id 3 -> 1/2. */
const SHUFFLED = [-2 * LN2, 0, -3 * LN2, -LN2];

/** A stream that returns the given draws, then fails (so a test also pins how many draws are used). */
function draws(...us: number[]) {
  return () => {
    const u = us.shift();
    if (u === undefined) throw new Error('draws: more draws taken than given');
    return u;
  };
}

/** The id each draw picks, one draw per call. */
function pickAll(logp: number[], t: number, k: number, p: number, us: number[], validVocab?: number) {
  const rand = draws(...us);
  return us.map(() => pickToken(logp, t, k, p, rand, validVocab));
}

describe('pickToken: hand-worked draws', () => {
  it('temperature 1 walks the ids in order: cumulative weights 1, 1.5, 1.75, 1.875', () => {
    // u x 1.875 against the cumulative weights: 0.5 -> 0.94 (id 0), 0.7 -> 1.31 (id 1), 0.9 -> 1.69 (id 2), 0.95 -> 1.78 (id 3)
    expect(pickAll(HALVING, 1, 0, 1, [0.5, 0.7, 0.9, 0.95])).toEqual([0, 1, 2, 3]);
  });

  it('temperature 0.5 squares the weights (1, 1/4, 1/16, 1/64; total 1.328125)', () => {
    // 0.7 -> 0.93 (id 0), 0.9 -> 1.195 (id 1), 0.96 -> 1.275 (id 2), 0.995 -> 1.3215 (id 3)
    expect(pickAll(HALVING, 0.5, 0, 1, [0.7, 0.9, 0.96, 0.995])).toEqual([0, 1, 2, 3]);
    // At temperature 1 the same draws land lower in the order: 0.7 -> id 1, 0.96 -> id 3.
    expect(pickAll(HALVING, 1, 0, 1, [0.7, 0.96])).toEqual([1, 3]);
  });

  it('temperature 2 flattens the weights (1, 0.707, 0.5, 0.354; total 2.561)', () => {
    // 0.3 -> 0.77 (id 0), 0.5 -> 1.28 (id 1), 0.8 -> 2.05 (id 2), 0.9 -> 2.30 (id 3)
    expect(pickAll(HALVING, 2, 0, 1, [0.3, 0.5, 0.8, 0.9])).toEqual([0, 1, 2, 3]);
  });

  it('without a cut the draw walks id order, not probability order', () => {
    // Weights in id order 1/4, 1, 1/8, 1/2: cumulative 0.25, 1.25, 1.375, 1.875.
    expect(pickAll(SHUFFLED, 1, 0, 1, [0.1, 0.5, 0.7, 0.9])).toEqual([0, 1, 2, 3]);
  });

  it('top-p keeps the most probable ids until their mass reaches p, then draws among them by probability', () => {
    // p = 0.75: target 1.406; kept id 1 (1), then id 3 (1.5 >= target). Draws over [1, 3], total 1.5.
    expect(pickAll(SHUFFLED, 1, 0, 0.75, [0.6, 0.7, 0.999])).toEqual([1, 3, 3]);
    // p = 0.5: target 0.9375, id 1 alone reaches it.
    expect(pickAll(SHUFFLED, 1, 0, 0.5, [0, 0.5, 0.999])).toEqual([1, 1, 1]);
  });

  it('top-k keeps the k most probable ids, renormalised', () => {
    // k = 2: ids 1 and 3, total 1.5; 0.6 -> 0.9 (id 1), 0.7 -> 1.05 (id 3).
    expect(pickAll(SHUFFLED, 1, 2, 1, [0.6, 0.7, 0.999])).toEqual([1, 3, 3]);
    // k = 1 is greedy whatever the draw.
    expect(pickAll(SHUFFLED, 1, 1, 1, [0, 0.999])).toEqual([1, 1]);
  });

  it('top-k then top-p: the nucleus is taken within the k kept ids', () => {
    // k = 3: ids 1, 3, 0, total 1.75. p = 0.9 (target 1.575) keeps all three: 0.99 -> 1.7325 lands on id 0.
    expect(pickAll(SHUFFLED, 1, 3, 0.9, [0.99])).toEqual([0]);
    // p = 0.8 (target 1.4) keeps ids 1 and 3 only: the same draw lands on id 3.
    expect(pickAll(SHUFFLED, 1, 3, 0.8, [0.99])).toEqual([3]);
  });

  it('temperature 0 is the argmax (first of ties) and takes no draw', () => {
    expect(pickAll([0, 3, 1, 2], 0, 0, 1, [])).toEqual([]);
    expect(pickToken([0, 3, 1, 3], 0, 0, 1, draws())).toBe(1);
    expect(pickToken(SHUFFLED, 0, 2, 0.5, draws())).toBe(1);
  });

  it('padded vocabulary rows (ids >= validVocab) are never picked, however large their logits', () => {
    const padded = [0, -LN2, 50, 60]; // two real ids, two padded head rows
    expect(pickToken(padded, 0, 0, 1, draws(), 2)).toBe(0);
    // Over the two real ids (weights 1, 1/2): 0.999 -> 1.4985 lands on id 1.
    expect(pickAll(padded, 1, 0, 1, [0.5, 0.999], 2)).toEqual([0, 1]);
    expect(pickAll(padded, 1, 3, 0.99, [0.999], 2)).toEqual([1]);
    const rand = mulberry32(5);
    for (let i = 0; i < 2000; i++) expect(pickToken(padded, 1.5, 0, 1, rand, 2)).toBeLessThan(2);
    // Without the limit the same logits pick a padded row: the check is not vacuous.
    expect(pickToken(padded, 0, 0, 1, draws())).toBe(3);
  });

  it('refuses an empty choice', () => {
    expect(() => pickToken([], 1, 0, 1, draws(0.5))).toThrow(/tokenPick: validVocab 0/);
  });
});

describe('pickToken: the pre-sort filter is exact', () => {
  /** The obvious version: every id sorted by weight (ties by id), keep k, keep the nucleus, draw. */
  const fullSort = (lp: Float32Array, t: number, k: number, p: number, rand: () => number) => {
    const V = lp.length;
    let max = -Infinity;
    for (let i = 0; i < V; i++) max = Math.max(max, lp[i] / t);
    const w = Array.from(lp, (x) => Math.exp(x / t - max));
    let total = 0;
    for (let i = 0; i < V; i++) total += w[i];
    let order = Array.from(w.keys());
    if (k > 0 || p < 1) order.sort((a, b) => w[b] - w[a] || a - b);
    if (k > 0 && k < V) {
      order = order.slice(0, k);
      total = 0;
      for (const i of order) total += w[i];
    }
    if (p < 1) {
      let kept = 0;
      let n = 0;
      while (n < order.length && kept < p * total) kept += w[order[n++]];
      order = order.slice(0, Math.max(1, n));
      total = kept;
    }
    let u = rand() * total;
    for (const i of order) if ((u -= w[i]) < 0) return i;
    return order[order.length - 1];
  };

  it('long-tailed logits: the same ids as a full sort, draw for draw', () => {
    const r = mulberry32(3);
    const lp = Float32Array.from({ length: 5000 }, () => -60 * r() * r()); // a long tail far below the head
    for (const [t, k, p] of [
      [1, 0, 0.9],
      [0.7, 20, 1],
      [1.3, 50, 0.95],
      [1, 0, 1 - 2 ** -53],
    ] as const) {
      const [ra, rb] = [mulberry32(9), mulberry32(9)];
      for (let i = 0; i < 100; i++) expect(pickToken(lp, t, k, p, ra)).toBe(fullSort(lp, t, k, p, rb));
    }
  });

  it('a top-k or nucleus that reaches into the filtered tail sorts it in', () => {
    // Three ids at weight 1, the rest just under the 1e-15 filter (e^-34.6 = 9.4e-16 and a little less).
    const lp = Float32Array.from({ length: 2000 }, (_, i) => (i % 700 === 3 ? 0 : -34.6 - (i % 7) * 0.001));
    const cases = [
      [1, 10, 1],
      [1, 0, 1 - 2 ** -53],
      [1, 2000, 1 - 2 ** -53],
    ] as const;
    for (const [t, k, p] of cases) {
      const [ra, rb] = [mulberry32(11), mulberry32(11)];
      for (let i = 0; i < 200; i++) expect(pickToken(lp, t, k, p, ra)).toBe(fullSort(lp, t, k, p, rb));
      // A draw just under 1 walks past the three head ids (cumulative 3) into the tail.
      const high = () => 1 - 2 ** -52;
      const id = pickToken(lp, t, k, p, high);
      expect(lp[id]).toBeLessThan(-30);
      expect(id).toBe(fullSort(lp, t, k, p, high));
    }
  });
});
