/**
 * Bad input at the external-agent endpoint and from agent programs (issue 28, item 9), each
 * answered clearly and without losing what was recorded: an unknown or finished episode (404), a
 * missing or wrong key (401), a body over the limit or malformed JSON (400), a prompt longer than
 * the context (400 naming both numbers), an unknown role or an out-of-range reward (400); a
 * program that never calls (the batch fails, saying so), one that hangs (killed at timeoutS, its
 * unfinished episodes failed and counted, the finished one kept), one that crashes after some
 * rewards, one that floods (at most `concurrency` requests sampled at once, the rest queued and
 * all answered).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presetConfig } from '../../src/core/config';
import type { HfPolicies } from '../../src/core/policies/hf';
import { labPolicies } from '../core/train/labPolicies';
import { EpisodeLog } from '../../src/core/external/episodeLog';
import { ExternalEndpoint } from '../../src/core/external/server';
import { ExternalDriver } from '../../src/core/rollout/external';
import { ExternalEpisode } from '../../src/core/workflows/external';
import { LabStore } from '../../src/core/store';
import { Trainer } from '../../src/core/train/trainer';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CONTEXT = 160;
/** The lab folder's max_position_embeddings: twice its context (models/hf/labFolder.ts POSITION_ROOM). */
const POSITIONS = 2 * CONTEXT;
let policies: HfPolicies;
let ep: ExternalEndpoint;
let n = 0;

beforeAll(async () => {
  policies = labPolicies({ sharing: 'shared', shape: { contextLength: CONTEXT } });
  ep = await ExternalEndpoint.start({
    policies,
    roles: [{ name: 'solver', policyRole: 'solver' }],
    sampling: { obeyRequest: false, temperature: 1, topP: 1, maxNewTokens: 6 },
    concurrency: 64,
    windowMs: 5,
    maxRows: 64,
    bodyLimitBytes: 2000,
  });
});
afterAll(async () => {
  await ep.dispose();
  policies.dispose();
});

function open(): EpisodeLog {
  const log = new EpisodeLog(`b/t${n}/g0`, `bad${n++}`, { id: 'q', question: '1+1', answers: ['2'] }, 0);
  ep.open([log]);
  return log;
}
async function post(url: string, body: string, key: string | null = ep.key): Promise<{ status: number; error: { message: string; code: string | null } }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(key === null ? {} : { Authorization: `Bearer ${key}` }) },
    body,
  });
  return { status: res.status, ...((await res.json()) as { error: { message: string; code: string | null } }) };
}
const chat = (content: string, model = 'solver') => JSON.stringify({ model, messages: [{ role: 'user', content }] });

