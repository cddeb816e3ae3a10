/**
 * The external-agent endpoint with the official `openai` npm client and a tiny random lab policy
 * (the lab's character model as a Hugging Face folder; calls render with its chat template):
 * answers in OpenAI's shapes (chat.completion, streamed chat.completion.chunk, text_completion,
 * the model list); parallel calls tagged alike form ONE event (an active set, K = their number),
 * untagged calls are `<role>#<n>`; what is recorded are the exact ids the policy read and sampled
 * (the response text is their decoding, the sampler's log-probs equal the teacher-forced ones);
 * concurrent calls of one collection window share one sampler call; a request's temperature is
 * recorded, not obeyed, and the response says so; the lab folder's template renders `<bos>`, the
 * call's role marker and the user turns only, a text completion its prompt as it is.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAB_SPECIAL_IDS } from '../../src/core/models/hf/labFolder';
import { SPECIAL_TOKENS } from '../../src/core/models/vocab';
import type { HfPolicies } from '../../src/core/policies/hf';
import { labPolicies } from '../core/train/labPolicies';
import { openEpisode } from './episodeClient';
import { cutAtStop, ExternalEndpoint } from '../../src/core/external/server';

const CONTEXT = 192;
let policies: HfPolicies;
let ep: ExternalEndpoint;
let n = 0;
const episode = () => openEpisode(ep, n++);
const user = (content: string) => [{ role: 'user' as const, content }];

beforeAll(async () => {
  policies = labPolicies({ sharing: 'shared', shape: { contextLength: CONTEXT } });
  ep = await ExternalEndpoint.start({
    policies,
    roles: [
      { name: 'solver', policyRole: 'solver' },
      { name: 'verifier', policyRole: 'verifier' },
      { name: 'critic', policyRole: 'verifier' },
    ],
    sampling: { obeyRequest: false, temperature: 1, topP: 1, maxNewTokens: 12 },
    concurrency: 64,
    windowMs: 30,
    maxRows: 64,
  });
});
afterAll(async () => {
  await ep.dispose();
  policies.dispose();
});

describe('external endpoint (official openai client)', () => {
  it('parallel calls tagged alike are one active set; untagged calls are <role>#<n>; one sampler call serves the parallel pair', async () => {
    const { log, client } = episode();
    const before = ep.batcher.calls.length;
    const [a, b] = await Promise.all(
      [0, 1].map((j) =>
        client.chat.completions.create({
          model: 'solver',
          messages: user(`Problem: 1+1\nSolver ${j}: solve it.`),
          srpo_event: 'solve',
        } as OpenAI.ChatCompletionCreateParamsNonStreaming),
      ),
    );
    expect(ep.batcher.calls.slice(before)).toEqual([expect.objectContaining({ rows: 2 })]);
    await client.chat.completions.create({ model: 'verifier', messages: user('Verifier: check.') });
    await client.chat.completions.create({ model: 'critic', messages: user('Critic: check again.') });
    await client.chat.completions.create({ model: 'verifier', messages: user('Verifier: once more.') });
    ep.postReward(log.urlId, { reward: 1, events: { 'verifier#1': -0.5 } });

    const { result, sampled } = log.result('external');
    expect(result.events.map((e) => [e.eventId.split('/').at(-1), e.expectedK, e.kind])).toEqual([
      ['solve', 2, 'solve'],
      ['verifier#0', 1, 'verify'],
      ['critic#0', 1, 'verify'],
      ['verifier#1', 1, 'verify'],
    ]);
    expect(result.events.map((e) => e.reward)).toEqual([1, 1, 1, -0.5]);
    expect(result.events[0].groupKey).toBe('task-1/solve');
    expect(result.events[2].members[0]).toMatchObject({ role: 'verifier', agent: 'critic' });
    // An agent name plays its policy role: the critic's prompt carries the verifier's marker.
    expect(result.events[2].members[0].prompt).toBe('<bos><verifier>Critic: check again.');
    // The recorded members are the responses, token for token.
    const solve = result.events[0];
    const texts = [a, b].map((r) => r.choices[0].message.content);
    expect(solve.members.map((m) => m.output).sort()).toEqual([...texts].sort());
    for (const [i, r] of [a, b].entries()) {
      expect(r.object).toBe('chat.completion');
      const s = sampled.get(`${solve.eventId}#${i}`)!;
      const m = solve.members[i];
      expect(policies.decode(s.outputTokens)).toBe(m.output);
      const resp = [a, b].find((x) => x.choices[0].message.content === m.output)!;
      expect(resp.usage).toEqual({
        prompt_tokens: s.promptTokens.length,
        completion_tokens: s.outputTokens.length,
        total_tokens: s.promptTokens.length + s.outputTokens.length,
      });
      expect(s.logp).toHaveLength(s.outputTokens.length);
      // The ids are what the policy read: the lab folder's chat template gives <bos>, the call's
      // role marker (`lab_role`), then the user text, one id per character; the record keeps that text.
      const tok = policies.tokenizer;
      expect(s.promptTokens.slice(0, 2)).toEqual([LAB_SPECIAL_IDS.bos, SPECIAL_TOKENS.indexOf('<solver>')]);
      expect(tok.decode(s.promptTokens)).toBe(m.prompt);
      expect(m.prompt).toMatch(/^<bos><solver>Problem: 1\+1\nSolver [01]: solve it\.$/);
      expect(s.promptTokens).toHaveLength(m.prompt.length - '<bos><solver>'.length + 2);
      // Sampler log-probs are the teacher-forced log-probs of the recorded ids.
      const scored = policies.scoreData('shared', [{ prompt: s.promptTokens, completion: s.outputTokens }], 'current').logp[0];
      scored.forEach((x, t) => expect(Math.abs(x - s.logp[t])).toBeLessThan(1e-4));
    }
  });

  it('streams chat.completion.chunk events whose pieces add up to the recorded output, with usage when asked', async () => {
    const { log, client } = episode();
    const stream = await client.chat.completions.create({
      model: 'solver',
      messages: user('Solve 2+2.'),
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined = null;
    let finish: string | null = null;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    const s = [...log.result('external').sampled.values()][0];
    expect(text).toBe(policies.decode(s.outputTokens));
    expect(usage?.completion_tokens).toBe(s.outputTokens.length);
    expect(['stop', 'length']).toContain(finish);
  });

  it('n choices are members of one event; logprobs list each sampled token with the sampler log-prob', async () => {
    const { log, client } = episode();
    const r = await client.chat.completions.create({ model: 'solver', messages: user('Solve 3+3.'), n: 3, logprobs: true, top_logprobs: 1 });
    expect(r.choices).toHaveLength(3);
    const { result, sampled } = log.result('external');
    expect(result.events).toHaveLength(1);
    expect(result.events[0].expectedK).toBe(3);
    r.choices.forEach((c, i) => {
      const s = sampled.get(`${result.events[0].eventId}#${i}`)!;
      expect(c.logprobs!.content!.map((t) => t.logprob)).toEqual(s.logp);
      expect(c.logprobs!.content!.map((t) => t.token).join('')).toBe(policies.tokenizer.decode(s.outputTokens));
    });
  });

  it('tags by the X-SRPO-Event header; completions answer as text_completion; models lists the roles', async () => {
    const { log, client } = episode();
    await Promise.all([0, 1].map(() => client.chat.completions.create({ model: 'solver', messages: user('Go.') }, { headers: { 'X-SRPO-Event': 'pair' } })));
    const c = await client.completions.create({ model: 'verifier', prompt: 'Verifier:', logprobs: 1 });
    expect(c.object).toBe('text_completion');
    expect(c.choices[0].logprobs!.tokens!.length).toBe(c.usage!.completion_tokens);
    const { result, sampled } = log.result('external');
    const events = result.events;
    expect(events.map((e) => [e.eventId.split('/').at(-1), e.expectedK])).toEqual([
      ['pair', 2],
      ['verifier#0', 1],
    ]);
    // A text completion reads the tokenizer's encoding of its prompt as it is (no chat template, so no <bos> or role marker).
    expect(events[1].members[0].prompt).toBe('Verifier:');
    expect(policies.tokenizer.decode(sampled.get(`${events[1].eventId}#0`)!.promptTokens)).toBe('Verifier:');
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['solver', 'verifier', 'critic']);
  });

  it("a lab folder's template reads the user turns only: system, assistant and tool turns are left out", async () => {
    const { log, client } = episode();
    await client.chat.completions.create({
      model: 'verifier',
      messages: [
        { role: 'system', content: 'You check solutions.' },
        { role: 'user', content: 'Problem: 2+2' },
        { role: 'assistant', content: 'It is 4.' },
        { role: 'user', content: '\nCheck it.' },
      ],
    });
    const { result, sampled } = log.result('external');
    expect(result.events[0].members[0].prompt).toBe('<bos><verifier>Problem: 2+2\nCheck it.');
    expect(policies.tokenizer.decode(sampled.get(`${result.events[0].eventId}#0`)!.promptTokens)).toBe('<bos><verifier>Problem: 2+2\nCheck it.');
  });

  it("records a request's temperature without obeying it, and says so in a header", async () => {
    const { log } = episode();
    const res = await fetch(`${ep.episodeUrl(log)}/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ep.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'solver', messages: user('Say something.'), temperature: 0.01 }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-srpo-sampling')).toMatch(/temperature 1,.*not obeyed/);
    expect(log.calls[0].requestedTemperature).toBe(0.01);
  });

  it('a stop string cuts the recorded ids at the token that completes it; the text ends before it', () => {
    const tok = policies.tokenizer;
    const ids = tok.encode('ab END cd', { addSpecialTokens: false });
    const row = { ids, logp: ids.map((_, i) => -i), stopReason: 'length' };
    const cut = cutAtStop(row, ['END'], (x) => tok.decode(x));
    expect(cut).toEqual({ ids: ids.slice(0, 6), logp: row.logp.slice(0, 6), text: 'ab ', stopReason: 'stop' });
    expect(cutAtStop(row, ['zz'], (x) => tok.decode(x))).toEqual({ ...row, text: 'ab END cd' });
  });
});
