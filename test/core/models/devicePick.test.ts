/**
 * The device token picker (src/core/models/devicePick.ts) against the host reference
 * (tokenPick.ts `pickToken` over the read-back log-softmax): the same uniforms give the same ids
 * on >= 99% of draws (a float32 boundary move is the only allowed difference), draw frequencies
 * match probabilities worked out here in float64, greedy is identical, top-k and top-p cut what
 * they should, padded rows are never picked, the log-prob is the un-tempered log-softmax, and a
 * decode loop's worth of picks leaves no tensor behind.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { drawBlock, pickOnDevice, TOKEN_PICKERS, tokenPicker, type PickSettings } from '../../../src/core/models/devicePick';
import { mulberry32 } from '../../../src/core/models/random';

/** Random logits [B, V]: normal-ish with scale `s` (a long tail as real heads have). */
function randomLogits(B: number, V: number, seed: number, s = 3): Float32Array {
  const r = mulberry32(seed);
  return Float32Array.from({ length: B * V }, () => s * (r() + r() + r() - 1.5) * 2);
}

/** Both pickers on the same logits, each with its own copies of the same per-row streams. */
function bothPick(logits: Float32Array, B: number, V: number, s: PickSettings, seed: number) {
  const t = tf.tensor2d(logits, [B, V]);
  const streams = () => Array.from({ length: B }, (_, r) => mulberry32(seed * 1000 + r));
  const device = TOKEN_PICKERS.device(t, streams(), s);
  const host = TOKEN_PICKERS.host(t, streams(), s);
  t.dispose();
  return { device, host };
}

/** Share of equal ids over several steps of B rows (each step new logits and new draws). */
function agreement(B: number, V: number, steps: number, s: PickSettings): number {
  let same = 0;
  for (let step = 0; step < steps; step++) {
    const { device, host } = bothPick(randomLogits(B, V, 100 + step), B, V, s, step + 1);
    same += device.ids.filter((id, r) => id === host.ids[r]).length;
  }
  return same / (B * steps);
}

const PLAIN: PickSettings = { temperature: 1, topK: 0, topP: 1, validVocab: Infinity };

describe('device picks equal host picks draw for draw (up to float32 boundary moves)', () => {
  it('no cut, a long vocabulary (blocked draw) and a short one (one running sum)', () => {
    expect(drawBlock(20000).padded).toBe(20000); // 20000 has a divisor near its root: no padding
    expect(agreement(32, 20000, 8, PLAIN)).toBeGreaterThanOrEqual(0.99);
    expect(agreement(64, 50, 8, PLAIN)).toBeGreaterThanOrEqual(0.99);
  });

  it('the real vocabulary (151,936 ids) with flat logits: float32 running sums alone would move ~1% of draws', () => {
    // Each token weighs ~1e-5 of the total here, float32 resolves ~6e-8 of it: the prefix and u x total are float32 pairs.
    expect(agreement(32, 151936, 10, { ...PLAIN, temperature: 1 })).toBeGreaterThanOrEqual(0.995);
  });

  it('a prime vocabulary (the weights padded with zeros to whole blocks)', () => {
    expect(drawBlock(10007).padded).toBeGreaterThan(10007);
    expect(agreement(32, 10007, 6, PLAIN)).toBeGreaterThanOrEqual(0.99);
  });

  it('temperature, top-k, top-p, both, and padded vocabulary rows', () => {
    for (const s of [
      { temperature: 0.7, topK: 0, topP: 1, validVocab: Infinity },
      { temperature: 1, topK: 50, topP: 1, validVocab: Infinity },
      { temperature: 1, topK: 0, topP: 0.9, validVocab: Infinity },
      { temperature: 1.3, topK: 200, topP: 0.8, validVocab: Infinity },
      { temperature: 1, topK: 0, topP: 1, validVocab: 4900 },
      { temperature: 0.8, topK: 0, topP: 0.95, validVocab: 4900 },
    ]) {
      expect(agreement(32, 5000, 6, s), JSON.stringify(s)).toBeGreaterThanOrEqual(0.99);
    }
  });

  it('greedy: identical ids, no draw taken', () => {
    const B = 32;
    const V = 30000;
    const t = tf.tensor2d(randomLogits(B, V, 7), [B, V]);
    const noDraw = () => {
      throw new Error('greedy took a draw');
    };
    const s = { temperature: 0, topK: 5, topP: 0.5, validVocab: V - 100 };
    const device = TOKEN_PICKERS.device(t, Array(B).fill(noDraw), s);
    const host = TOKEN_PICKERS.host(t, Array(B).fill(noDraw), s);
    const argmax = tf.tidy(() => Array.from(tf.argMax(tf.slice(t, [0, 0], [B, V - 100]), 1).dataSync()));
    t.dispose();
    expect(device.ids).toEqual(host.ids);
    expect(device.ids).toEqual(argmax);
  });

  it('the recorded log-prob is the un-tempered log-softmax over the whole head (padded rows included)', () => {
    const B = 8;
    const V = 6000;
    const logits = randomLogits(B, V, 9);
    const { device } = bothPick(logits, B, V, { temperature: 0.6, topK: 0, topP: 0.9, validVocab: 5000 }, 3);
    for (let r = 0; r < B; r++) {
      const row = logits.subarray(r * V, (r + 1) * V);
      let max = -Infinity;
      for (const z of row) max = Math.max(max, z);
      let sum = 0;
      for (const z of row) sum += Math.exp(z - max);
      expect(device.logp[r]).toBeCloseTo(row[device.ids[r]] - max - Math.log(sum), 4);
    }
  });
});

