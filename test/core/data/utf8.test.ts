/**
 * Invalid UTF-8 in a data file is refused, naming the file and the line (issue 26, point 9: it
 * silently became U+FFFD, so a dataset saved as Latin-1 trained on replacement characters). The
 * dataset loader (JSONL and JSON list), the corpus loader and both corpus readers (inline and
 * worker, also past the first 8 MiB chunk) say `FILE:LINE: not valid UTF-8 ...` and quote nothing
 * of the line; valid files, a real U+FFFD and a byte order mark included, read as before.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCorpus } from '../../../src/core/data/corpus';
import { CORPUS_READER_NAMES, readPassageBatches } from '../../../src/core/data/corpusReader';
import { loadDatasetFile } from '../../../src/core/data/datasets';
import { decodeUtf8Lines } from '../../../src/core/data/utf8';

const dir = mkdtempSync(join(tmpdir(), 'srpo-utf8-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file from text lines, where `bad` (raw bytes) is spliced into line `badLine` (1-based). */
function fileWith(name: string, lines: string[], badLine: number, bad: number[]): string {
  const parts = lines.map((l, i) => {
    const text = Buffer.from(l, 'utf8');
    if (i + 1 !== badLine) return text;
    const at = text.indexOf('SECRET');
    return Buffer.concat([text.subarray(0, at), Buffer.from(bad), text.subarray(at)]);
  });
  const p = join(dir, name);
  writeFileSync(p, Buffer.concat(parts.flatMap((b) => [b, Buffer.from('\n')])));
  return p;
}

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected an error, got none');
}

const refusal = (p: string, line: number) => `${p}:${line}: not valid UTF-8 (a byte sequence that is no character); save the file as UTF-8`;
const LATIN1_E_ACUTE = [0xe9];

describe('invalid UTF-8 in data files', () => {
  it('a JSONL dataset: refused naming the file and the line, quoting nothing', () => {
    const lines = ['{"question":"1+1","answer":"#### 2"}', '{"question":"2+2","answer":"#### 4"}', '{"question":"caf SECRET","answer":"#### 0"}'];
    const p = fileWith('latin1.jsonl', lines, 3, LATIN1_E_ACUTE);
    const m = errorOf(() => loadDatasetFile(p, 'gsm8k'));
    expect(m).toBe(refusal(p, 3));
    expect(m).not.toMatch(/SECRET|caf/);
  });

  it('a JSON list dataset: the line of the bad byte', () => {
    const lines = ['[', '  {"question":"1+1","answer":"#### 2"},', '  {"question":"SECRET","answer":"#### 3"}', ']'];
    const p = fileWith('list.json', lines, 3, [0xc3, 0x28]); // a lead byte followed by no continuation
    expect(errorOf(() => loadDatasetFile(p))).toBe(refusal(p, 3));
  });

  it('a corpus: loadCorpus and both readers give the same refusal, also past the first 8 MiB chunk', () => {
    const line = (i: number) => JSON.stringify({ id: `p${i}`, title: `t${i}`, text: `passage ${i} ${'x'.repeat(90)}` });
    const small = fileWith('corpus.jsonl', [line(0), line(1), line(2), '{"id":"p3","text":"SECRET"}'], 4, [0xed, 0xa0, 0x80]); // a UTF-16 surrogate
    expect(errorOf(() => loadCorpus(small))).toBe(refusal(small, 4));
    const n = 90_000; // ~10 MB: the bad line is in the second chunk
    const big = fileWith('big.jsonl', [...Array.from({ length: n }, (_, i) => line(i)), '{"id":"last","text":"SECRET"}'], n + 1, LATIN1_E_ACUTE);
    for (const reader of CORPUS_READER_NAMES) {
      expect(errorOf(() => readPassageBatches(small, () => undefined, reader))).toBe(refusal(small, 4));
      expect(errorOf(() => readPassageBatches(big, () => undefined, reader))).toBe(refusal(big, n + 1));
    }
  });

  it('valid text reads as before: a real U+FFFD, a byte order mark, multi-byte characters', () => {
    const text = '\uFEFF{"a":"\uFFFD é 漢字 😀"}\n';
    expect(decodeUtf8Lines(Buffer.from(text, 'utf8'), 'f')).toBe(Buffer.from(text, 'utf8').toString('utf8'));
    const p = join(dir, 'ok.jsonl');
    writeFileSync(p, '{"question":"café 😀 \uFFFD","answer":"#### 1"}\n');
    expect(loadDatasetFile(p, 'gsm8k').rows[0].question).toBe('café 😀 \uFFFD');
  });

  it('each kind of invalid sequence, and the line count carried across chunks', () => {
    const cases: [number[], string][] = [
      [[0xc0, 0x80], 'overlong'],
      [[0xf5, 0x80, 0x80, 0x80], 'beyond U+10FFFF'],
      [[0x80], 'a lone continuation byte'],
      [[0xe2, 0x82], 'cut short at the end'],
    ];
    for (const [bytes, what] of cases) {
      const b = Buffer.concat([Buffer.from('ok\nok\n'), Buffer.from(bytes)]);
      expect(
        errorOf(() => decodeUtf8Lines(b, 'f.jsonl', 10)),
        what,
      ).toBe(refusal('f.jsonl', 13));
    }
  });
});
