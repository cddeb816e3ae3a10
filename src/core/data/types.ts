/**
 * The data module's shared types: one normalised dataset row for every published format and
 * every built-in task, and one passage type for every corpus.
 */

/** One evaluation or training query, whatever file or generator it came from. */
export interface DatasetRow {
  /** Unique within its benchmark: the file's own id when it has one, else `<benchmark>-<line>`. */
  id: string;
  /** The problem or question text shown to the policy. */
  question: string;
  /** Gold answers; several when the format lists aliases (NQ, FlashRAG). Never empty. */
  answers: string[];
  /** Benchmark name (file name without extension unless given, or the generator's name). */
  benchmark: string;
  /** Everything else the source row carried (solution, level, supporting facts ...). */
  meta: Record<string, unknown>;
}

/** One retrievable document. */
export interface Passage {
  id: string;
  title: string;
  text: string;
}