describe('the endpoint refuses bad requests, saying what and where', () => {
  it('unknown episode: 404; finished episode (reward in, or batch ended): 404, and what was recorded stays', async () => {
    const root = `http://127.0.0.1:${ep.port}`;
    expect(await post(`${root}/episodes/nope/v1/chat/completions`, chat('hi'))).toMatchObject({ status: 404, error: { message: 'unknown episode "nope"' } });
    const a = open();
    expect((await post(`${ep.episodeUrl(a)}/chat/completions`, chat('hi'))).status).toBe(200);
    expect((await post(`${ep.episodeUrl(a)}/reward`, JSON.stringify({ reward: 1 }))).status).toBe(200);
    const late = await post(`${ep.episodeUrl(a)}/chat/completions`, chat('again'));
    expect(late).toMatchObject({ status: 404, error: { code: 'episode_finished' } });
    expect(late.error.message).toContain('finished');
    const b = open();
    ep.close([b]);
    expect(await post(`${ep.episodeUrl(b)}/reward`, JSON.stringify({ reward: 1 }))).toMatchObject({ status: 404, error: { code: 'episode_finished' } });
    expect(a.calls).toHaveLength(1); // nothing recorded is lost, nothing refused is recorded
    expect(a.reward?.reward).toBe(1);
  });

  it('missing or wrong key: 401', async () => {
    const a = open();
    expect(await post(`${ep.episodeUrl(a)}/chat/completions`, chat('hi'), null)).toMatchObject({ status: 401, error: { code: 'invalid_api_key' } });
    expect(await post(`${ep.episodeUrl(a)}/chat/completions`, chat('hi'), 'sk-wrong')).toMatchObject({ status: 401, error: { code: 'invalid_api_key' } });
    const models = await fetch(`${ep.rootUrl}/models`);
    expect(models.status).toBe(401);
    expect(a.calls).toHaveLength(0);
  });

  it('a body over the limit, or malformed JSON: 400', async () => {
    const a = open();
    const big = await post(`${ep.episodeUrl(a)}/chat/completions`, chat('x'.repeat(5000)));
    expect(big.status).toBe(400);
    expect(big.error.message).toMatch(/over the limit of 2000 bytes/);
    const bad = await post(`${ep.episodeUrl(a)}/chat/completions`, '{"model": "solver", "messages": [');
    expect(bad).toMatchObject({ status: 400, error: { code: 'malformed_json', message: 'the request body is not valid JSON' } });
    const field = await post(`${ep.episodeUrl(a)}/chat/completions`, JSON.stringify({ model: 'solver', messages: [] }));
    expect(field.status).toBe(400);
    expect(field.error.message).toMatch(/messages/);
  });

  it('a prompt longer than the context: 400 naming both numbers', async () => {
    const a = open();
    const text = 'y'.repeat(POSITIONS);
    const r = await post(`${ep.episodeUrl(a)}/chat/completions`, chat(text));
    expect(r.status).toBe(400);
    // The lab folder's chat template: <bos>, the role marker, one id per character.
    expect(r.error.message).toContain(`${2 + text.length} tokens`);
    expect(r.error.message).toContain(`${POSITIONS} tokens`);
    expect(r.error.code).toBe('context_length_exceeded');
    expect(a.calls).toHaveLength(0); // nothing refused is recorded
  });

  it('an unknown role, or a reward out of range or not finite: 400', async () => {
    const a = open();
    const r = await post(`${ep.episodeUrl(a)}/chat/completions`, chat('hi', 'critic'));
    expect(r).toMatchObject({ status: 400, error: { message: 'unknown model "critic"; the roles are: solver' } });
    expect((await post(`${ep.episodeUrl(a)}/reward`, JSON.stringify({ reward: 101 }))).status).toBe(400);
    expect((await post(`${ep.episodeUrl(a)}/reward`, '{"reward": 1e999}')).status).toBe(400);
    expect((await post(`${ep.episodeUrl(a)}/reward`, JSON.stringify({ events: { solve: 1 } }))).status).toBe(400);
    expect(a.reward).toBeNull();
  });
});