/** Chi-square statistic of observed counts against expected probabilities. */
function chiSquare(counts: number[], probs: number[], n: number): number {
  return counts.reduce((acc, c, i) => acc + (c - n * probs[i]) ** 2 / (n * probs[i]), 0);
}

/** Draw frequencies of `rows` identical rows in one device call (one uniform each, from one stream). */
function deviceCounts(row: number[], rows: number, s: PickSettings, seed: number): number[] {
  const V = row.length;
  const per = Math.min(rows, Math.max(1, Math.floor(4e6 / V))); // rows per call
  const block = new Float32Array(per * V);
  for (let r = 0; r < per; r++) block.set(row, r * V);
  const rand = mulberry32(seed);
  const counts = Array<number>(V).fill(0);
  for (let done = 0; done < rows; done += per) {
    const n = Math.min(per, rows - done);
    const u = Float32Array.from({ length: n }, () => rand());
    const ids = tf.tidy(() =>
      pickOnDevice(tf.tensor2d(block.subarray(0, n * V), [n, V]), tf.tensor1d(u), s)
        .dataSync()
        .subarray(0, n),
    );
    for (const id of ids) counts[id]++;
  }
  return counts;
}

describe('device draw frequencies match the exact probabilities', () => {
  // Weights worked out by hand in float64: p_i proportional to exp(z_i / T) over the kept ids.
  const Z = [0, 1, -1, 2, 0.5, -3, 1.5, -0.5];
  const probs = (T: number, keep: number[]) => {
    const w = Z.map((z, i) => (keep.includes(i) ? Math.exp(z / T) : 0));
    const tot = w.reduce((a, b) => a + b, 0);
    return w.map((x) => x / tot);
  };
  const N = 20000;
  // Chi-square critical value at p = 0.001 for 7 degrees of freedom: 24.3 (fewer dof: smaller; 24.3 is lenient for them).
  const CRIT = 24.3;

  it('temperature 1 and 0.5 over all ids', () => {
    for (const T of [1, 0.5]) {
      const p = probs(T, [0, 1, 2, 3, 4, 5, 6, 7]);
      expect(chiSquare(deviceCounts(Z, N, { temperature: T, topK: 0, topP: 1, validVocab: 8 }, 11), p, N)).toBeLessThan(CRIT);
    }
  });

  it('top-k 3 keeps ids 3, 6, 1 only, renormalised', () => {
    const p = probs(1, [3, 6, 1]);
    const counts = deviceCounts(Z, N, { temperature: 1, topK: 3, topP: 1, validVocab: 8 }, 12);
    expect(counts[0] + counts[2] + counts[4] + counts[5] + counts[7]).toBe(0);
    const kept = [3, 6, 1];
    expect(
      chiSquare(
        kept.map((i) => counts[i]),
        kept.map((i) => p[i]),
        N,
      ),
    ).toBeLessThan(CRIT);
  });

  it('top-p 0.85 keeps the fewest most probable ids reaching 85%', () => {
    // Probabilities at T = 1, descending: id 3 0.405, id 6 0.245, id 1 0.149 (cumulative 0.799), id 4 0.090 (0.889).
    const all = probs(1, [0, 1, 2, 3, 4, 5, 6, 7]);
    expect(all[3] + all[6] + all[1]).toBeLessThan(0.85);
    expect(all[3] + all[6] + all[1] + all[4]).toBeGreaterThan(0.85);
    const kept = [3, 6, 1, 4];
    const p = probs(1, kept);
    const counts = deviceCounts(Z, N, { temperature: 1, topK: 0, topP: 0.85, validVocab: 8 }, 13);
    expect(counts[0] + counts[2] + counts[5] + counts[7]).toBe(0);
    expect(
      chiSquare(
        kept.map((i) => counts[i]),
        kept.map((i) => p[i]),
        N,
      ),
    ).toBeLessThan(CRIT);
  });

  it('a long vocabulary (blocked draw): the heavy ids spread over blocks, and the tail as one bucket', () => {
    const V = 4500; // above the one-running-sum limit (4096): 75 blocks of 60
    const heavy = [5, 777, 2000, 4499, 3210];
    const row = Array<number>(V).fill(-3.5);
    heavy.forEach((id, k) => (row[id] = 4 + k * 0.3));
    const w = row.map((z) => Math.exp(z));
    const tot = w.reduce((a, b) => a + b, 0);
    expect(drawBlock(V)).toEqual({ bs: 60, nb: 75, padded: 4500 });
    const counts = deviceCounts(row, N, PLAIN, 14);
    const obs = [...heavy.map((i) => counts[i]), N - heavy.reduce((a, i) => a + counts[i], 0)];
    const exp = [...heavy.map((i) => w[i] / tot), 1 - heavy.reduce((a, i) => a + w[i] / tot, 0)];
    expect(exp[5]).toBeGreaterThan(0.15); // the tail is a real share, so a mis-walked block would show
    expect(chiSquare(obs, exp, N)).toBeLessThan(20.5); // p = 0.001, 5 dof
  });

  it('a biased draw fails the same statistic (the check is not vacuous)', () => {
    const p = probs(1, [0, 1, 2, 3, 4, 5, 6, 7]);
    const counts = deviceCounts(Z, N, { temperature: 0.9, topK: 0, topP: 1, validVocab: 8 }, 11);
    expect(chiSquare(counts, p, N)).toBeGreaterThan(CRIT);
  });
});

