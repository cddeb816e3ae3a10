// The batched KV-cache sampler of the HF family (src/core/models/hf/sampler.ts): KV decoding
// against full recomputation, behaviour log-probs against teacher forcing, batch independence,
// seeds, stop ids, padded vocabulary rows, the token-choice warpers, and the device picker against
// the host reference.
import { afterAll, describe, expect, it } from 'vitest';
import { HfModel } from '../../../../src/core/models/hf/model';
import { scoreHfData } from '../../../../src/core/models/hf/logprobs';
import { pickToken, sampleHf } from '../../../../src/core/models/hf/sampler';
import { mulberry32 } from '../../../../src/core/models/random';
import { FIXTURES, loadFixture, logSoftmax64, memorySource, randomHfConfig, randomIds, randomQwen2Config, randomWeights, reference64 } from './randomModel';

describe('sampleHf', () => {
  const config = randomHfConfig();
  const weights = randomWeights(config, 4);
  // Softer weights than the forward tests: sampling at temperature 1 should visit several tokens.
  const soft = new Map([...weights].map(([n, w]) => [n, n.endsWith('norm.weight') ? w : w.map((v) => v * 0.6)]));
  const model = HfModel.fromSource(config, memorySource(config, soft));
  afterAll(() => model.dispose());
  const prompts = [randomIds(4, 1), randomIds(9, 2), randomIds(1, 3), randomIds(6, 4)];

  it('KV-cache and full-recompute decoding give identical greedy ids and log-probs within 1e-4', () => {
    const kv = sampleHf(model, prompts, { maxNewTokens: 10, temperature: 0, seed: 1 });
    const full = sampleHf(model, prompts, { maxNewTokens: 10, temperature: 0, seed: 1, decode: 'full' });
    expect(full.map((r) => r.ids)).toEqual(kv.map((r) => r.ids));
    kv.forEach((r, i) => r.logp.forEach((v, j) => expect(Math.abs(v - full[i].logp[j])).toBeLessThan(1e-4)));
  });

  it('greedy continuation equals the float64 reference argmax step by step', () => {
    const rows = sampleHf(model, prompts.slice(0, 2), { maxNewTokens: 6, temperature: 0, seed: 1 });
    rows.forEach((row, i) => {
      const seq = [...prompts[i]];
      for (const id of row.ids) {
        const ref = reference64(config, soft, seq)[seq.length - 1];
        expect(id).toBe(ref.indexOf(Math.max(...ref)));
        seq.push(id);
      }
    });
  });

  it('behaviour log-probs equal teacher-forced log-probs within 1e-4 (temperature 1, and with temperature, top-k, top-p)', () => {
    for (const opts of [{}, { temperature: 0.7, topK: 5, topP: 0.9 }]) {
      const rows = sampleHf(model, prompts, { maxNewTokens: 8, seed: 5, ...opts });
      const scored = scoreHfData(
        model,
        prompts.map((p, r) => ({ prompt: p, completion: rows[r].ids })),
      );
      rows.forEach((row, r) => {
        expect(row.ids.length).toBe(8);
        row.logp.forEach((v, j) => expect(Math.abs(v - scored.logp[r][j])).toBeLessThan(1e-4));
      });
    }
  });

  it('a row does not depend on the other rows of the batch (left padding, positions)', () => {
    const all = sampleHf(model, prompts, { maxNewTokens: 6, temperature: 0, seed: 3 });
    const alone = sampleHf(model, [prompts[1]], { maxNewTokens: 6, temperature: 0, seed: 3 });
    expect(all[1].ids).toEqual(alone[0].ids);
    all[1].logp.forEach((v, j) => expect(Math.abs(v - alone[0].logp[j])).toBeLessThan(1e-4));
    // Sampled (temperature 1): row 0's random stream is the same whatever follows it in the batch.
    const first = sampleHf(model, [prompts[2], ...prompts], { maxNewTokens: 6, seed: 3 });
    expect(first[0].ids).toEqual(sampleHf(model, [prompts[2]], { maxNewTokens: 6, seed: 3 })[0].ids);
  });

  it('the device picker (default) draws what the host reference draws, with the same log-probs', () => {
    for (const opts of [{ temperature: 1 }, { temperature: 0.7, topK: 5, topP: 0.9 }, { temperature: 0 }]) {
      const dev = sampleHf(model, prompts, { maxNewTokens: 10, seed: 21, ...opts });
      const host = sampleHf(model, prompts, { maxNewTokens: 10, seed: 21, picker: 'host', ...opts });
      expect(dev.map((r) => r.ids)).toEqual(host.map((r) => r.ids));
      dev.forEach((r, i) => r.logp.forEach((lp, j) => expect(lp).toBeCloseTo(host[i].logp[j], 4)));
    }
  });

  it('is reproducible from its seed, and another seed gives other samples', () => {
    const a = sampleHf(model, prompts, { maxNewTokens: 8, seed: 11 });
    const b = sampleHf(model, prompts, { maxNewTokens: 8, seed: 11 });
    const c = sampleHf(model, prompts, { maxNewTokens: 8, seed: 12 });
    expect(b).toEqual(a);
    expect(c.map((r) => r.ids)).not.toEqual(a.map((r) => r.ids));
  });

  it('a stop id ends its row (kept, reason end); the others run to the length', () => {
    const greedy = sampleHf(model, prompts, { maxNewTokens: 4, temperature: 0, seed: 1 });
    expect(greedy.every((r) => r.stopReason === 'length' && r.ids.length === 4)).toBe(true);
    const stop = greedy[0].ids[0];
    const stopped = sampleHf(model, prompts, { maxNewTokens: 4, temperature: 0, seed: 1, stopIds: [stop] });
    expect(stopped[0]).toEqual({ ids: [stop], logp: [greedy[0].logp[0]], stopReason: 'end' });
    stopped.forEach((r, i) => {
      const cut = greedy[i].ids.indexOf(stop);
      expect(r.ids).toEqual(cut < 0 ? greedy[i].ids : greedy[i].ids.slice(0, cut + 1));
    });
  });

  it('caps generation at max_position_embeddings', () => {
    const rows = sampleHf(model, [randomIds(60, 9)], { maxNewTokens: 50, seed: 1 });
    expect(rows[0].ids.length).toBe(4);
    expect(rows[0].stopReason).toBe('length');
  });

  it('rejects bad options with a message naming them', () => {
    expect(() => sampleHf(model, prompts, { maxNewTokens: 0, seed: 1 })).toThrow(/maxNewTokens/);
    expect(() => sampleHf(model, prompts, { maxNewTokens: 2, seed: 1, topP: 0 })).toThrow(/topP/);
    expect(() => sampleHf(model, [[1, 99]], { maxNewTokens: 2, seed: 1 })).toThrow(/id 99/);
  });
});

