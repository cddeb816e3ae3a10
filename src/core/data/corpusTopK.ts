/**
 * An exact bm25 top-k over a corpus index (corpusIndex.ts) that skips most of the postings: the
 * MaxScore idea (Turtle & Flood 1995) on top of FTS5, without access to FTS5's posting lists.
 * bm25 is a sum of one contribution per query phrase, each bounded by U_i (corpusTerms.ts). The
 * phrases are split into "essential" ones (the rarest: highest idf) and the rest; one FTS5
 * query of the essential phrases alone, ordered by their partial score with a LIMIT, finds every
 * row that can enter the top k:
 *   - a row with none of the essential phrases scores at most S = the sum of the other bounds;
 *   - a row below the LIMIT's cut scores at most its partial score (<= the cut's) + S;
 *   - a returned row scores at most its partial + S, so it is scored in full (its text tokenized
 *     again, corpusTerms.ts) only while that can reach theta, the k-th best full score so far.
 * The answer is final when theta exceeds both first bounds (by a relative 1e-9, far above the
 * rounding of partial sums); otherwise the next rarest phrase becomes essential and it tries again.
 * It gives up (null: the caller runs the plain FTS5 query, the reference) on anything unusual (a
 * query word FTS5 makes into several tokens or none, a negative weight), on one word or few
 * postings (nothing to win), and when it would spend more than `maxPostingShare` of the plain
 * query's postings (its own queries' postings plus ROW_COST a row scored in full), so a search
 * that falls back costs little more than the plain one once its words are known (a term's df and
 * exact bound are read once, O(df) each, and cached: corpusTerms.ts). Ties are ordered by rowid,
 * as the plain query.
 * Differs from MaxScore as published: no posting cursors, so a failed try costs a whole query of
 * the essential phrases, and the rows are scored from their text, not from postings. Queries of
 * only frequent, only mid or only rare words fall back: proving them cheaply would need block-max
 * bounds, and FTS5 does not expose its posting blocks. Speed: `npm run bench -- corpus`
 * (`query_*_ms` beside `*_plain_ms`); figures in docs/decisions/037-corpus-pruned-topk.md.
 * Node-only (better-sqlite3). Tested against the plain query by test/core/data/corpusTopK.test.ts.
 */
import type Database from 'better-sqlite3';
import { CorpusTerms, looseBound, type TermStats } from './corpusTerms';

export interface TopKHit {
  rowid: number;
  /** bm25 negated (higher is better), as the plain query's `-bm25(passages, 0, titleWeight, 1)`. */
  score: number;
}

/** Why the pruned search answered null (the caller then runs the plain query). */
export type FallbackReason = 'unusual' | 'single' | 'small' | 'cost' | 'unproven';

export interface CorpusTopKOptions {
  /**
   * The pruned search may spend at most this share of the plain query's postings (its queries'
   * postings, and ROW_COST per row scored in full), else it stops and the plain query answers:
   * a search that fails costs at most 1 + this share of the plain one. Default 0.15.
   */
  maxPostingShare?: number;
  /** Queries of fewer postings than this go straight to the plain query (a few ms). Default 50k. */
  minPostings?: number;
  /** Terms in at most this many rows get an exact bound (an O(df) query each, cached). Default 10% of the rows, at least 20k. */
  exactBoundMaxDf?: number;
  /** Rows asked of the first essential query: max(this, 4k). Default 4096; grown 8x while the cut proves nothing. */
  firstLimit?: number;
}

/** Rows scored in full per batch (one in-memory tokenization). */
const BATCH = 32;
/**
 * What scoring a row in full costs, in postings of the plain query: ~80 us a row (fetched and
 * tokenized again) against ~0.47 us a posting (the plain query reads each twice: idf, then scores),
 * measured on the 3M-passage synthetic index.
 */
const ROW_COST = 170;
/** Relative slack of the proofs: partial sums rounded in another order differ by a few ulps. */
const SLACK = 1e-9;

