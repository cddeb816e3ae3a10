/**
 * A retrieval corpus file indexed once into an SQLite FTS5 file and reused by every run that
 * names the same content: `<dir>/corpus-<sha256>.sqlite`, where `dir` is `<db>.corpora` beside
 * the lab database. The build streams the file in batches (corpusReader.ts: 8 MiB reads parsed
 * line by line in a worker thread while this thread inserts), so a 21M-passage Wikipedia dump
 * (FlashRAG's `{id, contents}` JSONL) is never held in memory; JSON lists and title -> sentences
 * objects (small corpora) are read whole by corpus.ts. It reports progress every `progressEvery`
 * passages (src/shared/corpusProgress.ts: the record the engine sends and the UI draws, and the
 * CLI's and the engine log's line).
 *
 * Crash safety: the index is built in `<final>.tmp-<pid>` (nothing to recover: no journal on
 * disk, no fsync), marked complete in its `corpus_meta` row, closed, then renamed into place; a reader
 * opens only the final name and checks the mark. A build killed with SIGKILL leaves only a
 * `.tmp-<pid>` file, which no run opens and the next build of that corpus deletes.
 *
 * Build speed comes from BUILD_PRAGMAS, FTS_BUILD_CONFIG and SEGMENT_PASSAGES below; what bounds
 * it is FTS5's insert on the one thread that owns the connection. The tokenizer is not traded for
 * speed: ranking stays the in-memory Bm25Retriever's (same tokenizer and query words, bm25 with
 * the title weighted 2). Repeated searches come from a cache. A search is first tried by
 * corpusTopK.ts, an exact top-k that skips most postings and falls back to the plain FTS5 query
 * (`searchPlain`, the reference) whenever it cannot prove its answer; ties are ranked by rowid in
 * both, and in Bm25Retriever. Why these settings, the figures and what was tried and not kept:
 * docs/decisions/036-corpus-index-build.md and docs/BENCHMARK_FILES.md.
 * Node-only (fs, better-sqlite3). Speed: `npm run bench -- corpus` (goal >= 50k passages/s).
 * Tested by test/core/data/corpusIndex.test.ts (a kill -9 mid-build included) and
 * test/engine/corpusProgress.test.ts (progress logged by an engine).
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import Database from 'better-sqlite3';
import { fileSha256 } from './datasetTasks';
import { readPassageBatches, type CorpusReaderName } from './corpusReader';
import { toFtsQuery, type SearchHit, type SearchTool } from './retriever';
import { CorpusTopK, matchWords, type CorpusTopKOptions } from './corpusTopK';
import type { CorpusProgress } from '../../shared/corpusProgress';

export { streamPassages } from './corpusReader';
export { corpusProgressLine, type CorpusProgress } from '../../shared/corpusProgress';

export interface CorpusIndexOptions {
  /** Folder of the index files (created when missing). */
  dir: string;
  /** The file's SHA-256 when already known (the run config stores it). */
  sha256?: string;
  /** Called every `progressEvery` passages and once at the end of a build. */
  onProgress?: (p: CorpusProgress) => void;
  progressEvery?: number;
  /** bm25 weight of the title column relative to the text (1). Default 2, as Bm25Retriever. */
  titleWeight?: number;
  /** How the file is read (corpusReader.ts): parsed in a worker thread (default) or on this one. */
  reader?: CorpusReaderName;
  /** Settings of the pruned top-k (corpusTopK.ts), or false for the plain FTS5 query alone. */
  pruning?: CorpusTopKOptions | false;
}

const TOKENIZER = "tokenize = 'porter unicode61 remove_diacritics 2'";

/**
 * Results kept per index, by (match expression, k): the G rollouts of a task, and the n samples of
 * an evaluation query, repeat the same searches, and an index never changes once built. A query of
 * frequent words scores every passage they occur in (~270 ms at 200k passages: bench/corpus.bench.ts);
 * a repeat costs a Map lookup. Least recently used first out; ~2048 x k passages of memory.
 */
const CACHED_QUERIES = 2048;

export class CorpusIndex implements SearchTool {
  private readonly stmt: Database.Statement<[number, string, number], { pid: string; title: string; text: string; score: number }>;
  private readonly rowStmt: Database.Statement<[number], { pid: string; title: string; text: string }>;
  private readonly cache = new Map<string, SearchHit[]>();
  /** Searches answered, and how many of them from the cache. */
  readonly stats = { searches: 0, cached: 0 };
  /**
   * The exact top-k that skips most postings (corpusTopK.ts; its `stats` count the searches it
   * answered and those it left to the plain query), or null when this index cannot give what it
   * needs (then every search is the plain query).
   */
  readonly pruning: CorpusTopK | null;

