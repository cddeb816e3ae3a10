/**
 * A dataset or corpus error never quotes the file (issue 26: a run started on /etc/shadow failed
 * with `invalid JSON: Unexpected token 'r', "root:$6$SE"... is not valid JSON`, V8's message
 * carrying the file's first bytes). Each loader's error names the file, the line (or item, and
 * column) and what was expected instead, and none of the secret text planted in the file.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCorpus } from '../../../src/core/data/corpus';
import { readPassageBatches } from '../../../src/core/data/corpusReader';
import { loadDatasetFile } from '../../../src/core/data/datasets';
import { jsonSyntaxText, parseJsonlLine } from '../../../src/core/data/jsonl';

const dir = mkdtempSync(join(tmpdir(), 'srpo-dataerr-'));
const write = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

/** The error a call throws, as text. */
function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected an error, got none');
}

const SECRET = /SECRET|root:|\$6\$/;

describe('loader errors name the place and what was expected, never the contents', () => {
  it('a shadow-like first line: the file and line, no bytes of it', () => {
    const p = write('shadow', 'root:$6$SECRETSALT$SECRETHASH:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n');
    const m = errorOf(() => loadDatasetFile(p));
    expect(m).toMatch(new RegExp(`^${p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:1: invalid JSON: not JSON: expected an object`));
    expect(m).not.toMatch(SECRET);
  });

  it('positioned JSON errors say the line and column and what was expected', () => {
    expect(errorOf(() => parseJsonlLine('{"SECRET_KEY" 1}', 'f.jsonl:4'))).toBe("f.jsonl:4: invalid JSON: expected ':' after property name at column 15");
    expect(errorOf(() => parseJsonlLine('{"a":"SECRET', 'f.jsonl:2'))).toMatch(/^f\.jsonl:2: invalid JSON: unterminated string at column 13$/);
    expect(errorOf(() => parseJsonlLine('{"a":tru}', 'f.jsonl:1'))).toMatch(/not JSON: expected/);
    expect(errorOf(() => parseJsonlLine('', 'f.jsonl:1'))).toMatch(/ends inside a value/);
    const list = write('list.json', '[\n  {"question": "SECRET_Q", "answer": "1"},\n  {"question" "SECRET_R"}\n]');
    const m = errorOf(() => loadDatasetFile(list));
    expect(m).toMatch(/list\.json: invalid JSON: expected ':' after property name at line 3, column 15/);
    expect(m).not.toMatch(SECRET);
  });

  it('a record of the wrong shape names the field and what it must be, not its value', () => {
    const p = write('gsm.jsonl', '{"question":"q1","answer":"#### 2"}\n{"question":["SECRET_IN_A_LIST"],"answer":"#### 3"}\n');
    const m = errorOf(() => loadDatasetFile(p, 'gsm8k'));
    expect(m).toMatch(/gsm\.jsonl:2: gsm8k record: field "question": must be text, not a list/);
    expect(m).not.toMatch(SECRET);
  });

  it('a duplicate id names where it first appeared, not the id', () => {
    const p = write('dup.jsonl', '{"id":"SECRET_ID","question":"q","answer":"a"}\n{"id":"SECRET_ID","question":"r","answer":"b"}\n');
    const m = errorOf(() => loadDatasetFile(p));
    expect(m).toBe(`${p}:2: duplicate id (the same as ${p}:1)`);
  });

  it('popqa answers that are not a JSON list: what was expected, not the text', () => {
    const p = write('popqa.jsonl', '{"id":1,"question":"q","possible_answers":"[\\"SECRET_ANSWER"}\n');
    const m = errorOf(() => loadDatasetFile(p));
    expect(m).toMatch(/popqa\.jsonl:1: popqa record: field "possible_answers" is text that is not a JSON list \(/);
    expect(m).not.toMatch(SECRET);
  });

  it('corpora: the whole-file reader and both streaming readers', () => {
    const list = write('corpus.json', '[{"text":"SECRET_PASSAGE"}, SECRET_BARE]');
    const m = errorOf(() => loadCorpus(list));
    expect(m).toMatch(/corpus\.json: invalid JSON: not JSON/);
    expect(m).not.toMatch(SECRET);
    const lines = write('corpus.jsonl', '{"id":1,"text":"a"}\n{"id":2,"text":"SECRET_B\n');
    for (const reader of ['inline', 'worker'] as const) {
      const r = errorOf(() => readPassageBatches(lines, () => undefined, reader));
      expect(r, reader).toMatch(/corpus\.jsonl:2: invalid JSON: /);
      expect(r, reader).not.toMatch(SECRET);
    }
  });

  it('jsonSyntaxText never carries the text it was given, whatever V8 says', () => {
    for (const text of ['SECRET', '"SECRET', '{"SECRET":}', '[SECRET]', 'tSECRET', '{"a":1}SECRET', '\u0000SECRET']) {
      let err: unknown;
      try {
        JSON.parse(text);
      } catch (e) {
        err = e;
      }
      expect(jsonSyntaxText(err, text)).not.toMatch(SECRET);
    }
  });
});