describe('padded vocabulary rows', () => {
  // An untied checkpoint whose head rows 30..39 (beyond a 30-token tokenizer) give huge logits.
  const config = randomQwen2Config();
  const weights = randomWeights(config, 8);
  const head = weights.get('lm_head.weight')!;
  const d = config.hiddenSize;
  // Padded rows 30..34 are 50x real rows 0..4 and rows 35..39 are -50x them: whatever the hidden
  // state, one of each pair has a logit 50x |a real logit|, which dominates the real rows.
  for (let v = 30; v < 40; v++) for (let i = 0; i < d; i++) head[v * d + i] = head[((v - 30) % 5) * d + i] * (v < 35 ? 50 : -50);
  const prompts = [randomIds(3, 1, 1, 30), randomIds(5, 2, 1, 30)];

  it('without validVocab the padded rows win (the check is not vacuous); with it they are never sampled', () => {
    const model = HfModel.fromSource(config, memorySource(config, weights));
    try {
      const raw = sampleHf(model, prompts, { maxNewTokens: 3, temperature: 0, seed: 1 });
      expect(raw.flatMap((r) => r.ids).some((id) => id >= 30)).toBe(true);
      for (let seed = 0; seed < 5; seed++) {
        for (const opts of [{ temperature: 0 }, { temperature: 1 }, { temperature: 2, topP: 0.95 }, { temperature: 1, topK: 3 }]) {
          const rows = sampleHf(model, prompts, { maxNewTokens: 6, seed, validVocab: 30, ...opts });
          expect(rows.flatMap((r) => r.ids).every((id) => id < 30)).toBe(true);
        }
      }
    } finally {
      model.dispose();
    }
  });

  it("the model's validVocab (set at load) is the sampler's default, and recorded log-probs are over the whole head", () => {
    const model = HfModel.fromSource(config, memorySource(config, weights), { validVocab: 30 });
    try {
      const rows = sampleHf(model, [prompts[0]], { maxNewTokens: 3, temperature: 0, seed: 1 });
      const seq = [...prompts[0]];
      rows[0].ids.forEach((id, j) => {
        expect(id).toBeLessThan(30);
        const ref = reference64(config, weights, seq)[seq.length - 1];
        const real = Array.from(ref.subarray(0, 30));
        expect(id).toBe(real.indexOf(Math.max(...real)));
        expect(Math.abs(rows[0].logp[j] - logSoftmax64(ref)[id])).toBeLessThan(1e-3 * Math.max(1, Math.abs(rows[0].logp[j])));
        seq.push(id);
      });
    } finally {
      model.dispose();
    }
  });
});