  constructor(
    private readonly db: Database.Database,
    readonly path: string,
    readonly size: number,
    /** Whether this call built the index (false: an existing one was opened). */
    readonly built: boolean,
    private readonly titleWeight: number,
    pruningOptions: CorpusTopKOptions | false = {},
  ) {
    // Ties by rowid, in both paths (and in Bm25Retriever), so that the two answers are one order.
    this.stmt = db.prepare(
      'SELECT pid, title, text, -bm25(passages, 0, ?, 1) AS score FROM passages WHERE passages MATCH ? ORDER BY score DESC, rowid LIMIT ?',
    );
    this.rowStmt = db.prepare('SELECT pid, title, text FROM passages WHERE rowid = ?');
    let pruning: CorpusTopK | null = null;
    try {
      if (pruningOptions) pruning = new CorpusTopK(db, titleWeight, pruningOptions);
    } catch {
      // No averages record or no fts5vocab / ln() in this SQLite: the plain query answers alone.
    }
    this.pruning = pruning;
  }

  /**
   * The plain FTS5 query (every posting of every query word scored): the reference the pruned
   * search is tested against, and its fallback. No cache.
   */
  searchPlain(query: string, k: number): SearchHit[] {
    const match = toFtsQuery(query);
    const limit = Math.max(0, Math.floor(k));
    if (match === null || limit === 0) return [];
    return this.plain(match, limit);
  }

  private plain(match: string, limit: number): SearchHit[] {
    return this.stmt.all(this.titleWeight, match, limit).map((r) => ({ id: r.pid, title: r.title, text: r.text, score: r.score }));
  }

  search(query: string, k: number): SearchHit[] {
    const match = toFtsQuery(query);
    const limit = Math.max(0, Math.floor(k));
    if (match === null || limit === 0) return [];
    this.stats.searches++;
    const key = `${limit}\u0000${match}`;
    let hits = this.cache.get(key);
    if (hits) {
      this.stats.cached++;
      this.cache.delete(key); // set again below: now the most recent
    } else {
      const top = this.pruning?.search(matchWords(match), limit);
      hits = top
        ? top.map(({ rowid, score }) => {
            const r = this.rowStmt.get(rowid);
            if (!r) throw new Error(`corpus index ${this.path}: row ${rowid} was ranked but has no content`);
            return { id: r.pid, title: r.title, text: r.text, score };
          })
        : this.plain(match, limit);
    }
    this.cache.set(key, hits);
    if (this.cache.size > CACHED_QUERIES) this.cache.delete(this.cache.keys().next().value!);
    return hits.map((h) => ({ ...h })); // copies: a caller may change what it got
  }

  close(): void {
    this.pruning?.close();
    if (this.db.open) this.db.close();
  }
}

/** The index file of a corpus whose content hashes to `sha256`. */
export function corpusIndexPath(dir: string, sha256: string): string {
  return join(dir, `corpus-${sha256}.sqlite`);
}

/** A complete index at `file`, or null (absent, or not marked complete). */
function openComplete(file: string): { db: Database.Database; passages: number } | null {
  if (!existsSync(file)) return null;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT passages, complete FROM corpus_meta').get() as { passages: number; complete: number } | undefined;
    if (row?.complete === 1) return { db, passages: row.passages };
  } catch {
    // not an index of ours: fall through and rebuild
  }
  db.close();
  return null;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Delete `<final>.tmp-<pid>` files left by builds whose process is gone. */
function removeStaleBuilds(dir: string, final: string): void {
  const prefix = `${basename(final)}.tmp-`;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid !== process.pid && !pidAlive(pid)) rmSync(join(dir, name), { force: true });
  }
}

