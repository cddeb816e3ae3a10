import { describe, expect, it } from 'vitest';
import { CHAR_VOCAB_SIZE, CharTokenizer, ROLES } from '../../../src/core/models/tokenizer';

describe('CharTokenizer', () => {
  const tok = new CharTokenizer();

  it('round-trips printable ASCII and newlines', () => {
    const text = 'Hello, world!\n  x = [1, 2]; {"a": ~`|\\}';
    expect(tok.decode(tok.encode(text))).toBe(text);
    expect(tok.encode(text)).toHaveLength(text.length);
  });

  it('has pad 0, distinct specials, and 108 tokens', () => {
    expect(tok.padId).toBe(0);
    expect(new Set([tok.padId, tok.bosId, tok.eosId, tok.unkId]).size).toBe(4);
    expect(tok.vocabSize).toBe(CHAR_VOCAB_SIZE);
    expect(tok.vocabSize).toBe(108);
  });

  it('reads special-token names as one token each, unless told not to', () => {
    const ids = tok.encode('<solver>hi<eos>');
    expect(ids).toEqual([tok.roleId('solver'), tok.id('h'), tok.id('i'), tok.eosId]);
    expect(tok.encode('<solver>', { special: false })).toHaveLength(8);
    expect(tok.encode('<notatoken>')).toHaveLength(11);
  });

  it('has a marker for every role and for user and observation text', () => {
    for (const r of ROLES) expect(tok.isSpecial(tok.roleId(r))).toBe(true);
    expect(tok.isSpecial(tok.id('<user>'))).toBe(true);
    expect(tok.isSpecial(tok.id('<obs>'))).toBe(true);
  });

  it('maps unknown characters (tab, non-ASCII) to <unk>', () => {
    expect(tok.encode('a\tb\u00e9')).toEqual([tok.id('a'), tok.unkId, tok.id('b'), tok.unkId]);
  });

  it('skips specials on request and rejects ids outside the vocabulary', () => {
    expect(tok.decode([tok.bosId, tok.id('a'), tok.eosId], { skipSpecial: true })).toBe('a');
    expect(() => tok.decode([500])).toThrow(/outside the vocabulary/);
  });

  it('survives toJSON/fromJSON through a string and refuses a different token list', () => {
    const back = CharTokenizer.fromJSON(JSON.parse(JSON.stringify(tok.toJSON())));
    expect(back.tokens).toEqual(tok.tokens);
    const bad = tok.toJSON();
    bad.tokens[20] = 'Z';
    expect(() => CharTokenizer.fromJSON(bad, 'ck/tokenizer.json')).toThrow(/ck\/tokenizer.json: token list differs .* id 20/);
    expect(() => CharTokenizer.fromJSON({ kind: 'bpe' })).toThrow(/not a char tokenizer/);
  });
});