describe('sampleHf top alternatives (topLogprobs)', () => {
  const config = randomHfConfig();
  const weights = randomWeights(config, 4);
  const model = HfModel.fromSource(config, memorySource(config, weights), { validVocab: 30 });
  afterAll(() => model.dispose());
  const prompt = randomIds(5, 7);

  it('each position lists the N most probable real ids of the float64 reference, un-tempered, descending; device equals host', () => {
    const N = 4;
    const rows = sampleHf(model, [prompt], { maxNewTokens: 4, temperature: 0.7, seed: 2, topLogprobs: N });
    const host = sampleHf(model, [prompt], { maxNewTokens: 4, temperature: 0.7, seed: 2, topLogprobs: N, picker: 'host' });
    expect(rows[0].top).toHaveLength(rows[0].ids.length);
    const seq = [...prompt];
    rows[0].ids.forEach((id, j) => {
      const lsm = logSoftmax64(reference64(config, weights, seq)[seq.length - 1]); // over the whole head
      const want = Array.from({ length: 30 }, (_, i) => i)
        .sort((a, b) => lsm[b] - lsm[a] || a - b)
        .slice(0, N); // real ids only
      const top = rows[0].top![j];
      expect(top.ids).toEqual(want);
      expect(host[0].top![j].ids).toEqual(want);
      top.logp.forEach((lp, k) => expect(Math.abs(lp - lsm[want[k]])).toBeLessThan(1e-3 * Math.max(1, Math.abs(lp))));
      const at = top.ids.indexOf(id);
      if (at >= 0) expect(top.logp[at]).toBe(rows[0].logp[j]);
      seq.push(id);
    });
    expect(sampleHf(model, [prompt], { maxNewTokens: 2, seed: 2 })[0].top).toBeUndefined();
  });
});

describe('pickToken', () => {
  const logp = [Math.log(0.5), Math.log(0.3), Math.log(0.15), Math.log(0.05)];
  const freq = (temperature: number, topK: number, topP: number) => {
    const rand = mulberry32(7);
    const n = [0, 0, 0, 0];
    for (let i = 0; i < 20000; i++) n[pickToken(logp, temperature, topK, topP, rand)]++;
    return n.map((c) => c / 20000);
  };

  it('samples the softmax at temperature 1', () => {
    freq(1, 0, 1).forEach((f, i) => expect(f).toBeCloseTo(Math.exp(logp[i]), 1));
  });

  it('top-k keeps the k most probable, renormalised', () => {
    const f = freq(1, 2, 1);
    expect(f[2] + f[3]).toBe(0);
    expect(f[0]).toBeCloseTo(0.5 / 0.8, 1);
  });

  it('top-p keeps the smallest set reaching the mass', () => {
    const f = freq(1, 0, 0.75); // 0.5 + 0.3 >= 0.75
    expect(f[2] + f[3]).toBe(0);
    expect(f[1]).toBeCloseTo(0.3 / 0.8, 1);
  });

  it('top-k / top-p on a large vocabulary pick exactly what a full sort would (the 1e-15 pre-filter changes nothing)', () => {
    /** The obvious version: sort every id, keep k, keep the nucleus, draw. */
    const naive = (lp: Float32Array, t: number, k: number, p: number, rand: () => number) => {
      const max = Math.max(...lp);
      let order = Array.from(lp.keys()).sort((a, b) => lp[b] - lp[a] || a - b);
      if (k > 0) order = order.slice(0, k);
      let w = order.map((i) => Math.exp((lp[i] - max) / t));
      const total = w.reduce((a, b) => a + b, 0);
      let kept = 0;
      let n = 0;
      while (n < w.length && kept < p * total) kept += w[n++];
      if (p < 1) [order, w] = [order.slice(0, Math.max(1, n)), w.slice(0, Math.max(1, n))];
      let u = rand() * w.reduce((a, b) => a + b, 0);
      for (let j = 0; j < order.length; j++) if ((u -= w[j]) < 0) return order[j];
      return order[order.length - 1];
    };
    const r = mulberry32(3);
    const lp = Float32Array.from({ length: 5000 }, () => -60 * r() * r()); // a long tail far below the head
    for (const [t, k, p] of [
      [1, 0, 0.9],
      [0.7, 20, 1],
      [1.3, 50, 0.95],
    ] as const) {
      const [ra, rb] = [mulberry32(9), mulberry32(9)];
      for (let i = 0; i < 300; i++) expect(pickToken(lp, t, k, p, ra)).toBe(naive(lp, t, k, p, rb));
    }
  });

  it('temperature 0 is the argmax; a low temperature sharpens', () => {
    expect(pickToken([0, 3, 1, 2], 0, 0, 1, mulberry32(1))).toBe(1);
    expect(freq(0.25, 0, 1)[0]).toBeGreaterThan(0.85);
  });
});

describe('sampleHf on the fixtures made with transformers', () => {
  for (const f of FIXTURES) {
    it(`${f.name}: greedy ids equal transformers' (argmax over real ids), KV and full`, () => {
      const { model, expected } = loadFixture(f);
      try {
        const { prompt, ids } = expected.greedy;
        for (const decode of ['kv', 'full'] as const) {
          const rows = sampleHf(model, [prompt, expected.sequences[0].ids], { maxNewTokens: ids.length, temperature: 0, seed: 0, decode });
          expect(rows[0].ids).toEqual(ids);
        }
      } finally {
        model.dispose();
      }
    });
  }
});
