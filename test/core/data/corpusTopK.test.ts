/**
 * The pruned bm25 top-k of a corpus index (src/core/data/corpusTopK.ts, corpusTerms.ts) against
 * the plain FTS5 query it stands in for (CorpusIndex.searchPlain): on a seeded synthetic corpus
 * with a Zipf-like vocabulary (the shape bench/corpus.bench.ts writes), punctuation, and a few
 * passages of accented and non-Latin words, hundreds of random queries mixing frequent, mid and rare words,
 * repeated words, stopwords, accents, words absent from the corpus and empty queries, for k in
 * {1, 3, 5, 10, 50}, give the same passages in the same order with bit-equal scores. Also: the
 * index statistics it reads (rows, average length) equal ones counted another way, the plain query
 * answers when nothing can be proven (all-frequent words) and the pruned path when it can (counted
 * in `pruning.stats`), and the check is not vacuous (most of those answers skipped most rows).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCorpusIndex, toFtsQuery, type CorpusIndex } from '../../../src/core/data';
import { CorpusTerms, readVarint } from '../../../src/core/data/corpusTerms';
import { CorpusTopK, matchWords, type CorpusTopKOptions, type TopKHit } from '../../../src/core/data/corpusTopK';
import { createRng } from '../../../src/core/data/prng';
import { syllableVocabulary } from './syllableVocabulary';

const PASSAGES = 30_000;
const WORDS = 40;
const VOCAB = 20_000;
const vocab = syllableVocabulary(VOCAB);
const UNICODE_WORDS = ['café', 'Ünïcode', 'naïve', 'résumé', 'Straße', 'Ελλάδα', 'Москва', '東京', 'façade', 'über'];

const dir = mkdtempSync(join(tmpdir(), 'srpo-topk-'));
let idx: CorpusIndex;

beforeAll(() => {
  const rng = createRng('corpus-topk');
  const word = (): string => vocab[Math.min(VOCAB - 1, Math.floor(Math.pow(VOCAB, rng.next())) - 1)];
  const lines: string[] = [];
  for (let i = 0; i < PASSAGES; i++) {
    const extra = rng.chance(0.02) ? ` ${rng.pick(UNICODE_WORDS)}` : '';
    const title = `${word()} ${word()}${extra}`;
    // Some passages punctuated (FTS5 separates on these; the rows are tokenized again to score them).
    const sep = (): string => (rng.chance(0.05) ? rng.pick([', ', '. ', "'", '-', ' (', ') ', '_', '"', '/', ':', '\t', ' & ', '@', '~']) : ' ');
    const text = Array.from({ length: rng.int(WORDS / 2, WORDS * 2) }, () => word() + sep()).join('') + extra;
    lines.push(JSON.stringify({ id: `p${i}`, contents: `"${title}"\n${text}` }));
  }
  const file = join(dir, 'zipf.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');
  idx = openCorpusIndex(file, { dir: join(dir, 'idx') });
});

const opened: Database.Database[] = [];
afterAll(() => {
  idx.close();
  for (const db of opened) db.close();
});

/** A pruned top-k on its own read-only connection to the index (title weight 2, as the index). */
function pruner(options: CorpusTopKOptions): CorpusTopK {
  const db = new Database(idx.path, { readonly: true });
  opened.push(db);
  return new CorpusTopK(db, 2, options);
}

/** The reference: FTS5 scores every row a phrase occurs in, best first, ties by rowid. */
let plainStmt: Database.Statement<[string, number], TopKHit> | null = null;
function plainTopK(match: string, k: number): TopKHit[] {
  if (!plainStmt) {
    const db = new Database(idx.path, { readonly: true });
    opened.push(db);
    plainStmt = db.prepare('SELECT rowid, -bm25(passages, 0, 2, 1) AS score FROM passages WHERE passages MATCH ? ORDER BY score DESC, rowid LIMIT ?');
  }
  return plainStmt.all(match, k);
}

/** A random query: 1-6 words drawn from the frequent, mid and rare ranks, with the odd twist. */
function randomQuery(rng: ReturnType<typeof createRng>): string {
  const parts: string[] = [];
  for (let n = rng.int(1, 6); n > 0; n--) {
    const band = rng.int(0, 9);
    if (band < 3) parts.push(vocab[rng.int(0, 19)]);
    else if (band < 6) parts.push(vocab[rng.int(20, 999)]);
    else if (band < 8) parts.push(vocab[rng.int(1000, VOCAB - 1)]);
    else if (band === 8) parts.push(rng.pick(['the', 'of', 'which', 'where', 'was', 'Who?']));
    else parts.push(rng.pick([...UNICODE_WORDS, 'cafe', 'UNICODE', 'zzqx', 'absentword', '1990', 'ǅemal', 'ᦰᦱ', 'kaᦰlo']));
  }
  if (rng.chance(0.2)) parts.push(parts[0]); // a repeated word
  if (rng.chance(0.1)) parts[0] = parts[0].toUpperCase().replace('A', 'Á'); // case and accents
  return parts.join(rng.pick([' ', ', ', ' - ']));
}