/** The words of a match expression of toFtsQuery (retriever.ts): unique words, each quoted, joined by OR. */
export function matchWords(match: string): string[] {
  return match.split(' OR ').map((w) => w.slice(1, -1));
}

/** Postings the pruned search may still read (ROW_COST per row scored), and whether it gave a split up for it. */
interface Budget {
  left: number;
  gaveUp: boolean;
}

interface Phrase {
  word: string;
  term: string;
  stats: TermStats;
}

export class CorpusTopK {
  /** Searches answered here, and those left to the plain query, by reason. */
  readonly stats = {
    pruned: 0,
    fallback: 0,
    reasons: { unusual: 0, single: 0, small: 0, cost: 0, unproven: 0 } satisfies Record<FallbackReason, number>,
    /** Rows scored in full (fetched and tokenized again), all searches together. */
    scoredRows: 0,
  };
  private readonly terms: CorpusTerms;
  private readonly essentialStmt: Database.Statement<[number, string, number], [number, number]>;
  private readonly maxPostingShare: number;
  private readonly firstLimit: number;
  private readonly minPostings: number;

  constructor(
    db: Database.Database,
    private readonly titleWeight: number,
    options: CorpusTopKOptions = {},
  ) {
    this.terms = new CorpusTerms(db, titleWeight, options.exactBoundMaxDf);
    this.essentialStmt = db
      .prepare<[number, string, number], [number, number]>(
        'SELECT rowid, -bm25(passages, 0, ?, 1) AS s FROM passages WHERE passages MATCH ? ORDER BY s DESC, rowid LIMIT ?',
      )
      .raw();
    this.maxPostingShare = options.maxPostingShare ?? 0.15;
    this.firstLimit = options.firstLimit ?? 4096;
    this.minPostings = options.minPostings ?? 50_000;
  }

  /**
   * The top `k` rows for `words` (the unique query words, in the order of the plain query's phrases),
   * best first, ties by rowid; null when it cannot prove an answer.
   */
  search(words: readonly string[], k: number): TopKHit[] | null {
    const result = this.tryPruned(words, k);
    if (typeof result === 'string') {
      this.stats.fallback++;
      this.stats.reasons[result]++;
      return null;
    }
    this.stats.pruned++;
    return result;
  }

  private tryPruned(words: readonly string[], k: number): TopKHit[] | FallbackReason {
    if (!(this.titleWeight >= 0) || !Number.isFinite(this.titleWeight) || k < 1 || words.length === 0) return 'unusual';
    if (words.length === 1) return 'single'; // nothing to prune: the plain query reads the same postings
    const phrases: Phrase[] = [];
    for (const word of words) {
      const term = this.terms.termOf(word);
      if (term === null) return 'unusual';
      phrases.push({ word, term, stats: this.terms.stats(term) });
    }
    const allTerms = phrases.map((p) => p.term);
    const idfs = phrases.map((p) => p.stats.idf);
    const postings = phrases.reduce((sum, p) => sum + p.stats.df, 0);
    if (postings < this.minPostings) return 'small';
    const budget: Budget = { left: this.maxPostingShare * postings, gaveUp: false };
    // Essential first: highest idf (0 for a term in no row), then phrase order.
    const order = phrases.map((_, i) => i).sort((a, b) => looseBound(phrases[b].stats) - looseBound(phrases[a].stats) || a - b);
    // rest(j): the bound sum of the phrases left out when the first j are essential. Asked only for
    // a split that is tried: an exact bound costs a query of the term's rows the first time.
    const rest = (j: number): number => order.slice(j).reduce((sum, i) => sum + this.terms.bound(phrases[i].term, phrases[i].word), 0);
    for (let j = 1; j < order.length;) {
      const essential = order.slice(0, j).sort((a, b) => a - b); // in phrase order, as FTS5 adds them
      const essentialPostings = essential.reduce((sum, i) => sum + phrases[i].stats.df, 0);
      if (essentialPostings > budget.left) return 'cost';
      // A guess (only the time depends on it): when the essential phrases can add less than half
      // of what the others can, rows without them are too close to the top to rule out.
      const restBound = rest(j);
      if (rest(0) - restBound < 0.5 * restBound) {
        j++;
        continue;
      }
      // Scoring rows costs more than the next split's query would: give this one up then.
      const nextPostings = j + 1 < order.length ? essentialPostings + phrases[order[j]].stats.df : Infinity;
      const outcome = this.tryEssential(
        essential.map((i) => `"${phrases[i].word}"`).join(' OR '),
        essentialPostings,
        nextPostings,
        restBound,
        k,
        allTerms,
        idfs,
        budget,
      );
      if (outcome === 'cost' || Array.isArray(outcome)) return outcome;
      // Skip the splits whose rest bound this theta does not beat either (a guess: more essential
      // phrases usually find a higher theta; only the time depends on it, never the answer).
      let next = j + 1;
      while (next < order.length && !beats(outcome, rest(next))) next++;
      j = next;
    }
    return budget.gaveUp ? 'cost' : 'unproven';
  }

