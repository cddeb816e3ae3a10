/**
 * The data layer's one JSONL reader: blank lines skipped (their numbers still count), values of
 * any JSON type, and an error that names the file and the 1-based line of the bad one.
 */
import { describe, expect, it } from 'vitest';
import { parseJsonl, parseJsonlLine } from '../../../src/core/data/jsonl';

describe('parseJsonl', () => {
  it('parses each non-blank line, keeping the line numbers of the text (blank and CRLF lines too)', () => {
    const text = '{"a":1}\n\n  \n[2,3]\r\n"s"\n';
    expect(parseJsonl(text, 'f.jsonl')).toEqual([
      { raw: { a: 1 }, line: 1 },
      { raw: [2, 3], line: 4 },
      { raw: 's', line: 5 },
    ]);
  });
  it('a bad line throws with file:line', () => {
    expect(() => parseJsonl('{"a":1}\n\n{"a":\n', 'data/x.jsonl')).toThrow(/^data\/x\.jsonl:3: invalid JSON: /);
    expect(() => parseJsonlLine('nope', 'c.jsonl:12')).toThrow(/^c\.jsonl:12: invalid JSON: /);
  });
  it('empty text has no records', () => {
    expect(parseJsonl('\n\n', 'e.jsonl')).toEqual([]);
  });
});
