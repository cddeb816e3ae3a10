import { afterAll, describe, expect, it } from 'vitest';
import { scoreCompletionsData } from '../../../src/core/models/logprobs';
import { mulberry32 } from '../../../src/core/models/random';
import { sample, sampleToken } from '../../../src/core/models/sampler';
import { CharTokenizer } from '../../../src/core/models/tokenizer';
import { Transformer } from '../../../src/core/models/transformer';
import { microConfig, randomIds } from './helpers';

describe('sample', () => {
  const model = new Transformer(microConfig());
  const tok = new CharTokenizer();
  afterAll(() => model.dispose());
  const prompts = [randomIds(4, 1), randomIds(9, 2), randomIds(1, 3), randomIds(6, 4)];

  it('behaviour log-probs equal teacher-forced log-probs (temperature 1, no top-p) within 1e-4', () => {
    const rows = sample(model, prompts, { maxNewTokens: 12, seed: 5, endId: null });
    const scored = scoreCompletionsData(
      model,
      prompts.map((p, r) => ({ prompt: p, completion: rows[r].tokens.slice(0, rows[r].length) })),
    );
    rows.forEach((row, r) => {
      expect(row.length).toBe(12);
      for (let j = 0; j < row.length; j++) expect(Math.abs(row.logp[j] - scored.logp[r][j])).toBeLessThan(1e-4);
    });
  });

  it('records un-tempered log-probs under temperature and top-p too', () => {
    const rows = sample(model, prompts, { maxNewTokens: 6, seed: 6, temperature: 0.7, topP: 0.9, endId: null });
    const scored = scoreCompletionsData(
      model,
      prompts.map((p, r) => ({ prompt: p, completion: rows[r].tokens })),
    );
    rows.forEach((row, r) => row.logp.forEach((v, j) => expect(Math.abs(v - scored.logp[r][j])).toBeLessThan(1e-4)));
  });

  it('is reproducible from its seed, and another seed gives other samples', () => {
    const a = sample(model, prompts, { maxNewTokens: 8, seed: 11, endId: null });
    const b = sample(model, prompts, { maxNewTokens: 8, seed: 11, endId: null });
    const c = sample(model, prompts, { maxNewTokens: 8, seed: 12, endId: null });
    expect(b.map((r) => r.tokens)).toEqual(a.map((r) => r.tokens));
    expect(c.map((r) => r.tokens)).not.toEqual(a.map((r) => r.tokens));
  });

  it('a row does not depend on the other rows of the batch (padding and positions are right)', () => {
    const all = sample(model, prompts, { maxNewTokens: 5, seed: 3, temperature: 0, endId: null });
    const alone = sample(model, [prompts[1]], { maxNewTokens: 5, seed: 3, temperature: 0, endId: null });
    expect(all[1].tokens).toEqual(alone[0].tokens);
  });

  it('KV-cache and full-recompute decoding agree', () => {
    const kv = sample(model, prompts, { maxNewTokens: 6, seed: 4, endId: null });
    const full = sample(model, prompts, { maxNewTokens: 6, seed: 4, endId: null, decode: 'full' });
    expect(full.map((r) => r.tokens)).toEqual(kv.map((r) => r.tokens));
    kv.forEach((r, i) => r.logp.forEach((v, j) => expect(Math.abs(v - full[i].logp[j])).toBeLessThan(1e-4)));
  });

  it('stop reasons: end token, stop string, length; padding after a row stops', () => {
    const greedy = sample(model, prompts, { maxNewTokens: 4, seed: 1, temperature: 0, endId: null, tokenizer: tok });
    expect(greedy.every((r) => r.stopReason === 'length' && r.length === 4)).toBe(true);
    const first = greedy[0].tokens[0];
    const ended = sample(model, prompts, { maxNewTokens: 4, seed: 1, temperature: 0, endId: first });
    expect(ended[0]).toMatchObject({ stopReason: 'end', length: 1 });
    expect(ended[0].mask).toEqual([1, ...Array(ended[0].tokens.length - 1).fill(0)]);
    const stopText = tok.decode(greedy[0].tokens.slice(1, 3));
    const stopped = sample(model, prompts, { maxNewTokens: 4, seed: 1, temperature: 0, endId: null, stopStrings: [stopText], tokenizer: tok });
    expect(stopped[0]).toMatchObject({ stopReason: 'stop', length: 3 });
    expect(stopped[0].text!.endsWith(stopText)).toBe(true);
  });

  it('top alternatives: one list per generated token, descending, un-tempered (the sampled entry is its log-prob); device equals host', () => {
    const opts = { maxNewTokens: 6, seed: 9, temperature: 0.7, endId: null, topLogprobs: 5 };
    const rows = sample(model, prompts, opts);
    const host = sample(model, prompts, { ...opts, picker: 'host' });
    let listed = 0;
    rows.forEach((row, r) => {
      expect(row.top).toHaveLength(row.length);
      row.top!.forEach((t, j) => {
        expect(t.ids).toEqual(host[r].top![j].ids);
        expect(t.ids).toHaveLength(5);
        t.logp.forEach((lp, k) => k > 0 && expect(lp).toBeLessThanOrEqual(t.logp[k - 1]));
        const at = t.ids.indexOf(row.tokens[j]);
        if (at >= 0) {
          listed++;
          expect(t.logp[at]).toBe(row.logp[j]); // un-tempered: the recorded log-prob (teacher-forced, test above)
        } else expect(row.logp[j]).toBeLessThanOrEqual(t.logp[4]);
      });
    });
    expect(listed).toBeGreaterThan(0);
    expect(sample(model, prompts, { ...opts, topLogprobs: 0 })[0].top).toBeUndefined();
  });

  it('caps generation at the context length', () => {
    const rows = sample(model, [randomIds(60, 9)], { maxNewTokens: 50, seed: 1, endId: null });
    expect(rows[0]).toMatchObject({ length: 4, stopReason: 'length' });
  });
});

describe('sampleToken', () => {
  const logp = [Math.log(0.5), Math.log(0.3), Math.log(0.15), Math.log(0.05)];
  const freq = (temperature: number, topP: number) => {
    const rand = mulberry32(7);
    const n = [0, 0, 0, 0];
    for (let i = 0; i < 20000; i++) n[sampleToken(logp, temperature, topP, rand)]++;
    return n.map((c) => c / 20000);
  };

  it('samples the softmax at temperature 1', () => {
    freq(1, 1).forEach((f, i) => expect(f).toBeCloseTo(Math.exp(logp[i]), 1));
  });

  it('top-p keeps the smallest set reaching p, renormalised', () => {
    const f = freq(1, 0.75);
    expect(f[2] + f[3]).toBe(0);
    expect(f[0]).toBeCloseTo(0.5 / 0.8, 1);
  });

  it('temperature 0 is argmax', () => {
    expect(freq(0, 1)).toEqual([1, 0, 0, 0]);
  });
});
