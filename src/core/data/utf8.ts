/**
 * Strict UTF-8 for the data files (datasets, corpora): bytes that are not UTF-8 are refused with
 * an error naming the file and the line, instead of Node's `toString('utf8')` silently turning
 * them into U+FFFD (a dataset saved as Latin-1 then trains on replacement characters, and its
 * answers never match). The error never quotes the line: it says where, and what to do.
 *
 * The line is found by decoding line by line after a whole decode fails: a newline byte (0x0A)
 * never occurs inside a UTF-8 multi-byte sequence, so a text is valid exactly when each of its
 * lines is. A byte order mark is kept as U+FEFF, as `toString('utf8')` keeps it, so valid files
 * read exactly as before.
 *
 * corpusReader.ts's worker repeats decodeUtf8Lines in plain JS (it is evaluated from a string).
 * Node and browser-safe (TextDecoder). Tested by test/core/data/utf8.test.ts.
 */
import { readFileSync } from 'node:fs';

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The refusal: `FILE:LINE: not valid UTF-8 ...`. */
export function invalidUtf8Error(file: string, line: number): Error {
  return new Error(`${file}:${line}: not valid UTF-8 (a byte sequence that is no character); save the file as UTF-8`);
}

/**
 * `bytes` as text; throws invalidUtf8Error naming `file` and the 1-based line of the first invalid
 * byte, counting `linesBefore` lines already read (a chunk of a streamed file).
 */
export function decodeUtf8Lines(bytes: Uint8Array, file: string, linesBefore = 0): string {
  try {
    return strict.decode(bytes);
  } catch {
    let start = 0;
    let line = linesBefore;
    while (start < bytes.length) {
      line++;
      const nl = bytes.indexOf(0x0a, start);
      const end = nl < 0 ? bytes.length : nl + 1;
      try {
        strict.decode(bytes.subarray(start, end));
      } catch {
        throw invalidUtf8Error(file, line);
      }
      start = end;
    }
    throw invalidUtf8Error(file, line);
  }
}

/** A whole data file as strict UTF-8 text. */
export function readUtf8File(file: string): string {
  return decodeUtf8Lines(readFileSync(file), file);
}
