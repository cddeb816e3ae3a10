/**
 * BM25 retrieval over a corpus with SQLite FTS5 (better-sqlite3, synchronous). The index is
 * built once per corpus content, keyed by a SHA-256 of the passages, and reused: in an SQLite
 * file when `dbPath` is given (across processes), else in an in-memory database cached for
 * the life of the process. Query text is reduced to quoted word tokens joined by OR, so no
 * user or model text can reach FTS5's query syntax (`AND`, `NEAR`, `*`, `"`, `:` ...).
 *
 * Node-only (native module). Scores are FTS5's bm25() (k1 = 1.2, b = 0.75), negated so that
 * higher is better. Not here: dense retrieval, reranking.
 * Tested by test/core/data/retriever.test.ts (recall@k on the HotpotQA mini corpus).
 */
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import type { Passage } from './types';

export interface SearchHit extends Passage {
  /** Negated FTS5 bm25(): higher is more relevant. */
  score: number;
}

/** What a workflow needs from a search engine (the search workflow's tool). */
export interface SearchTool {
  search(query: string, k: number): SearchHit[];
}

export interface RetrieverOptions {
  /** SQLite file to keep the index in (reused when the corpus hash matches); default in memory. */
  dbPath?: string;
  /** bm25 weight of the title column relative to the text column (1). Default 2. */
  titleWeight?: number;
}

const STOPWORDS = new Set(
  (
    'a an and are as at be by for from has have he her his in is it its of on or she that the their them they this to was were ' +
    'what when where which who whom whose why how with did does do'
  ).split(' '),
);
const MAX_QUERY_TOKENS = 32;

/** FTS5-safe match expression for free text, or null when it has no searchable word. */
export function toFtsQuery(text: string): string | null {
  if (typeof text !== 'string') return null;
  const words = (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOPWORDS.has(w));
  const unique = [...new Set(words)].slice(0, MAX_QUERY_TOKENS);
  if (unique.length === 0) return null;
  return unique.map((w) => `"${w}"`).join(' OR ');
}

/** Content hash of a corpus: identical passages in identical order give the same index. */
export function corpusHash(corpus: readonly Passage[]): string {
  const h = createHash('sha256');
  for (const p of corpus) h.update(`${p.id}\u0001${p.title}\u0001${p.text}\u0002`);
  return h.digest('hex').slice(0, 32);
}

const memoryDbs = new Map<string, Database.Database>();

export class Bm25Retriever implements SearchTool {
  /** Whether this instance built the index (false: an existing one was reused). */
  readonly built: boolean;
  readonly hash: string;
  readonly size: number;
  private readonly stmt: Database.Statement<[number, string, number], { pid: string; title: string; text: string; score: number }>;

  private constructor(
    private readonly db: Database.Database,
    hash: string,
    size: number,
    built: boolean,
    private readonly titleWeight: number,
    private readonly ownsDb: boolean,
  ) {
    this.hash = hash;
    this.size = size;
    this.built = built;
    const table = tableName(hash);
    this.stmt = db.prepare(
      `SELECT pid, title, text, -bm25(${table}, 0, ?, 1) AS score FROM ${table} WHERE ${table} MATCH ? ORDER BY score DESC, rowid LIMIT ?`,
    );
  }

  /** Open (building if needed) the index of `corpus`. */
  static open(corpus: readonly Passage[], options: RetrieverOptions = {}): Bm25Retriever {
    const hash = corpusHash(corpus);
    const titleWeight = options.titleWeight ?? 2;
    let db: Database.Database;
    let owns = false;
    if (options.dbPath) {
      db = new Database(options.dbPath);
      db.pragma('journal_mode = WAL');
      owns = true;
    } else {
      db = memoryDbs.get(hash) ?? new Database(':memory:');
      memoryDbs.set(hash, db);
    }
    db.exec('CREATE TABLE IF NOT EXISTS corpora (hash TEXT PRIMARY KEY, passages INTEGER NOT NULL, built_at TEXT NOT NULL) STRICT');
    const existing = db.prepare('SELECT passages FROM corpora WHERE hash = ?').get(hash) as { passages: number } | undefined;
    if (existing) return new Bm25Retriever(db, hash, existing.passages, false, titleWeight, owns);
    const table = tableName(hash);
    const build = db.transaction(() => {
      db.exec(`DROP TABLE IF EXISTS ${table}`);
      db.exec(`CREATE VIRTUAL TABLE ${table} USING fts5(pid UNINDEXED, title, text, tokenize = 'porter unicode61 remove_diacritics 2')`);
      const ins = db.prepare(`INSERT INTO ${table} (pid, title, text) VALUES (?, ?, ?)`);
      for (const p of corpus) ins.run(p.id, p.title, p.text);
      db.prepare('INSERT INTO corpora (hash, passages, built_at) VALUES (?, ?, ?)').run(hash, corpus.length, new Date().toISOString());
    });
    build();
    return new Bm25Retriever(db, hash, corpus.length, true, titleWeight, owns);
  }

  /** Top-k passages for free text (never throws on odd query text; empty when no word). */
  search(query: string, k: number): SearchHit[] {
    const match = toFtsQuery(query);
    const limit = Math.max(0, Math.floor(k));
    if (match === null || limit === 0) return [];
    return this.stmt.all(this.titleWeight, match, limit).map((r) => ({ id: r.pid, title: r.title, text: r.text, score: r.score }));
  }

  /** Close the file database (in-memory indexes stay cached for the process). */
  close(): void {
    if (this.ownsDb && this.db.open) this.db.close();
  }
}

function tableName(hash: string): string {
  return `fts_${hash.replace(/[^0-9a-f]/g, '')}`;
}
