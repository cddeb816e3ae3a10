/**
 * The formats the paper's other benchmarks are published in, on small files written here in
 * each community's shape (Minerva, OlympiadBench, TriviaQA, PopQA, 2Wiki, MuSiQue) and on the
 * committed verl parquet fixtures (scripts/fixtures/make_parquet_fixture.py): detection, gold
 * answers, the paragraphs multi-hop records bring, the split filter, and errors that name the
 * file and the line (or row) with nothing returned.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectFormat, loadDataset, loadDatasetFile } from '../../../src/core/data';

const dir = mkdtempSync(join(tmpdir(), 'srpo-formats-'));
const write = (name: string, lines: unknown[]): string => {
  const p = join(dir, name);
  writeFileSync(p, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  return p;
};
const FIXTURES = resolve(__dirname, '../../fixtures/data');

describe('new dataset formats', () => {
  it('Minerva: the gold is the last \\boxed{} of the solution, nested braces kept', () => {
    const p = write('minerva.jsonl', [
      { problem: 'Compute x.', solution: 'First \\boxed{1}, then finally $x = \\boxed{\\frac{1}{2}}$.', type: 'Physics', idx: 0 },
      { problem: 'Compute y.', solution: 'So y is \\boxed{3 \\times 10^{8}}', type: 'Physics', idx: 1 },
    ]);
    const f = loadDatasetFile(p);
    expect(f.format).toBe('minerva');
    expect(f.domain).toBe('math');
    expect(f.rows.map((r) => r.answers)).toEqual([['\\frac{1}{2}'], ['3 \\times 10^{8}']]);
    const bad = write('minerva_bad.jsonl', [{ problem: 'a', solution: 'no box here' }]);
    expect(() => loadDataset(bad, 'minerva')).toThrow(/minerva_bad\.jsonl:1: minerva record: field "solution".*no complete \\boxed/);
  });

  it('OlympiadBench: final_answer without $...$, several answers joined when is_multiple_answer', () => {
    const p = write('olympiad.jsonl', [
      { id: 1606, question: 'Find a.', final_answer: ['$\\frac{3}{4}$'], is_multiple_answer: false, unit: null, answer_type: 'Numerical' },
      { id: 1607, question: 'Find all n.', final_answer: ['$2$', '$5$'], is_multiple_answer: true, unit: null },
    ]);
    const f = loadDatasetFile(p);
    expect(f.format).toBe('olympiad');
    expect(f.rows.map((r) => [r.id, r.answers[0]])).toEqual([
      ['1606', '\\frac{3}{4}'],
      ['1607', '2, 5'],
    ]);
  });

  it('TriviaQA: value first, then its aliases, repeats dropped', () => {
    const p = write('trivia.jsonl', [
      {
        question: 'Who?',
        question_id: 'tc_1',
        answer: { value: 'Sinclair Lewis', aliases: ['Sinclair Lewis', 'Harry Sinclair Lewis'], normalized_value: 'sinclair lewis' },
      },
    ]);
    const f = loadDatasetFile(p);
    expect(f.format).toBe('triviaqa');
    expect(f.rows[0]).toMatchObject({ id: 'tc_1', answers: ['Sinclair Lewis', 'Harry Sinclair Lewis'] });
  });

  it('PopQA: possible_answers as a list or as its JSON text (the Hugging Face release)', () => {
    const p = write('popqa.jsonl', [
      {
        id: 4222362,
        subj: 'George Rankin',
        prop: 'occupation',
        question: "What is George Rankin's occupation?",
        possible_answers: '["politician", "political leader"]',
      },
      { id: 7, question: 'Where?', possible_answers: ['Paris'] },
    ]);
    const f = loadDatasetFile(p);
    expect(f.format).toBe('popqa');
    expect(f.rows.map((r) => r.answers)).toEqual([['politician', 'political leader'], ['Paris']]);
    const bad = write('popqa_bad.jsonl', [
      { id: 1, question: 'q', possible_answers: '["a"]' },
      { id: 2, question: 'q', possible_answers: 'not json' },
    ]);
    expect(() => loadDatasetFile(bad)).toThrow(/popqa_bad\.jsonl:2: popqa record: field "possible_answers" is text that is not a JSON list/);
  });

  it('2Wiki (JSON list): answer and aliases, supporting titles, and its paragraphs as a corpus', () => {
    const p = join(dir, '2wiki_dev.json');
    writeFileSync(
      p,
      JSON.stringify([
        {
          _id: 'a1',
          type: 'compositional',
          question: 'Who is the father of the director of Film X?',
          context: [
            ['Film X', ['Film X is a film ', 'directed by Ann.']],
            ['Ann', ['Ann is the daughter of Bob.']],
          ],
          supporting_facts: [
            ['Film X', 1],
            ['Ann', 0],
          ],
          evidences: [['Film X', 'director', 'Ann']],
          answer: 'Bob',
          answer_aliases: ['Robert'],
        },
      ]),
    );
    const f = loadDatasetFile(p);
    expect(f.format).toBe('2wiki');
    expect(f.rows[0].answers).toEqual(['Bob', 'Robert']);
    expect(f.rows[0].meta.supportingTitles).toEqual(['Film X', 'Ann']);
    expect(f.passages.map((x) => [x.title, x.text])).toEqual([
      ['Film X', 'Film X is a film directed by Ann.'],
      ['Ann', 'Ann is the daughter of Bob.'],
    ]);
  });

  it('MuSiQue: answer + answer_aliases; paragraphs deduplicated across questions', () => {
    const para = { idx: 0, title: 'Lyon', paragraph_text: 'Lyon is in France.', is_supporting: true };
    const p = write('musique.jsonl', [
      {
        id: '2hop__1',
        paragraphs: [para, { idx: 1, title: 'Oslo', paragraph_text: 'Oslo is in Norway.', is_supporting: false }],
        question: 'Q1?',
        answer: 'France',
        answer_aliases: ['French Republic'],
        answerable: true,
      },
      { id: '2hop__2', paragraphs: [para], question: 'Q2?', answer: 'Lyon', answer_aliases: [], answerable: true },
    ]);
    const f = loadDatasetFile(p);
    expect(f.format).toBe('musique');
    expect(f.rows.map((r) => r.answers)).toEqual([['France', 'French Republic'], ['Lyon']]);
    expect(f.rows[0].meta.supportingTitles).toEqual(['Lyon']);
    expect(f.passages).toHaveLength(2);
  });

  it('detection tells the new shapes from the old ones', () => {
    expect(detectFormat({ problem: 'p', solution: '\\boxed{1}' }, 'lines')).toBe('minerva');
    expect(detectFormat({ problem: 'p', solution: '\\boxed{1}', answer: '1' }, 'lines')).toBe('math');
    expect(detectFormat({ question: 'q', final_answer: ['1'] }, 'lines')).toBe('olympiad');
    expect(detectFormat({ question: 'q', answer: { value: 'v', aliases: [] } }, 'lines')).toBe('triviaqa');
    expect(detectFormat({ question: 'q', possible_answers: '["a"]' }, 'lines')).toBe('popqa');
    expect(detectFormat({ question: 'q', paragraphs: [] }, 'lines')).toBe('musique');
    expect(detectFormat({ data_source: 'nq', reward_model: {} }, 'table')).toBe('verl');
    expect(detectFormat({ _id: 'x', question: 'q', answer: 'a', supporting_facts: [], context: [] }, true)).toBe('hotpot');
  });
});

describe("verl's parquet layout (committed fixtures)", () => {
  it('DAPO-Math shape: ground_truth string, question from extra_info, math domain, INT64 index as a number', () => {
    const f = loadDatasetFile(join(FIXTURES, 'verl_math_tiny.parquet'));
    expect(f.format).toBe('verl');
    expect(f.domain).toBe('math');
    expect(f.rows.map((r) => [r.id, r.question, r.answers])).toEqual([
      ['verl_math_tiny-0', 'What is 2+3?', ['5']],
      ['verl_math_tiny-1', 'What is 7*6?', ['42']],
    ]);
    expect(f.rows[0].meta.index).toBe(0);
    expect(JSON.stringify(f.rows)).toContain('math_dapo'); // JSON-safe: no BigInt left
  });

  it('Search-R1 shape: ground_truth {target: [aliases]}, the question taken from the prompt, qa domain', () => {
    const f = loadDatasetFile(join(FIXTURES, 'verl_qa_tiny.parquet'));
    expect(f.domain).toBe('qa');
    expect(f.rows.map((r) => [r.question, r.answers])).toEqual([
      ['who wrote hamlet?', ['William Shakespeare', 'Shakespeare']],
      ['capital of france?', ['Paris']],
    ]);
  });

  it('split keeps the rows of one split; an absent split is an error', () => {
    expect(loadDataset(join(FIXTURES, 'verl_qa_tiny.parquet'), undefined, { split: 'test' }).map((r) => r.answers[0])).toEqual(['Paris']);
    expect(() => loadDataset(join(FIXTURES, 'verl_qa_tiny.parquet'), undefined, { split: 'dev' })).toThrow(/verl_qa_tiny\.parquet: no row has split "dev"/);
  });

  it('a parquet row of another format is an error naming the file and row; a broken file names the file', () => {
    expect(() => loadDataset(join(FIXTURES, 'verl_qa_tiny.parquet'), 'math')).toThrow(
      /format "math" is read from one JSON object per line, not a parquet table/,
    );
    const broken = join(dir, 'broken.parquet');
    writeFileSync(broken, 'PAR1 this is not a parquet file');
    expect(() => loadDataset(broken)).toThrow(/broken\.parquet: cannot read parquet/);
  });

  it('verl rows as JSONL load the same way', () => {
    const p = write('verl.jsonl', [
      {
        data_source: 'x',
        prompt: [{ role: 'user', content: 'Question: q1' }],
        ability: 'qa',
        reward_model: { ground_truth: { target: 'a1' } },
        extra_info: { index: 3 },
      },
    ]);
    expect(loadDataset(p)).toMatchObject([{ id: 'verl-3', question: 'q1', answers: ['a1'] }]);
  });
});

describe('a malformed record anywhere refuses the whole file', () => {
  it('a missing field on the last line names file and line; nothing is returned', () => {
    const rows = Array.from({ length: 50 }, (_, i) => ({ question: `q${i}`, answer: { value: `a${i}`, aliases: [] } }));
    const p = write('trivia_bad.jsonl', [...rows, { question: 'q50', answer: { aliases: ['x'] } }]);
    let result: unknown = 'unset';
    expect(() => {
      result = loadDataset(p);
    }).toThrow(/trivia_bad\.jsonl:51: triviaqa record: field "answer\.value" = missing/);
    expect(result).toBe('unset');
  });

  it('one file holds one domain', () => {
    const p = write('verl_mixed.jsonl', [
      { data_source: 'x', prompt: [{ role: 'user', content: 'q' }], reward_model: { ground_truth: '5' } },
      { data_source: 'x', prompt: [{ role: 'user', content: 'q' }], reward_model: { ground_truth: { target: ['a'] } } },
    ]);
    expect(() => loadDataset(p)).toThrow(/verl_mixed\.jsonl:2: a qa record in a file whose first record is math/);
  });
});