/** Each row's N most probable real ids by a plain float64 loop over the logits: log-softmax over the whole head, ties by lower id. */
function topByHand(logits: Float32Array, B: number, V: number, N: number, validVocab: number) {
  return Array.from({ length: B }, (_, r) => {
    const row = Array.from(logits.subarray(r * V, (r + 1) * V));
    const max = Math.max(...row);
    const lse = max + Math.log(row.reduce((a, z) => a + Math.exp(z - max), 0));
    const order = row.map((_, i) => i).filter((i) => i < validVocab);
    order.sort((a, b) => row[b] - row[a] || a - b);
    return order.slice(0, N).map((i) => ({ id: i, logp: row[i] - lse }));
  });
}

describe('top alternatives (top_logprobs)', () => {
  const B = 6;
  const V = 700;
  const N = 5;
  /** Random logits with padded head rows dominating (ids >= 600) and exact ties among each row's best real ids. */
  function tiedPaddedLogits(): Float32Array {
    const logits = randomLogits(B, V, 21);
    for (let r = 0; r < B; r++) {
      logits.fill(40, r * V + 600, (r + 1) * V); // padded rows: most probable of all, never listed
      for (const i of [17, 5, 300]) logits[r * V + i] = 20; // a three-way tie at the top: listed 5, 17, 300
      logits[r * V + 250] = 19; // then 250
    }
    return logits;
  }

  it('device and host list the same ids (exactly) and log-probs (float32) as a float64 loop, padded rows left out, ties by lower id', () => {
    const logits = tiedPaddedLogits();
    for (const s of [
      { temperature: 1, topK: 0, topP: 1, validVocab: 600, topLogprobs: N },
      { temperature: 0, topK: 0, topP: 1, validVocab: 600, topLogprobs: N },
      { temperature: 0.8, topK: 20, topP: 0.9, validVocab: 600, topLogprobs: N },
    ]) {
      const { device, host } = bothPick(logits, B, V, s, 8);
      const want = topByHand(logits, B, V, N, 600);
      expect(want[0].slice(0, 4).map((a) => a.id)).toEqual([5, 17, 300, 250]);
      for (const picks of [device, host]) {
        expect(picks.top).toHaveLength(B);
        picks.top!.forEach((t, r) => {
          expect(t.ids).toEqual(want[r].map((a) => a.id));
          t.logp.forEach((lp, j) => expect(Math.abs(lp - want[r][j].logp)).toBeLessThan(1e-4));
        });
      }
      device.top!.forEach((t, r) => t.logp.forEach((lp, j) => expect(Math.abs(lp - host.top![r].logp[j])).toBeLessThan(1e-5)));
      // The sampled token's entry is its recorded log-prob, bit for bit.
      device.ids.forEach((id, r) => {
        const j = device.top![r].ids.indexOf(id);
        if (j >= 0) expect(device.top![r].logp[j]).toBe(device.logp[r]);
      });
    }
  });

  it('on random logits of a long head (no ties): device equals host', () => {
    const [b, v, n] = [8, 20000, 20];
    const logits = randomLogits(b, v, 33);
    const { device, host } = bothPick(logits, b, v, { temperature: 1, topK: 0, topP: 1, validVocab: 19000, topLogprobs: n }, 2);
    const want = topByHand(logits, b, v, n, 19000);
    for (let r = 0; r < b; r++) {
      expect(device.top![r].ids).toEqual(host.top![r].ids);
      expect(device.top![r].ids).toEqual(want[r].map((a) => a.id));
      device.top![r].logp.forEach((lp, j) => {
        expect(Math.abs(lp - host.top![r].logp[j])).toBeLessThan(1e-5);
        expect(lp).toBeLessThanOrEqual(j > 0 ? device.top![r].logp[j - 1] : 0); // descending
      });
    }
  });

  it('the list is un-tempered: temperature 0.7 lists what temperature 1 lists', () => {
    const logits = randomLogits(B, V, 44);
    const at = (temperature: number) => bothPick(logits, B, V, { temperature, topK: 0, topP: 1, validVocab: V, topLogprobs: 4 }, 5).device.top!;
    const one = at(1);
    const cool = at(0.7);
    expect(cool.map((t) => t.ids)).toEqual(one.map((t) => t.ids));
    cool.forEach((t, r) => t.logp.forEach((lp, j) => expect(Math.abs(lp - one[r].logp[j])).toBeLessThan(1e-5)));
    // A tempered log-softmax would differ by far more: the check is not vacuous.
    const want = topByHand(logits, B, V, 4, V);
    expect(Math.abs(want[0][1].logp / 0.7 - want[0][1].logp)).toBeGreaterThan(0.1);
  });

  it('no list unless asked; N is capped by the real ids', () => {
    const logits = randomLogits(2, 10, 3);
    expect(bothPick(logits, 2, 10, PLAIN, 1).device.top).toBeUndefined();
    expect(bothPick(logits, 2, 10, { ...PLAIN, topLogprobs: 0 }, 1).device.top).toBeUndefined();
    const { device, host } = bothPick(logits, 2, 10, { ...PLAIN, validVocab: 3, topLogprobs: 20 }, 1);
    expect(device.top!.map((t) => [...t.ids].sort())).toEqual([
      [0, 1, 2],
      [0, 1, 2],
    ]);
    expect(device.top!.map((t) => t.ids)).toEqual(host.top!.map((t) => t.ids));
  });

  it('picks with alternatives leave the tensor count unchanged', () => {
    const t = tf.tensor2d(randomLogits(4, 3000, 6), [4, 3000]);
    const rands = Array.from({ length: 4 }, (_, r) => mulberry32(r));
    const settings: PickSettings[] = [
      { ...PLAIN, topLogprobs: 3 },
      { temperature: 0, topK: 0, topP: 1, validVocab: 2500, topLogprobs: 20 },
      { temperature: 0.7, topK: 40, topP: 0.9, validVocab: 2500, topLogprobs: 1 },
    ];
    for (const s of settings) TOKEN_PICKERS.device(t, rands, s); // warm-up
    const before = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) for (const s of settings) TOKEN_PICKERS.device(t, rands, s);
    expect(tf.memory().numTensors).toBe(before);
    t.dispose();
  });
});