  /**
   * The top k if the essential query `match` (reading `postings`) proves it with `restBound` for the
   * other phrases; else theta so far, or 'cost' when the budget (in postings) ran out.
   */
  private tryEssential(
    match: string,
    postings: number,
    nextPostings: number,
    restBound: number,
    k: number,
    terms: readonly string[],
    idfs: readonly number[],
    budget: Budget,
  ): TopKHit[] | number | 'cost' {
    const scored = new Set<number>();
    let best: TopKHit[] = [];
    let theta = -Infinity;
    for (let limit = Math.max(this.firstLimit, 4 * k); ; limit *= 8) {
      budget.left -= postings;
      if (budget.left < 0) return 'cost';
      const rows = this.essentialStmt.all(this.titleWeight, match, limit); // [rowid, partial score], best first
      // Score in full, in partial order, every row whose bound can still reach theta.
      for (let at = 0; at < rows.length && !beats(theta, rows[at][1] + restBound);) {
        const batch: number[] = [];
        for (; at < rows.length && batch.length < BATCH && !beats(theta, rows[at][1] + restBound); at++) {
          if (!scored.has(rows[at][0])) batch.push(rows[at][0]);
        }
        budget.left -= ROW_COST * batch.length;
        if (budget.left < 0) return 'cost';
        const rowTerms = this.terms.rowTerms(batch, terms);
        for (const id of batch) {
          const row = rowTerms.get(id);
          if (!row) throw new Error(`corpusTopK: row ${id} matched the index but has no content or docsize row`);
          scored.add(id);
          best.push({ rowid: id, score: this.terms.score(row, terms, idfs) });
        }
        this.stats.scoredRows += batch.length;
        best = best.sort(byScoreThenRowid).slice(0, k);
        theta = best.length === k ? best[k - 1].score : -Infinity;
        // Give this split up early when the rows theta leaves to score (fewer as it grows: an
        // overestimate) and a query past the cut would cost more than the budget left.
        let needed = at;
        while (needed < rows.length && !beats(theta, rows[needed][1] + restBound)) needed++;
        const cost = (needed - at) * ROW_COST + (needed === limit ? postings + limit * ROW_COST : 0);
        if (theta > -Infinity && cost > Math.min(budget.left, nextPostings)) {
          budget.gaveUp ||= cost > budget.left;
          return theta;
        }
      }
      const cut = rows.length === limit ? rows[limit - 1][1] : null; // rows below it were not returned
      if (!beats(theta, restBound)) return theta;
      if (cut === null || beats(theta, cut + restBound)) return best;
    }
  }

  close(): void {
    this.terms.close();
  }
}

/** Whether theta is proven above a bound (scores are >= 0; the slack covers summation order). */
function beats(theta: number, bound: number): boolean {
  return theta > bound + SLACK * Math.max(1, bound);
}

function byScoreThenRowid(a: TopKHit, b: TopKHit): number {
  return b.score - a.score || a.rowid - b.rowid;
}
