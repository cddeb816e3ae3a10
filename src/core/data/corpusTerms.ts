/**
 * What an exact bm25 top-k over a corpus index (corpusTopK.ts) needs to know about the index, read
 * from SQLite without scoring through FTS5: the row count and average row length (FTS5's averages
 * record), a term's document frequency (fts5vocab 'row'), its idf and an upper bound of its bm25
 * contribution, the single token FTS5 makes of a query word, and, for a few candidate rows, each
 * row's length (passages_docsize) and per-column counts of the query's terms (the rows' title and
 * text tokenized again by an in-memory FTS5 table with the index's tokenizer).
 *
 * The bm25 arithmetic is sqlite's fts5_aux.c (fts5Bm25Function, fts5Bm25GetData), step by step:
 * idf = log((N - n + 0.5) / (n + 0.5)), 1e-6 when <= 0, taken with SQLite's own ln() (the same C
 * log() FTS5 calls) so scores come out bit-equal; f = the column weights added once per instance;
 * contribution = idf * (f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl)).
 * Not here: the pruning itself, the plain query (corpusIndex.ts). Everything is cached for the life
 * of the object: an index never changes once built.
 * Node-only (better-sqlite3). Tested by test/core/data/corpusTopK.test.ts.
 */
import Database from 'better-sqlite3';

/** FTS5's bm25 constants (fts5_aux.c), not configurable there either. */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
const TOKENIZER = "tokenize = 'porter unicode61 remove_diacritics 2'";
/** FTS5's floor of a non-positive idf (a term in more than half the rows). */
const IDF_FLOOR = 1e-6;

export interface TermStats {
  /** Rows the term occurs in (any column): FTS5's n(q) for the idf. */
  df: number;
  idf: number;
}

/** A bound of a term's contribution to any row with no query: f (k1 + 1) / (f + k1 (...)) < k1 + 1; 0 for a term in no row. */
export function looseBound(s: TermStats): number {
  return s.df === 0 ? 0 : s.idf * (BM25_K1 + 1);
}

/** A candidate row: its length in tokens (all columns) and, per term, [title count, text count]. */
export interface RowTerms {
  length: number;
  counts: Map<string, [number, number]>;
}

/** An SQLite varint (big-endian, 7 bits a byte, a 9th byte of 8 bits) at `pos`: [value, next pos]. */
export function readVarint(buf: Uint8Array, pos: number): [number, number] {
  let v = 0;
  for (let i = 0; i < 8; i++) {
    const byte = buf[pos + i];
    if (byte === undefined) throw new Error(`corpusTerms: varint runs past the end of a ${buf.length}-byte record`);
    v = v * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return [v, pos + i + 1];
  }
  return [v * 256 + buf[pos + 8], pos + 9];
}

/** The sum of the varints of a record (FTS5's docsize blob: one token count per column). */
function sumVarints(buf: Uint8Array): number {
  let sum = 0;
  for (let pos = 0; pos < buf.length;) {
    const [v, next] = readVarint(buf, pos);
    sum += v;
    pos = next;
  }
  return sum;
}

function countVarints(buf: Uint8Array): number {
  let n = 0;
  for (let pos = 0; pos < buf.length; n++) pos = readVarint(buf, pos)[1];
  return n;
}

export class CorpusTerms {
  /** FTS5's xRowCount and xColumnTotalSize(-1) / xRowCount, from the averages record. */
  readonly rows: number;
  readonly avgdl: number;
  private readonly mem = new Database(':memory:');
  private readonly wordTerm = new Map<string, string | null>();
  private readonly termStats = new Map<string, TermStats>();
  private readonly bounds = new Map<string, number>();
  private readonly dfStmt: Database.Statement<[string], { doc: number }>;
  private readonly lnStmt: Database.Statement<[number], number>;
  private readonly boundStmt: Database.Statement<[number, string], number | null>;
  private readonly rowStmt: Database.Statement<[number], { title: string; text: string; sz: Buffer }>;
  private readonly memWordIns: Database.Statement<[string]>;
  private readonly memWordTerms: Database.Statement<[], string>;
  private readonly memCandIns: Database.Statement<[number, string, string]>;
  private readonly memCandTerm: Database.Statement<[string], { doc: number; col: string }>;

  /** Terms in at most this many rows get an exact bound (one O(df) FTS5 query, cached). */
  readonly exactBoundMaxDf: number;

