/**
 * The character vocabulary's ids (models/vocab.ts): lab folders write them as their tokenizer.json
 * and runs recorded before issue 29 decode with them, so they must not move. Expected values are
 * written out here, not derived from the module. How a lab folder's tokenizer encodes with them:
 * test/core/models/hf/labFolder.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { CHAR_VOCAB_SIZE, CHARACTERS, ROLES, SPECIAL_TOKENS } from '../../../src/core/models/vocab';

describe('the character vocabulary', () => {
  it('has 108 tokens: 12 specials, then newline and printable ASCII', () => {
    expect(CHAR_VOCAB_SIZE).toBe(108);
    expect(SPECIAL_TOKENS).toHaveLength(12);
    expect(CHARACTERS).toHaveLength(96);
  });

  it('keeps the special tokens in their recorded id order, <pad> first', () => {
    expect([...SPECIAL_TOKENS]).toEqual([
      '<pad>',
      '<bos>',
      '<eos>',
      '<unk>',
      '<user>',
      '<obs>',
      '<router>',
      '<solver>',
      '<verifier>',
      '<aggregator>',
      '<searcher>',
      '<answerer>',
    ]);
  });

  it('has a marker for every role', () => {
    for (const r of ROLES) expect(SPECIAL_TOKENS).toContain(`<${r}>`);
  });

  it('puts newline at id 12, space at 13, "A" at 46 and "~" at 107', () => {
    const id = (c: string) => SPECIAL_TOKENS.length + CHARACTERS.indexOf(c);
    expect(id('\n')).toBe(12);
    expect(id(' ')).toBe(13);
    expect(id('A')).toBe(46);
    expect(id('~')).toBe(107);
  });

  it('has no tab and nothing outside ASCII, and no token twice', () => {
    expect(CHARACTERS).not.toContain('\t');
    expect(CHARACTERS.every((c) => c.length === 1 && c.charCodeAt(0) < 127)).toBe(true);
    expect(new Set([...SPECIAL_TOKENS, ...CHARACTERS]).size).toBe(108);
  });
});
