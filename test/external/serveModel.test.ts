/**
 * `serve-model`: the endpoint without training, for external harnesses. It prints its URL and key,
 * answers the official openai client at the root URL with the request's own sampling settings
 * (temperature 0 is greedy: the same answer twice; no "not obeyed" header), lists the roles, stops
 * on Ctrl-C; contradictory arguments are refused naming them.
 */
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/commands';
import type { CliIO } from '../../src/cli/io';
import { NodeForkLauncher } from '../../src/core/host/launcher';

function io() {
  const lines: string[] = [];
  let interrupt: (() => void) | null = null;
  const cli: CliIO = {
    out: (l) => lines.push(l),
    tty: null,
    launcher: new NodeForkLauncher({ stdio: 'pipe' }),
    onInterrupt: (h) => {
      interrupt = h;
      return () => (interrupt = null);
    },
  };
  return { cli, lines, interrupt: () => interrupt?.() };
}

async function until<T>(f: () => T | undefined, ms = 60_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('serve-model', () => {
  it("serves a lab checkpoint folder to the openai client with the request's sampling settings; Ctrl-C stops it", async () => {
    const { cli, lines, interrupt } = io();
    const err: string[] = [];
    const done = runCli(['serve-model', '--model', 'resources/warmstart/math-tiny', '--max-tokens', '16'], cli, (l) => err.push(l));
    const baseURL = await until(() => lines.find((l) => l.startsWith('OPENAI_BASE_URL='))?.slice('OPENAI_BASE_URL='.length));
    const apiKey = lines.find((l) => l.startsWith('OPENAI_API_KEY='))!.slice('OPENAI_API_KEY='.length);
    expect(baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
    const ask = () =>
      client.chat.completions
        .create({ model: 'solver', messages: [{ role: 'user', content: 'Problem: 2+3\nSolver 0: solve it. End with \\boxed{answer}.' }], temperature: 0 })
        .withResponse();
    const a = await ask();
    const b = await ask();
    expect(a.data.choices[0].message.content).toBe(b.data.choices[0].message.content); // greedy: obeyed
    expect(a.data.usage!.completion_tokens).toBeLessThanOrEqual(16);
    expect(a.response.headers.get('x-srpo-sampling')).toBeNull();
    expect((await client.models.list()).data.map((m) => m.id)).toContain('verifier');
    const wrong = new OpenAI({ baseURL, apiKey: 'sk-wrong', maxRetries: 0 });
    await expect(wrong.models.list()).rejects.toMatchObject({ status: 401 });
    interrupt();
    expect(await done).toBe(0);
    expect(err).toEqual([]);
  }, 120_000);

  it('refuses contradictory arguments, naming them', async () => {
    const { cli } = io();
    const err: string[] = [];
    expect(await runCli(['serve-model', '--model', 'x', '--run', '1'], cli, (l) => err.push(l))).toBe(1);
    expect(err.join('\n')).toContain('exactly one of --model DIR or --run N');
    err.length = 0;
    expect(await runCli(['serve-model', '--model', 'resources/warmstart/math-tiny', '--step', '3'], cli, (l) => err.push(l))).toBe(1);
    expect(err.join('\n')).toContain('--step and --role go with --run N');
  });
});
