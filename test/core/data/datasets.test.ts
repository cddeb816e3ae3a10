/**
 * Dataset loaders on every published file in ../shared/data (row counts from its README,
 * fields, detected formats) and on small malformed files written here (errors name the file
 * and line; nothing is half-imported).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectFormat, loadCorpus, loadDataset, type DatasetFormat } from '../../../src/core/data';
import { HAS_SHARED_DATA, sharedPath } from './sharedData';

const FILES: { file: string; rows: number; format: DatasetFormat }[] = [
  { file: 'math/math500.jsonl', rows: 500, format: 'math' },
  { file: 'math/aime24.jsonl', rows: 30, format: 'math' },
  { file: 'math/aime25.jsonl', rows: 30, format: 'math' },
  { file: 'math/amc23.jsonl', rows: 40, format: 'math' },
  { file: 'math/gsm8k_test.jsonl', rows: 1319, format: 'gsm8k' },
  { file: 'qa/nq_open_dev.jsonl', rows: 3610, format: 'nq' },
  { file: 'qa/hotpotqa_500.jsonl', rows: 500, format: 'qa' },
  { file: 'qa/bamboogle.jsonl', rows: 125, format: 'qa' },
  { file: 'corpus/hotpotqa_mini_questions.json', rows: 100, format: 'hotpot' },
];

describe.skipIf(!HAS_SHARED_DATA)('loadDataset on ../shared/data', () => {
  for (const { file, rows, format } of FILES) {
    it(`${file}: ${rows} rows, detected as ${format}, every row complete`, () => {
      const data = loadDataset(sharedPath(file));
      expect(data.length).toBe(rows);
      expect(loadDataset(sharedPath(file), format).length).toBe(rows);
      const ids = new Set(data.map((r) => r.id));
      expect(ids.size).toBe(rows);
      for (const r of data) {
        expect(r.question.length).toBeGreaterThan(0);
        expect(r.answers.length).toBeGreaterThan(0);
        for (const a of r.answers) expect(a.trim().length).toBeGreaterThan(0);
        expect(r.benchmark).toBe(file.split('/')[1].replace(/\.jsonl?$/, ''));
      }
    });
  }

  it('AMC floats become integer text, GSM8K keeps only the number after ####, NQ keeps all aliases', () => {
    const amc = loadDataset(sharedPath('math/amc23.jsonl'));
    expect(amc[0].answers).toEqual(['27']); // published as 27.0
    const gsm = loadDataset(sharedPath('math/gsm8k_test.jsonl'));
    expect(gsm[0].answers).toEqual(['18']);
    expect(String(gsm[0].meta.solution)).toContain('#### 18');
    const nq = loadDataset(sharedPath('qa/nq_open_dev.jsonl'));
    expect(nq[0].answers).toEqual(['14 December 1972 UTC', 'December 1972']);
  });

  it('AIME answers stay strings with their leading zeros; MATH500 keeps solution and level in meta', () => {
    const aime = loadDataset(sharedPath('math/aime24.jsonl'));
    expect(aime.some((r) => r.answers[0] === '025')).toBe(true);
    const m = loadDataset(sharedPath('math/math500.jsonl'));
    expect(m[0].meta).toHaveProperty('solution');
    expect(m[0].meta).toHaveProperty('level');
  });

  it('HotpotQA distractor rows carry their gold supporting titles', () => {
    const h = loadDataset(sharedPath('corpus/hotpotqa_mini_questions.json'));
    for (const r of h) expect((r.meta.supportingTitles as string[]).length).toBeGreaterThanOrEqual(1);
  });

  it('corpora: 2Wiki list of {title, text} and the HotpotQA title -> sentences object', () => {
    const wiki = loadCorpus(sharedPath('corpus/2wiki_corpus.json'));
    expect(wiki.length).toBe(6119);
    expect(wiki[0].title).toBe('Teutberga');
    const hp = loadCorpus(sharedPath('corpus/hotpotqa_mini_corpus.json'));
    expect(hp.length).toBe(994);
    expect(hp[0].title).toBe('Demon Dice');
    expect(hp[0].text.startsWith('Demon Dice, originally published')).toBe(true);
  });
});

describe('loadDataset on small files written here', () => {
  const dir = mkdtempSync(join(tmpdir(), 'srpo-data-'));
  const write = (name: string, body: string): string => {
    const p = join(dir, name);
    writeFileSync(p, body);
    return p;
  };

  it('FlashRAG / Search-R1 shape {id, question, golden_answers}', () => {
    const p = write(
      'nq_flash.jsonl',
      '{"id":"test_0","question":"who?","golden_answers":["A","B"]}\n{"id":"test_1","question":"what?","golden_answers":["C"]}\n',
    );
    const rows = loadDataset(p);
    expect(rows.map((r) => [r.id, r.answers])).toEqual([
      ['test_0', ['A', 'B']],
      ['test_1', ['C']],
    ]);
    expect(rows[0].benchmark).toBe('nq_flash');
  });

  it('a malformed line is an error naming the file and line, and nothing is returned', () => {
    const bad = write('bad.jsonl', '{"question":"q1","answer":["a"]}\n{"question":"q2","answer":["b"]}\n{"question":"q3","answer":[]}\n');
    expect(() => loadDataset(bad)).toThrow(/bad\.jsonl:3: nq record: field "answer"/);
    const broken = write('broken.jsonl', '{"question":"q1","answer":"a"}\n{"question": oops}\n');
    expect(() => loadDataset(broken)).toThrow(/broken\.jsonl:2: invalid JSON/);
  });

  it('a record of another format is an error, not a silent mix', () => {
    const mixed = write('mixed.jsonl', '{"problem":"1+1","answer":"2"}\n{"question":"q","answer":"a"}\n');
    expect(() => loadDataset(mixed)).toThrow(/mixed\.jsonl:2: math record: field "problem" = missing/);
  });

  it('an undetectable file asks for a format; an unknown format lists the valid ones', () => {
    const odd = write('odd.jsonl', '{"foo":1}\n');
    expect(() => loadDataset(odd)).toThrow(/cannot detect the dataset format; pass one of: math, gsm8k/);
    expect(() => loadDataset(odd, 'nope' as DatasetFormat)).toThrow(/unknown dataset format "nope"; valid formats:/);
  });

  it('detectFormat tells the shapes apart', () => {
    expect(detectFormat({ question: 'q', answer: 'x\n#### 5' }, false)).toBe('gsm8k');
    expect(detectFormat({ question: 'q', answer: 'Paris' }, false)).toBe('qa');
    expect(detectFormat({ question: 'q', answer: ['Paris'] }, false)).toBe('nq');
    expect(detectFormat({ problem: 'p', answer: 27.0 }, false)).toBe('math');
    expect(detectFormat(42, false)).toBeNull();
  });

  it('corpus JSONL, including FlashRAG "contents"', () => {
    const p = write('c.jsonl', '{"id":"1","contents":"\\"Paris\\"\\nParis is the capital of France."}\n{"title":"Lyon","text":"Lyon is a city."}\n');
    expect(loadCorpus(p)).toEqual([
      { id: '1', title: 'Paris', text: 'Paris is the capital of France.' },
      { id: 'p1', title: 'Lyon', text: 'Lyon is a city.' },
    ]);
    const bad = write('cbad.jsonl', '{"title":"x"}\n');
    expect(() => loadCorpus(bad)).toThrow(/cbad\.jsonl:1: a passage needs "text"/);
  });
});