describe('pruned corpus top-k', () => {
  it('reads the row count and the average row length FTS5 uses (checked by counting instances)', () => {
    const db = new Database(idx.path, { readonly: true });
    db.exec('CREATE VIRTUAL TABLE temp.inst USING fts5vocab(main, passages, instance)');
    const tokens = db.prepare('SELECT count(*) FROM temp.inst').pluck().get() as number;
    const terms = new CorpusTerms(db, 2);
    expect(terms.rows).toBe(PASSAGES);
    expect(terms.avgdl).toBe(tokens / PASSAGES);
    terms.close();
    db.close();
    expect(readVarint(Uint8Array.from([0x81, 0xb7, 0x8d, 0x40]), 0)).toEqual([3_000_000, 4]);
    expect(readVarint(Uint8Array.from([0x7f]), 0)).toEqual([127, 1]);
  });

  it('gives the plain query passages, order and bit-equal scores for 400 random queries, k in {1, 3, 5, 10, 50}', () => {
    const rng = createRng('corpus-topk-queries');
    const topk = pruner({ minPostings: 0, maxPostingShare: Infinity }); // no budget: it tries every query
    let compared = 0;
    const queries = ['', '???', 'the of which', ...Array.from({ length: 400 }, () => randomQuery(rng))];
    for (const [i, q] of queries.entries()) {
      const k = [1, 3, 5, 10, 50][i % 5];
      const match = toFtsQuery(q);
      if (match === null) continue;
      const got = topk.search(matchWords(match), k);
      if (got === null) continue; // left to the plain query
      expect(got, `query ${JSON.stringify(q)}, k ${k}`).toEqual(plainTopK(match, k));
      if (got.length > 0) compared++;
    }
    // Not vacuous: most answers came from the pruned path, and it skipped most rows.
    expect(compared).toBeGreaterThan(200);
    expect(topk.stats.pruned).toBe(compared);
    expect(topk.stats.fallback).toBeGreaterThan(0);
    expect(topk.stats.scoredRows / compared).toBeLessThan(PASSAGES / 10);
  });

  it('CorpusIndex.search (pruned where it can) equals CorpusIndex.searchPlain, with ids, texts and scores', () => {
    const rng = createRng('corpus-index-queries');
    // The same index file opened again (not rebuilt), trying small queries too, on a larger budget.
    const eager = openCorpusIndex(join(dir, 'zipf.jsonl'), { dir: join(dir, 'idx'), pruning: { minPostings: 0, maxPostingShare: 1 } });
    expect(eager.built).toBe(false);
    const pruning = eager.pruning!;
    expect(pruning).not.toBeNull();
    for (let i = 0; i < 100; i++) {
      const q = i % 2 ? randomQuery(rng) : `${vocab[rng.int(0, 30)]} ${vocab[rng.int(0, 30)]} ${vocab[rng.int(100, 19_999)]}`;
      const k = [1, 3, 5, 10, 50][i % 5];
      expect(eager.search(q, k), `query ${JSON.stringify(q)}, k ${k}`).toEqual(eager.searchPlain(q, k));
      expect(idx.search(q, k)).toEqual(eager.searchPlain(q, k)); // default settings
    }
    expect(pruning.stats.pruned).toBeGreaterThan(25);
    eager.close();
    const plainOnly = openCorpusIndex(join(dir, 'zipf.jsonl'), { dir: join(dir, 'idx'), pruning: false });
    expect(plainOnly.pruning).toBeNull();
    plainOnly.close();
  });

  it('ranks ties by rowid in both paths (rare words that tie many passages)', () => {
    const topk = pruner({ minPostings: 0 });
    for (const w of [vocab[15_000], vocab[12_345], 'Москва', 'café']) {
      for (const k of [1, 3, 50]) {
        const match = toFtsQuery(`${w} ${vocab[19_999]} ${vocab[0]}`)!;
        const got = topk.search(matchWords(match), k);
        if (got) expect(got).toEqual(plainTopK(match, k));
      }
    }
    expect(topk.stats.pruned).toBeGreaterThan(0);
  });

  it('proves rare-plus-frequent queries, scoring a few rows in full', () => {
    const topk = pruner({});
    const match = toFtsQuery(`${vocab[0]} ${vocab[1]} ${vocab[4_321]}`)!;
    expect(topk.search(matchWords(match), 5)).toEqual(plainTopK(match, 5));
    expect(topk.stats).toMatchObject({ pruned: 1, fallback: 0 });
    // Not the thousands of passages the frequent words occur in.
    expect(topk.stats.scoredRows).toBeLessThan(200);
  });

  it('leaves to the plain query what it cannot prove or would not pay', () => {
    const topk = pruner({ minPostings: 0, maxPostingShare: Infinity });
    const reasons = topk.stats.reasons;
    // The rare word is in fewer than 50 passages: the top 50 needs passages without it.
    const rare = vocab[6_000];
    expect(plainTopK(`"${rare}"`, 1000).length).toBeGreaterThan(0);
    expect(plainTopK(`"${rare}"`, 1000).length).toBeLessThan(50);
    expect(topk.search([rare, vocab[0]], 50)).toBeNull();
    expect(reasons.unproven).toBe(1);
    expect(topk.search([vocab[7]], 5)).toBeNull();
    expect(reasons.single).toBe(1);
    // U+19B0 (New Tai Lue): a letter to JavaScript, a separator to unicode61: no token, or two.
    expect(topk.search(['ᦰᦱ', vocab[4_321]], 5)).toBeNull();
    expect(topk.search(['kaᦰlo', vocab[4_321]], 5)).toBeNull();
    expect(reasons.unusual).toBe(2);
    // With the default budget: words in most passages prove nothing cheaply; a small query is not tried.
    const budgeted = pruner({});
    expect(budgeted.search([vocab[0], vocab[1], vocab[2], vocab[3]], 5)).toBeNull();
    expect(budgeted.stats.reasons.small + budgeted.stats.reasons.cost + budgeted.stats.reasons.unproven).toBe(1);
    expect(budgeted.search([vocab[6_000], vocab[7_000]], 5)).toBeNull();
    expect(budgeted.stats.reasons.small).toBe(1);
  });
});
