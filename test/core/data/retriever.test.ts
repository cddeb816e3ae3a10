/**
 * BM25 retriever (SQLite FTS5): recall@k on the HotpotQA mini corpus against each question's
 * gold supporting titles, index reuse by content hash (memory and file), and query
 * sanitisation (FTS5 syntax in queries never throws).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Bm25Retriever, loadCorpus, loadDataset, toFtsQuery, type Passage } from '../../../src/core/data';
import { HAS_SHARED_DATA, sharedPath } from './sharedData';

const tiny: Passage[] = [
  { id: 'a', title: 'Tellmar', text: 'Tellmar is a city in Orvania.' },
  { id: 'b', title: 'Zarvo Quill', text: 'Zarvo Quill was born in Tellmar. Zarvo Quill works for Brightcog.' },
  { id: 'c', title: 'Brightcog', text: 'Brightcog is a company based in Pellin.' },
];

describe('Bm25Retriever', () => {
  it('ranks the passage that names the entity first', () => {
    const r = Bm25Retriever.open(tiny);
    expect(r.search('Where was Zarvo Quill born?', 1)[0].id).toBe('b');
    expect(r.search('Which country is Tellmar in?', 3)[0].id).toBe('a');
    const hits = r.search('Brightcog', 3);
    expect(hits[0].id).toBe('c');
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1].score).toBeGreaterThanOrEqual(hits[i].score);
  });

  it('builds the index once per corpus content and reuses it (memory and file)', () => {
    const corpus = tiny.map((p) => ({ ...p, text: `${p.text} (reuse test)` }));
    expect(Bm25Retriever.open(corpus).built).toBe(true);
    expect(Bm25Retriever.open(corpus).built).toBe(false);
    const changed = [...corpus, { id: 'd', title: 'New', text: 'new text' }];
    expect(Bm25Retriever.open(changed).built).toBe(true);

    const dbPath = join(mkdtempSync(join(tmpdir(), 'srpo-ret-')), 'index.sqlite');
    const first = Bm25Retriever.open(corpus, { dbPath });
    expect(first.built).toBe(true);
    first.close();
    const second = Bm25Retriever.open(corpus, { dbPath });
    expect(second.built).toBe(false);
    expect(second.search('Zarvo', 1)[0].id).toBe('b');
    second.close();
  });

  it('FTS5 syntax in query text is neutralised, never an error', () => {
    const r = Bm25Retriever.open(tiny);
    const hostile = ['"', 'a AND', 'NEAR(x y)', '*', 'title:Tellmar', '-Tellmar', '(((', 'OR OR', "'; DROP TABLE corpora; --", '', '   ', '^Zarvo', '\u0000'];
    for (const q of hostile) expect(() => r.search(q, 5)).not.toThrow();
    expect(r.search('title:Tellmar', 1)[0].id).toBe('a');
    expect(toFtsQuery('the of and')).toBeNull();
    expect(toFtsQuery('Zarvo "Quill"')).toBe('"zarvo" OR "quill"');
    expect(r.search('Zarvo', 0)).toEqual([]);
  });
});

describe.skipIf(!HAS_SHARED_DATA)('recall@k on the HotpotQA mini corpus (../shared/data/corpus)', () => {
  it('recall@2 >= 0.5, recall@5 >= 0.7, recall@10 >= 0.8 of gold supporting titles', () => {
    const corpus = loadCorpus(sharedPath('corpus/hotpotqa_mini_corpus.json'));
    const questions = loadDataset(sharedPath('corpus/hotpotqa_mini_questions.json'));
    const titles = new Set(corpus.map((p) => p.title));
    const r = Bm25Retriever.open(corpus);
    const floors: Record<number, number> = { 2: 0.5, 5: 0.7, 10: 0.8 };
    const report: string[] = [];
    for (const k of [2, 5, 10]) {
      let recall = 0;
      let allFound = 0;
      for (const q of questions) {
        const gold = q.meta.supportingTitles as string[];
        for (const g of gold) expect(titles.has(g)).toBe(true); // the corpus holds every gold title
        const got = new Set(r.search(q.question, k).map((h) => h.title));
        const found = gold.filter((g) => got.has(g)).length;
        recall += found / gold.length;
        if (found === gold.length) allFound++;
      }
      recall /= questions.length;
      report.push(`recall@${k} = ${recall.toFixed(3)} (all gold titles found: ${(allFound / questions.length).toFixed(2)})`);
      expect(recall).toBeGreaterThanOrEqual(floors[k]);
    }
    console.log(`BM25 (FTS5) on hotpotqa_mini, ${questions.length} questions, ${corpus.length} passages: ${report.join('; ')}`);
  });
});
