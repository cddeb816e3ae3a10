/**
 * Opening and reading files that must be regular files of a plausible size, checked before a
 * byte is read: a model folder's config.json linked to /dev/zero would otherwise be read until
 * memory runs out, and a FIFO in its place would block the open forever. Node: node:fs.
 *
 * Order: `stat` (follows symlinks, so a link to /dev/zero is a character device), refuse anything
 * but a regular file, refuse a size over the caller's limit; then open with O_NONBLOCK (a FIFO
 * swapped in after the stat does not block the open) and check the opened descriptor again with
 * `fstat`; read at most the size seen there. Errors name the file and say what it is in words.
 *
 * Not here: which limit each file gets (../models/fileLimits.ts). Tests:
 * test/core/models/hf/fileChecks.test.ts (through the model readers, and the reader itself).
 */
import * as fs from 'node:fs';

/** What a non-regular file is, in words; the first matching test wins. */
const KINDS: readonly [(s: fs.Stats) => boolean, string][] = [
  [(s) => s.isDirectory(), 'a folder'],
  [(s) => s.isFIFO(), 'a FIFO (named pipe)'],
  [(s) => s.isSocket(), 'a socket'],
  [(s) => s.isCharacterDevice(), 'a character device (such as /dev/zero)'],
  [(s) => s.isBlockDevice(), 'a block device'],
];

/** Bytes in words: exact, with MiB or kB beside large numbers. */
export function formatBytes(n: number): string {
  const exact = `${n.toLocaleString('en-US')} bytes`;
  if (n >= 1024 * 1024) return `${exact} (${(n / (1024 * 1024)).toFixed(1)} MiB)`;
  if (n >= 1024) return `${exact} (${(n / 1024).toFixed(1)} kB)`;
  return exact;
}

function errnoText(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return e.code ?? e.message;
}

/** A stat or open that failed (no such file, no permission): the message names the file, `code` is the errno name. */
export class FileAccessError extends Error {
  constructor(
    file: string,
    what: 'read' | 'open',
    readonly code: string,
  ) {
    super(`${file}: cannot ${what} (${code})`);
  }
}

/** Throws unless `st` is a regular file of at most `maxBytes`. */
function checkStats(file: string, st: fs.Stats, maxBytes: number): void {
  if (!st.isFile()) {
    const kind = KINDS.find(([test]) => test(st))?.[1] ?? 'not a regular file';
    throw new Error(`${file}: is ${kind}, not a regular file`);
  }
  if (st.size > maxBytes) throw new Error(`${file}: is ${formatBytes(st.size)}, over the limit of ${formatBytes(maxBytes)} for this file`);
}

/** Throws unless `file` (symlinks followed) is a regular file of at most `maxBytes`; returns its size. */
export function checkRegularFile(file: string, maxBytes = Number.POSITIVE_INFINITY): number {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (err) {
    throw new FileAccessError(file, 'read', errnoText(err));
  }
  checkStats(file, st, maxBytes);
  return st.size;
}

/** Opens a regular file of at most `maxBytes` for reading (header); the caller closes the descriptor. */
export function openRegularFile(file: string, maxBytes = Number.POSITIVE_INFINITY): number {
  checkRegularFile(file, maxBytes);
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (err) {
    throw new FileAccessError(file, 'open', errnoText(err));
  }
  try {
    checkStats(file, fs.fstatSync(fd), maxBytes);
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
  return fd;
}

/** The bytes of a regular file of at most `maxBytes` (header). */
export function readRegularFile(file: string, maxBytes: number): Buffer {
  const fd = openRegularFile(file, maxBytes);
  try {
    const size = fs.fstatSync(fd).size;
    const buf = Buffer.alloc(size);
    let done = 0;
    while (done < size) {
      const n = fs.readSync(fd, buf, done, size - done, done);
      if (n === 0) break; // the file shrank since the stat: what is there is what is read
      done += n;
    }
    return done === size ? buf : buf.subarray(0, done);
  } catch (err) {
    throw new Error(`${file}: cannot read (${errnoText(err)})`);
  } finally {
    fs.closeSync(fd);
  }
}

/** The text (UTF-8) of a regular file of at most `maxBytes`. */
export function readRegularTextFile(file: string, maxBytes: number): string {
  return readRegularFile(file, maxBytes).toString('utf8');
}
