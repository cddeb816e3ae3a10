/**
 * The one JSONL reader of the data layer: blank lines skipped, every other line one JSON value,
 * errors naming `file:line` (1-based) so a user can open the line, and what was expected there,
 * never the line itself. corpus.ts, datasets.ts,
 * corpusIndex.ts (which streams a file in chunks and parses line by line) use it.
 *
 * Not here: what a record means (each caller validates its own rows), JSON lists (`[...]`).
 * Tested by test/core/data/jsonl.test.ts and through the corpus and dataset loaders' tests.
 */

/**
 * JSON.parse's complaint in words that never quote the input: V8 puts the first characters of the
 * text in some of its messages (`Unexpected token 'r', "root:$6$SE"... is not valid JSON`), and an
 * error must not become a way to read a file. Says where (line and column of `text`) and what
 * was expected instead.
 */
export function jsonSyntaxText(err: unknown, text: string): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/^Unexpected end of JSON input/.test(message)) return 'the text ends inside a value (an unclosed string, list or object)';
  // V8's positioned messages are fixed templates ("Expected ':' after property name in JSON at position 5").
  const positioned = /^([A-Z][^\n]*?) in JSON at position (\d+)/.exec(message);
  if (positioned && !positioned[1].includes('"')) {
    const pos = Number(positioned[2]);
    const before = text.slice(0, pos);
    const line = before.split('\n').length;
    const column = pos - before.lastIndexOf('\n');
    const what = positioned[1][0].toLowerCase() + positioned[1].slice(1);
    return `${what} at ${line > 1 ? `line ${line}, ` : ''}column ${column}`;
  }
  return 'not JSON: expected an object, a list, text in double quotes, a number, true, false or null';
}

/** One JSONL line parsed; throws `Error("<where>: invalid JSON: ...")` (`where` is `file:line`), never quoting the line. */
export function parseJsonlLine(line: string, where: string): unknown {
  try {
    return JSON.parse(line);
  } catch (e) {
    throw new Error(`${where}: invalid JSON: ${jsonSyntaxText(e, line)}`);
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
