/**
 * top_logprobs on the external endpoint (official `openai` client, a tiny random lab policy: the
 * lab's character model as a Hugging Face folder, sampled at the run's temperature 0.7): each generated position lists the N most probable
 * tokens of the UN-TEMPERED model, descending, with bytes; the values equal a log-softmax worked
 * out here in float64 from the model's training forward pass over prompt + completion (another
 * code path than the sampler's KV decode), and the sampled token's log-prob equals the policy's
 * teacher-forced score. Also: a text completion's per-position {token: logprob} dicts, rows of
 * one batch that ask for different N, and the streamed chunk's list.
 */
import * as tf from '@tensorflow/tfjs';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HfPolicies } from '../../src/core/policies/hf';
import { labPolicies } from '../core/train/labPolicies';
import { openEpisode } from './episodeClient';
import { cutAtStop, ExternalEndpoint } from '../../src/core/external/server';
import { textCompletion } from '../../src/core/external/protocol';

const TEMPERATURE = 0.7;
let policies: HfPolicies;
let ep: ExternalEndpoint;
let n = 0;
const episode = () => openEpisode(ep, n++);

beforeAll(async () => {
  policies = labPolicies({ sharing: 'shared' });
  ep = await ExternalEndpoint.start({
    policies,
    roles: [
      { name: 'solver', policyRole: 'solver' },
      { name: 'verifier', policyRole: 'verifier' },
    ],
    sampling: { obeyRequest: false, temperature: TEMPERATURE, topP: 1, maxNewTokens: 8 },
    concurrency: 16,
    windowMs: 30,
    maxRows: 16,
  });
});
afterAll(async () => {
  await ep.dispose();
  policies.dispose();
});

/** log-softmax (float64, plain loops, temperature 1) of the model's next-token logits after each prefix of the completion. */
function logSoftmaxAt(prompt: number[], completion: number[]): number[][] {
  const ids = [...prompt, ...completion];
  // The full-sequence forward of training (no KV cache), the shared policy's own weights.
  const logits = tf.tidy(() => policies.model.forward(tf.tensor2d(ids, [1, ids.length], 'int32'))); // [1, T, V]
  const all = logits.dataSync();
  const V = logits.shape[2];
  logits.dispose();
  return completion.map((_, t) => {
    const row = Array.from(all.subarray((prompt.length - 1 + t) * V, (prompt.length + t) * V));
    const max = Math.max(...row);
    let sum = 0;
    for (const z of row) sum += Math.exp(z - max);
    return row.map((z) => z - max - Math.log(sum));
  });
}

/** Checks one position's list against the float64 log-softmax: its values, and that no id left out beats the last one listed. */
function expectTopOf(listed: { id: number; logprob: number }[], lsm: number[], N: number): void {
  expect(listed).toHaveLength(N);
  for (let j = 1; j < N; j++) expect(listed[j].logprob).toBeLessThanOrEqual(listed[j - 1].logprob);
  for (const a of listed) expect(Math.abs(a.logprob - lsm[a.id])).toBeLessThan(1e-4);
  const ids = new Set(listed.map((a) => a.id));
  const last = listed[N - 1].logprob;
  lsm.forEach((lp, id) => {
    if (!ids.has(id)) expect(lp).toBeLessThanOrEqual(last + 1e-4);
  });
}

/** The id of a token's text (the char tokenizer: one id per text). */
function idOf(text: string): number {
  const tok = policies.tokenizer;
  const id = Array.from({ length: tok.vocabSize }, (_, i) => i).find((i) => tok.decode([i]) === text);
  if (id === undefined) throw new Error(`no token decodes to ${JSON.stringify(text)}`);
  return id;
}