  constructor(
    db: Database.Database,
    private readonly titleWeight: number,
    /** Default: 10% of the rows, at least 20k. */
    exactBoundMaxDf?: number,
  ) {
    const avg = db.prepare('SELECT block FROM passages_data WHERE id = 1').pluck().get() as Buffer | undefined;
    if (!avg) throw new Error('corpusTerms: passages_data has no averages record (id 1)');
    const [rows, pos] = readVarint(avg, 0);
    if (rows <= 0) throw new Error('corpusTerms: the index has no rows');
    this.rows = rows;
    const columns = countVarints(avg.subarray(pos));
    if (columns !== 3) throw new Error(`corpusTerms: the averages record has ${columns} column totals, not 3 (pid, title, text)`);
    this.avgdl = sumVarints(avg.subarray(pos)) / rows;
    this.exactBoundMaxDf = exactBoundMaxDf ?? Math.max(20_000, Math.floor(rows * 0.1));
    // A temp table: works on the read-only connection the index is opened with.
    db.exec('CREATE VIRTUAL TABLE IF NOT EXISTS temp.corpus_topk_vocab USING fts5vocab(main, passages, row)');
    this.dfStmt = db.prepare('SELECT doc FROM temp.corpus_topk_vocab WHERE term = ?');
    this.lnStmt = db.prepare<[number], number>('SELECT ln(?)').pluck();
    this.boundStmt = db
      .prepare<[number, string], number | null>('SELECT -bm25(passages, 0, ?, 1) AS s FROM passages WHERE passages MATCH ? ORDER BY s DESC LIMIT 1')
      .pluck();
    this.rowStmt = db.prepare('SELECT c1 AS title, c2 AS text, sz FROM passages_content JOIN passages_docsize USING (id) WHERE id = ?');
    // Contentless tables: emptied with 'delete-all', only their index is read (fts5vocab 'instance').
    this.mem.exec(`CREATE VIRTUAL TABLE qword USING fts5(x, content='', ${TOKENIZER})`);
    this.mem.exec('CREATE VIRTUAL TABLE qword_v USING fts5vocab(qword, instance)');
    this.mem.exec(`CREATE VIRTUAL TABLE cand USING fts5(title, text, content='', ${TOKENIZER})`);
    this.mem.exec('CREATE VIRTUAL TABLE cand_v USING fts5vocab(cand, instance)');
    this.memWordIns = this.mem.prepare('INSERT INTO qword(rowid, x) VALUES (1, ?)');
    this.memWordTerms = this.mem.prepare<[], string>('SELECT term FROM qword_v').pluck();
    this.memCandIns = this.mem.prepare('INSERT INTO cand(rowid, title, text) VALUES (?, ?, ?)');
    this.memCandTerm = this.mem.prepare('SELECT doc, col FROM cand_v WHERE term = ?');
  }

  /** The one token FTS5 makes of a query word (its porter stem), or null when it makes none or several. */
  termOf(word: string): string | null {
    let term = this.wordTerm.get(word);
    if (term === undefined) {
      this.mem.exec("INSERT INTO qword(qword) VALUES ('delete-all')");
      this.memWordIns.run(word);
      const terms = this.memWordTerms.all();
      term = terms.length === 1 ? terms[0] : null;
      this.wordTerm.set(word, term);
    }
    return term;
  }

  /** df and idf of `term` (a token: termOf). */
  stats(term: string): TermStats {
    let s = this.termStats.get(term);
    if (s) return s;
    const df = this.dfStmt.get(term)?.doc ?? 0;
    const ln = this.lnStmt.get((this.rows - df + 0.5) / (df + 0.5));
    if (typeof ln !== 'number') throw new Error(`corpusTerms: ln() gave no number for the idf of "${term}"`);
    s = { df, idf: ln <= 0 ? IDF_FLOOR : ln };
    this.termStats.set(term, s);
    return s;
  }

  /**
   * An upper bound of the contribution of `term` (the token of the query word `word`) to any row:
   * the exact maximum when it is in at most exactBoundMaxDf rows (one O(df) query, cached), else
   * looseBound.
   */
  bound(term: string, word: string): number {
    let b = this.bounds.get(term);
    if (b !== undefined) return b;
    const s = this.stats(term);
    // A single-phrase query's score is that phrase's contribution (0 + c): its best is the exact maximum.
    const exact = s.df > 0 && s.df <= this.exactBoundMaxDf ? this.boundStmt.get(this.titleWeight, `"${word}"`) : null;
    b = typeof exact === 'number' ? exact : looseBound(s);
    this.bounds.set(term, b);
    return b;
  }

  /** Length and per-column counts of `terms` of each row in `rowids` (rows absent from the index are left out). */
  rowTerms(rowids: readonly number[], terms: readonly string[]): Map<number, RowTerms> {
    const out = new Map<number, RowTerms>();
    this.mem.exec("INSERT INTO cand(cand) VALUES ('delete-all')");
    for (const id of rowids) {
      const row = this.rowStmt.get(id);
      if (!row) continue;
      out.set(id, { length: sumVarints(row.sz), counts: new Map() });
      this.memCandIns.run(id, row.title, row.text);
    }
    for (const term of new Set(terms)) {
      for (const { doc, col } of this.memCandTerm.all(term)) {
        const counts = out.get(doc)?.counts;
        if (!counts) continue;
        const c = counts.get(term) ?? [0, 0];
        c[col === 'title' ? 0 : 1]++;
        counts.set(term, c);
      }
    }
    return out;
  }

  /**
   * bm25 of a row for phrases with these terms and idfs, in phrase order, as fts5Bm25Function adds
   * it up (f: the title weight added once per title instance, then 1 per text instance).
   */
  score(row: RowTerms, terms: readonly string[], idfs: readonly number[]): number {
    const lengthNorm = BM25_K1 * (1 - BM25_B + (BM25_B * row.length) / this.avgdl);
    let score = 0;
    for (let i = 0; i < terms.length; i++) {
      const c = row.counts.get(terms[i]);
      let f = 0;
      if (c) {
        for (let n = 0; n < c[0]; n++) f += this.titleWeight;
        for (let n = 0; n < c[1]; n++) f += 1;
      }
      score += idfs[i] * ((f * (BM25_K1 + 1.0)) / (f + lengthNorm));
    }
    return score;
  }

  close(): void {
    this.mem.close();
  }
}
