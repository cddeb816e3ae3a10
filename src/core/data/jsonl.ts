/**
 * The one JSONL reader of the data layer: blank lines skipped, every other line one JSON value,
 * errors naming `file:line` (1-based) so a user can open the line. corpus.ts, datasets.ts,
 * corpusIndex.ts (which streams a file in chunks and parses line by line) and the warm start's
 * demonstrations (models/warmstart.ts) use it.
 *
 * Not here: what a record means (each caller validates its own rows), JSON lists (`[...]`).
 * Tested by test/core/data/jsonl.test.ts and through the corpus and dataset loaders' tests.
 */

/** One JSONL line parsed; throws `Error("<where>: invalid JSON: ...")` (`where` is `file:line`). */
export function parseJsonlLine(line: string, where: string): unknown {
  try {
    return JSON.parse(line);
  } catch (e) {
    throw new Error(`${where}: invalid JSON: ${(e as Error).message}`);
  }
}

/** Every non-blank line of JSONL text, parsed, with its 1-based line number; `file` names the source in errors. */
export function parseJsonl(text: string, file: string): { raw: unknown; line: number }[] {
  const out: { raw: unknown; line: number }[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() !== '') out.push({ raw: parseJsonlLine(line, `${file}:${i + 1}`), line: i + 1 });
  });
  return out;
}