/** Open the index of the corpus file at `path`, building it first when no complete one exists. */
export function openCorpusIndex(path: string, options: CorpusIndexOptions): CorpusIndex {
  const sha256 = options.sha256 ?? fileSha256(path);
  const titleWeight = options.titleWeight ?? 2;
  mkdirSync(options.dir, { recursive: true });
  const final = corpusIndexPath(options.dir, sha256);
  const existing = openComplete(final);
  if (existing) return new CorpusIndex(existing.db, final, existing.passages, false, titleWeight, options.pruning);
  removeStaleBuilds(options.dir, final);
  const tmp = `${final}.tmp-${process.pid}-${Date.now().toString(36)}`;
  let passages: number;
  try {
    passages = buildIndex(path, tmp, options);
    renameSync(tmp, final);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  const opened = openComplete(final);
  if (!opened) throw new Error(`corpus index ${final}: built but not readable`);
  return new CorpusIndex(opened.db, final, passages, true, titleWeight, options.pruning);
}

/**
 * Connection settings of a build. The temp file is deleted unless the build completes, so nothing
 * needs recovering: no rollback journal on disk (journal_mode = OFF is refused silently in the
 * defensive mode better-sqlite3 opens with; MEMORY keeps it off the disk), no fsync, no file-lock
 * traffic. 64 KiB pages: 16 times fewer page writes and a shallower docsize b-tree; top-5 queries
 * measured 0.9x the time of 4 KiB pages on the same 200k-passage index.
 */
const BUILD_PRAGMAS = [
  'page_size = 65536',
  'journal_mode = MEMORY',
  'synchronous = OFF',
  'locking_mode = EXCLUSIVE',
  'temp_store = MEMORY',
  'cache_size = -262144',
];

/**
 * FTS5 settings of a build (rows of its special `rank` insert). hashsize: pending terms held in
 * memory, 64 MiB instead of 1 MiB (SQLite >= 3.46), so a segment is written only at each commit
 * (SEGMENT_PASSAGES). automerge 0 with crisismerge 16: segments are merged 16 at a time when a
 * level holds 16, instead of 4 at a time after every write: fewer passes over the data (1.3x the
 * build rate at 500k passages), at the price of up to 15 segments per level for a query to visit
 * (a b-tree seek each, nothing against reading the doclists).
 */
const FTS_BUILD_CONFIG = { hashsize: 64 << 20, automerge: 0, crisismerge: 16 } satisfies Record<string, number>;

/**
 * Passages per transaction. A commit writes FTS5's pending terms as one segment: segments of 20k
 * passages built fastest; one transaction (a segment per 64 MiB of pending terms) built at
 * 0.8-1.1x the rate, its term hash far beyond the CPU caches.
 */
const SEGMENT_PASSAGES = 20_000;

/** Build the whole index into `file` (a fresh temp file); returns the passage count. */
function buildIndex(path: string, file: string, options: CorpusIndexOptions): number {
  const db = new Database(file);
  try {
    for (const p of BUILD_PRAGMAS) db.pragma(p);
    db.exec('CREATE TABLE corpus_meta (source TEXT NOT NULL, passages INTEGER NOT NULL, complete INTEGER NOT NULL, built_at TEXT NOT NULL) STRICT');
    db.exec(`CREATE VIRTUAL TABLE passages USING fts5(pid UNINDEXED, title, text, ${TOKENIZER})`);
    const setOption = db.prepare('INSERT INTO passages(passages, rank) VALUES(?, ?)');
    for (const [key, value] of Object.entries(FTS_BUILD_CONFIG)) {
      try {
        setOption.run(key, BigInt(value)); // FTS5 takes only an INTEGER here; a JS number binds as REAL
      } catch {
        // An older SQLite without the option (hashsize: < 3.46): the build works with its default.
      }
    }
    const ins = db.prepare<[string, string, string]>('INSERT INTO passages (pid, title, text) VALUES (?, ?, ?)');
    const t0 = performance.now();
    const totalBytes = statSync(path).size;
    const every = options.progressEvery ?? 100_000;
    let count = 0;
    let nextReport = every;
    db.exec('BEGIN');
    readPassageBatches(
      path,
      ({ ids, titles, texts, bytesRead }) => {
        for (let i = 0; i < ids.length; i++) {
          // Reported when the next passage comes, so the last one is reported once, as done.
          if (count >= nextReport) {
            nextReport += every;
            options.onProgress?.({ passages: count, bytesRead, totalBytes, elapsedMs: performance.now() - t0, done: false });
          }
          ins.run(ids[i], titles[i], texts[i]);
          if (++count % SEGMENT_PASSAGES === 0) db.exec('COMMIT; BEGIN');
        }
      },
      options.reader,
    );
    if (count === 0) throw new Error(`${path}: no passages`);
    db.prepare('INSERT INTO corpus_meta (source, passages, complete, built_at) VALUES (?, ?, 1, ?)').run(path, count, new Date().toISOString());
    db.exec('COMMIT');
    options.onProgress?.({ passages: count, bytesRead: totalBytes, totalBytes, elapsedMs: performance.now() - t0, done: true });
    return count;
  } finally {
    db.close();
  }
}