describe('top_logprobs (official openai client)', () => {
  /** One chat choice against the float64 computation; returns how many sampled tokens were in their own list. */
  function checkChat(content: OpenAI.ChatCompletionTokenLogprob[], promptTokens: number[], outputTokens: number[], N: number): number {
    expect(content).toHaveLength(outputTokens.length);
    const lsm = logSoftmaxAt(promptTokens, outputTokens);
    const scored = policies.scoreData('shared', [{ prompt: promptTokens, completion: outputTokens }], 'current').logp[0];
    let sampledListed = 0;
    content.forEach((t, i) => {
      expect(t.top_logprobs).toHaveLength(N);
      for (const a of t.top_logprobs) expect(a.bytes).toEqual([...Buffer.from(a.token, 'utf8')]);
      expectTopOf(
        t.top_logprobs.map((a) => ({ id: idOf(a.token), logprob: a.logprob })),
        lsm[i],
        N,
      );
      // The sampled token: its log-prob is the teacher-forced score (un-tempered), and its list entry when listed.
      expect(idOf(t.token)).toBe(outputTokens[i]);
      expect(Math.abs(t.logprob - scored[i])).toBeLessThan(1e-4);
      const entry = t.top_logprobs.find((a) => a.token === t.token);
      if (entry) {
        sampledListed++;
        expect(entry.logprob).toBe(t.logprob);
      }
    });
    return sampledListed;
  }

  it('chat: top_logprobs 3 lists the 3 most probable tokens of the un-tempered model per position, descending, with bytes', async () => {
    const { log, client } = episode();
    const r = await client.chat.completions.create({ model: 'solver', messages: [{ role: 'user', content: 'Solve 4+5.' }], logprobs: true, top_logprobs: 3 });
    const s = [...log.result('external').sampled.values()][0];
    checkChat(r.choices[0].logprobs!.content!, s.promptTokens, s.outputTokens, 3);
  });

  it('chat: with top_logprobs 20 the sampled token, when listed, carries its own log-prob', async () => {
    const { log, client } = episode();
    const r = await client.chat.completions.create({
      model: 'solver',
      messages: [{ role: 'user', content: 'Solve 7+1.' }],
      n: 4,
      logprobs: true,
      top_logprobs: 20,
    });
    const { result, sampled } = log.result('external');
    let listed = 0;
    r.choices.forEach((c, i) => {
      const s = sampled.get(`${result.events[0].eventId}#${i}`)!;
      listed += checkChat(c.logprobs!.content!, s.promptTokens, s.outputTokens, 20);
    });
    expect(listed).toBeGreaterThan(0); // the entry check ran
  });

  it('text completion: logprobs 2 gives per position a {token: logprob} dict of the 2 most probable tokens', async () => {
    const { log, client } = episode();
    const c = await client.completions.create({ model: 'verifier', prompt: 'Verifier: check 9.', logprobs: 2 });
    const s = [...log.result('external').sampled.values()][0];
    const lp = c.choices[0].logprobs!;
    expect(lp.tokens).toHaveLength(s.outputTokens.length);
    const lsm = logSoftmaxAt(s.promptTokens, s.outputTokens);
    lp.top_logprobs!.forEach((dict, i) => {
      const listed = Object.entries(dict).map(([token, logprob]) => ({ id: idOf(token), logprob }));
      listed.sort((a, b) => b.logprob - a.logprob);
      expectTopOf(listed, lsm[i], 2);
      expect(Math.abs(lp.token_logprobs![i] - lsm[i][s.outputTokens[i]])).toBeLessThan(1e-4);
    });
  });

  it('rows of one batch keep their own N; logprobs off gives none; a streamed answer carries the lists', async () => {
    const { client } = episode();
    const before = ep.batcher.calls.length;
    const ask = (top: number | null, maxTokens = 8) =>
      client.chat.completions.create({
        model: 'solver',
        messages: [{ role: 'user', content: `Row ${top}.` }],
        max_tokens: maxTokens,
        ...(top === null ? {} : { logprobs: true, top_logprobs: top }),
      });
    const [five, one, zero, none] = await Promise.all([ask(5), ask(1, 2), ask(0), ask(null)]);
    expect(ep.batcher.calls.slice(before)).toEqual([expect.objectContaining({ rows: 4 })]);
    for (const t of five.choices[0].logprobs!.content!) expect(t.top_logprobs).toHaveLength(5);
    expect(one.choices[0].logprobs!.content!.length).toBe(one.usage!.completion_tokens); // cut to its own max_tokens, lists with it
    expect(one.usage!.completion_tokens).toBeLessThanOrEqual(2);
    for (const t of one.choices[0].logprobs!.content!) expect(t.top_logprobs).toHaveLength(1);
    for (const t of zero.choices[0].logprobs!.content!) expect(t.top_logprobs).toEqual([]);
    expect(none.choices[0].logprobs).toBeNull();

    const stream = await client.chat.completions.create({
      model: 'solver',
      messages: [{ role: 'user', content: 'Go.' }],
      logprobs: true,
      top_logprobs: 2,
      stream: true,
    });
    let lists = 0;
    for await (const chunk of stream) {
      for (const t of chunk.choices[0]?.logprobs?.content ?? []) {
        expect(t.top_logprobs).toHaveLength(2);
        lists++;
      }
    }
    expect(lists).toBeGreaterThan(0);
  });

  it('text completion dicts: two alternatives with the same text keep the more probable one; "__proto__" stays a key', () => {
    const meta = { id: 'cmpl-x', model: 'verifier', created: 0, promptTokens: 1, completionTokens: 1 };
    const top = [
      { text: '\ufffd', logprob: -1 },
      { text: '\ufffd', logprob: -2 },
      { text: '__proto__', logprob: -3 },
    ];
    const body = textCompletion(meta, [{ text: '\ufffd', finishReason: 'length', tokens: [{ text: '\ufffd', logprob: -1, top }] }], 3);
    const dict = JSON.parse(JSON.stringify(body)).choices[0].logprobs.top_logprobs[0];
    expect(dict).toEqual({ '\ufffd': -1, ['__proto__']: -3 });
    expect(Object.keys(dict)).toEqual(['\ufffd', '__proto__']);
  });

  it('a stop string cuts the alternatives with the ids', () => {
    const tok = policies.tokenizer;
    const ids = tok.encode('ab END cd', { addSpecialTokens: false });
    const top = ids.map((id, i) => [{ id, logp: -i }]);
    const row = { ids, logp: ids.map((_, i) => -i), top, stopReason: 'length' };
    const cut = cutAtStop(row, ['END'], (x) => tok.decode(x));
    expect(cut.ids).toEqual(ids.slice(0, 6));
    expect(cut.top).toEqual(top.slice(0, 6));
  });
});