describe('padded rows and memory', () => {
  it('ids >= validVocab are never picked, however large their logits', () => {
    const B = 64;
    const V = 300;
    const logits = randomLogits(B, V, 5);
    for (let r = 0; r < B; r++) logits.fill(50, r * V + 250, (r + 1) * V);
    for (const s of [
      { temperature: 1, topK: 0, topP: 1, validVocab: 250 },
      { temperature: 2, topK: 100, topP: 1, validVocab: 250 },
      { temperature: 1, topK: 0, topP: 0.99, validVocab: 250 },
    ]) {
      const { device } = bothPick(logits, B, V, s, 4);
      expect(Math.max(...device.ids)).toBeLessThan(250);
    }
    // Without the limit the padded rows win: the check is not vacuous.
    expect(Math.min(...bothPick(logits, B, V, PLAIN, 4).device.ids)).toBeGreaterThanOrEqual(250);
  });

  it('a loop of picks leaves the tensor count unchanged', () => {
    const t = tf.tensor2d(randomLogits(8, 9000, 2), [8, 9000]);
    const rands = Array.from({ length: 8 }, (_, r) => mulberry32(r));
    const settings: PickSettings[] = [
      PLAIN,
      { temperature: 0, topK: 0, topP: 1, validVocab: 8000 },
      { temperature: 0.7, topK: 40, topP: 0.9, validVocab: 8000 },
    ];
    for (const s of settings) TOKEN_PICKERS.device(t, rands, s); // warm-up (backend-internal constants)
    const before = tf.memory().numTensors;
    for (let i = 0; i < 5; i++) for (const s of settings) TOKEN_PICKERS.device(t, rands, s);
    expect(tf.memory().numTensors).toBe(before);
    t.dispose();
  });

  it('an unknown picker name is refused, naming the known ones', () => {
    expect(() => tokenPicker('gpu')).toThrow(/unknown token picker "gpu"; known: device, host/);
  });
});
