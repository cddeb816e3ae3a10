/**
 * Reads a JSON file that must be a regular file of at most `maxBytes` (./regularFile.ts: checked
 * before a byte is read, so a FIFO or /dev/zero in its place fails at once), naming it in every
 * error: `FILE: is a FIFO ...`, `FILE: is N bytes, over the limit ...`, `FILE: cannot read (...)`,
 * `FILE: not JSON (...)`. Used by the model folders' readers (Hugging Face config and generation
 * config, peft adapter configs), each with its file's limit from ../models/fileLimits.ts. Tested
 * through them: test/core/models/hf/config.test.ts, test/core/models/hf/fileChecks.test.ts.
 */
import { readRegularTextFile } from './regularFile';

/**
 * The words for a JSON number out of double range: JSON.parse reads 1e309 as Infinity, which
 * JSON.stringify would print as null. Callers say `field "x" ${NOT_FINITE}`.
 */
export const NOT_FINITE = `is out of range: a number beyond ${Number.MAX_VALUE} in size, which reads as infinity`;

/** A parsed JSON value for an error message: JSON text, except that a number out of range says so. */
export function jsonValueText(v: unknown): string {
  if (typeof v === 'number' && !Number.isFinite(v)) return `${v} (a number beyond ${Number.MAX_VALUE} in size)`;
  return JSON.stringify(v);
}

export function readJsonFile(file: string, maxBytes: number): unknown {
  const text = readRegularTextFile(file, maxBytes);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: not JSON (${(err as Error).message})`);
  }
}
