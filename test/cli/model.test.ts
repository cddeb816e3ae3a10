/**
 * `srpo-lab model info|logprobs|generate` as a user runs them, in-process through runCli, on the
 * fixture folders of test/fixtures/hf: log-probs equal transformers' (expected.json) within 1e-4,
 * greedy generation equals transformers' greedy continuation, info prints the sizes, and bad
 * input gets one clear line and a non-zero exit code (no stack trace).
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/commands';
import type { CliIO } from '../../src/cli/io';
import { NodeForkLauncher } from '../../src/core/host/launcher';
import { readHfConfig } from '../../src/core/models/hf/config';
import { hfParameterCount } from '../../src/core/models/hf/memory';

const FIXTURES = resolve(__dirname, '../fixtures/hf');
const CONFIGS = resolve(__dirname, '../fixtures/hf-configs');
const expectedOf = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name, 'expected.json'), 'utf8'));

async function cli(argv: string[]): Promise<{ code: number; out: string[]; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = { out: (l) => out.push(l), tty: null, launcher: new NodeForkLauncher({ stdio: 'pipe' }), onInterrupt: () => () => {} };
  const code = await runCli(argv, io, (l) => err.push(l));
  return { code, out, err: err.join('\n') };
}

const lastJson = (out: string[]) => JSON.parse(out.at(-1)!);

describe('srpo-lab model logprobs', () => {
  for (const name of ['qwen3-tiny', 'qwen2-tiny', 'llama-tiny-sharded']) {
    it(`${name}: equals transformers' log-probs within 1e-4`, async () => {
      const e = expectedOf(name);
      for (const seq of e.sequences) {
        const r = await cli(['model', 'logprobs', '--model', join(FIXTURES, name), '--ids', seq.ids.join(','), '--json']);
        expect(r.err).toBe('');
        expect(r.code).toBe(0);
        const { logprobs } = lastJson(r.out);
        expect(logprobs).toHaveLength(seq.ids.length - 1);
        for (let i = 0; i < logprobs.length; i++) expect(Math.abs(logprobs[i] - seq.logprobs[i])).toBeLessThan(1e-4);
      }
    });
  }

  it('applies --adapter', async () => {
    const e = expectedOf('qwen3-tiny-lora');
    const seq = e.sequences[0];
    const r = await cli([
      'model',
      'logprobs',
      '--model',
      join(FIXTURES, e.base),
      '--adapter',
      join(FIXTURES, 'qwen3-tiny-lora'),
      '--ids',
      seq.ids.join(','),
      '--json',
    ]);
    expect(r.err).toBe('');
    const { logprobs } = lastJson(r.out);
    for (let i = 0; i < logprobs.length; i++) expect(Math.abs(logprobs[i] - seq.logprobs[i])).toBeLessThan(1e-4);
  });

  it('takes --text through the tokenizer', async () => {
    const e = expectedOf('qwen3-tiny');
    const t = e.tokenizer[0];
    const byText = await cli(['model', 'logprobs', '--model', join(FIXTURES, 'qwen3-tiny'), '--text', t.text, '--json']);
    const byIds = await cli(['model', 'logprobs', '--model', join(FIXTURES, 'qwen3-tiny'), '--ids', t.ids.join(','), '--json']);
    expect(lastJson(byText.out).logprobs).toHaveLength(t.ids.length - 1);
    expect(lastJson(byText.out)).toEqual(lastJson(byIds.out));
  });
});

describe('srpo-lab model generate', () => {
  for (const name of ['qwen3-tiny', 'qwen2-tiny', 'llama-tiny-sharded', 'qwen3-tiny-lora']) {
    it(`${name}: --temperature 0 equals transformers' greedy continuation`, async () => {
      const e = expectedOf(name);
      const model = e.base ? ['--model', join(FIXTURES, e.base), '--adapter', join(FIXTURES, name)] : ['--model', join(FIXTURES, name)];
      const n = e.greedy.ids.length;
      const r = await cli(['model', 'generate', ...model, '--ids', e.greedy.prompt.join(','), '--max-new-tokens', String(n), '--temperature', '0', '--json']);
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      const out = lastJson(r.out);
      expect(out.ids).toEqual(e.greedy.ids);
      expect(typeof out.text).toBe('string');
    });
  }

  it('stops at a stop id of generation_config.json and keeps it in ids, not in text', async () => {
    const e = expectedOf('qwen3-tiny');
    // Sample until some row ends: with temperature 1 and the stop ids 300/302 over a 303-token vocabulary, a seed soon does.
    let found = false;
    for (let seed = 0; seed < 40 && !found; seed++) {
      const r = await cli([
        'model',
        'generate',
        '--model',
        join(FIXTURES, 'qwen3-tiny'),
        '--ids',
        e.greedy.prompt.join(','),
        '--max-new-tokens',
        '24',
        '--temperature',
        '1.5',
        '--top-p',
        '1',
        '--top-k',
        '0',
        '--seed',
        String(seed),
        '--json',
      ]);
      const out = lastJson(r.out);
      for (const id of out.ids) expect(id).toBeLessThan(e.tokenizer_size);
      if (out.stopReason === 'end') {
        found = true;
        expect([300, 302]).toContain(out.ids.at(-1));
        expect(out.ids.slice(0, -1).some((id: number) => id === 300 || id === 302)).toBe(false);
      } else expect(out.ids).toHaveLength(24);
    }
    expect(found).toBe(true);
  });

  it('is reproducible with --seed and renders --chat through the chat template', async () => {
    const args = [
      'model',
      'generate',
      '--model',
      join(FIXTURES, 'qwen3-tiny'),
      '--chat',
      'What is 2 + 3?',
      '--max-new-tokens',
      '6',
      '--temperature',
      '1',
      '--seed',
      '7',
      '--json',
    ];
    const a = lastJson((await cli(args)).out);
    const b = lastJson((await cli(args)).out);
    expect(a).toEqual(b);
    expect(a.ids.length).toBeGreaterThan(0);
  });
});

describe('srpo-lab model info', () => {
  it('prints the sizes of a real config (Qwen3-0.6B, from config.json alone)', async () => {
    const r = await cli(['model', 'info', '--model', join(CONFIGS, 'qwen3-0.6b'), '--lora', '16']);
    expect(r.err).toBe('');
    const text = r.out.join('\n');
    expect(text).toContain('architecture: qwen3');
    expect(text).toContain('(596049920)');
    expect(text).toContain('2.38 GB'); // float32 weights
    expect(text).toContain('LoRA r=16');
    expect(text).toContain('(10092544)'); // peft's count, test/fixtures/hf-configs/expected.json
    expect(text).toContain('KV cache per 1k tokens: 234.9 MB');
    // The minimum by hand: 4 B x (1024 tokens x (28 layers x 61,440 floats + 1024 final-row floats) + 2 x 110 chunk rows x 151,936).
    // Natively the layers' factor is 4.7 instead of 6: 4 B x (1024 x 28 x 61,440 x 4.7 + 8 x 110 x 151,936 + 1024 x 1024) = 33.66 GB.
    expect(text).toMatch(
      /activations per 1k tokens \(training, sequences of 1024\): 42\.82 GB as the lab's tfjs step keeps them on wasm, 33\.66 GB on the native backend \(CPU or GPU\); 7\.18 GB minimum/,
    );
    expect(text).toContain('default 512 MB on wasm, 4096 MB on the native backend');
  });

  it('a vocabulary of 10 million: the minimum stays below the lab figure (the head is chunked in both)', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'model-info-')), 'qwen3-tiny');
    cpSync(join(FIXTURES, 'qwen3-tiny'), dir, { recursive: true });
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...config, vocab_size: 10_000_000 }));
    const r = await cli(['model', 'info', '--model', dir]);
    expect(r.err).toBe('');
    // By hand (hidden 32, q 64, kv 32, intermediate 64, 4 heads, 2 layers, T 1024): per token per layer
    // 6*32 + 3*64 + 4*32 + 4*64 + 2*4*1024 = 8,960 floats; one head chunk = floor(16Mi / 1e7) = 1 row.
    // lab: 4 x (1024 x 2 x 8,960 x 6 + 8 x 1 x 1e7 + 1024 x 32) = 760,532,992 B;
    // minimum: 4 x (1024 x (2 x 8,960 + 32) + 2 x 1 x 1e7) = 153,531,392 B.
    expect(r.out.join('\n')).toMatch(
      /: 760\.5 MB as the lab's tfjs step keeps them on wasm, 665\.1 MB on the native backend \(CPU or GPU\); 153\.5 MB minimum saved for the backward/,
    );
  });

  it('--json carries the numbers', async () => {
    const r = await cli(['model', 'info', '--model', join(FIXTURES, 'qwen2-tiny'), '--json']);
    const info = lastJson(r.out);
    expect(info.architecture).toBe('qwen2');
    expect(info.parameters).toBe(hfParameterCount(readHfConfig(join(FIXTURES, 'qwen2-tiny'))));
    expect(info.weightBytes).toBe(info.parameters * 4);
    expect(info.kvCacheBytesPer1kTokens).toBe(2 * 2 * 1 * 8 * 4 * 1024);
  });
});

describe('srpo-lab model: bad input', () => {
  const model = join(FIXTURES, 'qwen3-tiny');
  const cases: [string, string[], RegExp][] = [
    ['a missing folder', ['model', 'info', '--model', '/nonexistent/m'], /model folder \/nonexistent\/m does not exist/],
    ['a folder without config.json', ['model', 'info', '--model', FIXTURES], /config\.json/],
    ['no subcommand', ['model', '--model', model], /missing subcommand; valid: info, logprobs, generate/],
    ['an unknown subcommand', ['model', 'train', '--model', model], /unknown subcommand "train"/],
    ['no --model', ['model', 'info'], /--model DIR is required/],
    ['ids that are not numbers', ['model', 'logprobs', '--model', model, '--ids', '1,x,3', '--json'], /--ids: entry 2 "x" is not a non-negative integer/],
    [
      'ids outside the vocabulary',
      ['model', 'logprobs', '--model', model, '--ids', '1,303', '--json'],
      /--ids: entry 2 is 303, outside the tokenizer's vocabulary \[0, 303\)/,
    ],
    ['one id only', ['model', 'logprobs', '--model', model, '--ids', '5', '--json'], /at least 2 tokens, got 1/],
    ['two prompt sources', ['model', 'logprobs', '--model', model, '--ids', '1,2', '--text', 'hi'], /exactly one of --ids, --text \(got --ids and --text\)/],
    ['no --max-new-tokens', ['model', 'generate', '--model', model, '--ids', '1,2'], /--max-new-tokens N is required/],
    [
      'a negative temperature',
      ['model', 'generate', '--model', model, '--ids', '1,2', '--max-new-tokens', '2', '--temperature', '-1'],
      /--temperature must be a number/,
    ],
    ['a bad --lora', ['model', 'info', '--model', model, '--lora', 'abc'], /--lora must be an integer >= 1, got "abc"/],
  ];
  for (const [what, argv, pattern] of cases) {
    it(`${what}: one line, exit code 1`, async () => {
      const r = await cli(argv);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/^srpo-lab model: /);
      expect(r.err).toMatch(pattern);
      expect(r.err).not.toMatch(/\n\s+at /); // no stack trace
      expect(r.out).toEqual([]);
    });
  }
});