describe('programs that misbehave', () => {
  const tiny = { init: null, modelOverrides: { dModel: 32, nLayers: 1, nHeads: 2, contextLength: CONTEXT } };
  function driver(code: string, options: Record<string, unknown> = {}) {
    const config = presetConfig('external-math-quick', {
      policies: tiny,
      rollout: { maxNewTokens: 6 },
      workflow: { options: { command: ['node', '-e', code], roles: ['solver'], ...options } },
    });
    const logs: string[] = [];
    return { d: new ExternalDriver({ config, policies, baseDir: process.cwd(), log: (l) => logs.push(l) }), logs };
  }
  const episodes = (k: number) => Array.from({ length: k }, (_, g) => new ExternalEpisode(`p${n++}/t0/g${g}`, { id: 'q', question: '1+1', answers: ['2'] }));
  const settings = { temperature: 1, topP: 1, maxNewTokens: 6, seed: 1 };
  /** A program body: read the episodes file, then `body` with `eps` (the lines) and `call(ep)` / `reward(ep, r)`. */
  const program = (body: string) => `
    const fs = require('fs');
    const eps = fs.readFileSync(process.env.SRPO_LAB_EPISODES, 'utf8').trim().split('\\n').map(JSON.parse);
    const h = { Authorization: 'Bearer ' + process.env.OPENAI_API_KEY, 'Content-Type': 'application/json' };
    const call = (ep) => fetch(ep.base_url + '/chat/completions', { method: 'POST', headers: h, body: JSON.stringify({ model: 'solver', messages: [{ role: 'user', content: 'go' }] }) }).then((r) => r.status);
    const reward = (ep, r) => fetch(ep.base_url + '/reward', { method: 'POST', headers: h, body: JSON.stringify({ reward: r }) });
    (async () => { ${body} })();`;

  it('never calls the endpoint: the batch fails, saying why', async () => {
    const { d } = driver(program('process.exit(0);'));
    try {
      await expect(d.play(episodes(2), settings, 'train')).rejects.toThrow(/no episode of the train batch finished \(the program: exit code 0\)/);
    } finally {
      await d.dispose();
    }
  });

  it('hangs: killed at timeoutS; its unfinished episodes are failed and counted, the finished one kept', async () => {
    const { d, logs } = driver(program('await call(eps[0]); await reward(eps[0], 1); console.log("waiting"); setInterval(() => {}, 1000);'), { timeoutS: 2 });
    try {
      const t0 = performance.now();
      const batch = await d.play(episodes(3), settings, 'train');
      expect(performance.now() - t0).toBeLessThan(30_000); // killed, not waited for
      expect(batch.episodes).toHaveLength(1);
      expect(batch.episodes[0].result.events[0].members).toHaveLength(1);
      expect(batch.metrics?.['external/failed_episodes']).toBe(2);
      expect(logs.some((l) => l.includes('killed after the timeout of 2 s'))).toBe(true);
      expect(logs.some((l) => l.endsWith('waiting'))).toBe(true); // stdout goes to the run's log
    } finally {
      await d.dispose();
    }
  });

  it('crashes after some rewards (one by stdout line): the rewarded episodes are kept, the rest counted', async () => {
    const { d } = driver(
      program(
        'await call(eps[0]); await call(eps[1]); await reward(eps[0], 1); console.log(JSON.stringify({ episode: eps[1].episode, reward: 0.5 })); process.exit(3);',
      ),
    );
    try {
      const batch = await d.play(episodes(4), settings, 'train');
      expect(batch.episodes.map((e) => e.result.teamReward)).toEqual([1, 0.5]);
      expect(batch.episodes.map((e) => e.rollout)).toEqual([0, 1]);
      expect(batch.metrics?.['external/failed_episodes']).toBe(2);
    } finally {
      await d.dispose();
    }
  });

  it('floods: at most `concurrency` requests are sampled at once, the rest queue, and every one is answered', async () => {
    const { d } = driver(
      program(
        'const st = await Promise.all(Array.from({ length: 40 }, (_, i) => call(eps[i % 2]))); if (st.some((s) => s !== 200)) process.exit(5); await reward(eps[0], 1); await reward(eps[1], 0);',
      ),
      { concurrency: 3 },
    );
    try {
      const batch = await d.play(episodes(2), settings, 'train');
      expect(batch.metrics?.['external/requests']).toBe(40);
      expect(batch.metrics?.['external/max_concurrent']).toBe(3);
      expect(batch.episodes.reduce((a, e) => a + e.result.calls, 0)).toBe(40);
      expect(batch.metrics?.['external/failed_episodes']).toBe(0);
    } finally {
      await d.dispose();
    }
  });

  it('a stop while the program plays (the engine throws from its before-update check) kills it; the step is abandoned, nothing committed', async () => {
    const hang = program('await call(eps[0]); setInterval(() => {}, 1000);');
    const config = presetConfig('external-math-quick', {
      steps: 1,
      policies: tiny,
      rollout: { tasksPerStep: 1, groupSize: 2, maxNewTokens: 6 },
      eval: { every: 0 },
      workflow: { options: { command: ['node', '-e', hang], roles: ['solver'], timeoutS: 120 } },
    });
    const store = LabStore.open(':memory:');
    const runId = store.createRun({ name: 'stop', preset: 'external-math-quick', config, seed: config.seed, workflow: 'external', algorithm: 'srpo' });
    const t = new Trainer({ config, runDir: mkdtempSync(join(tmpdir(), 'srpo-ext-stop-')), store, runId, baseDir: process.cwd() });
    try {
      const t0 = performance.now();
      let polls = 0;
      await expect(
        t.step(0, (phase) => {
          if (phase === 'before-update' && ++polls >= 4) throw new Error('stop requested');
        }),
      ).rejects.toThrow('stop requested');
      expect(performance.now() - t0).toBeLessThan(60_000); // not the 120 s timeout
      expect(store.committedSteps(runId)).toEqual([]);
    } finally {
      t.dispose();
      store.close();
    }
  });
});
