/**
 * File-system errors in words, naming the path: `PATH: cannot ACTION: WORDS (CODE)`, for example
 * `/data/out.csv: cannot write: permission denied (EACCES)`, instead of Node's
 * `ENOTDIR: not a directory, rmdir '…'`, which names the system call and not what the person
 * asked for. Also the two path questions the exports ask before writing: where a path that may
 * not exist yet would land once every symbolic link on the way is resolved, and whether one path
 * lies inside another.
 *
 * Used by `srpo-lab export` (util/writeNewFile.ts) and `export-model` (cli/exportModel.ts,
 * models/hf/saveModel.ts writeFolderAtomically). Node only (node:fs, node:path).
 * Tested by test/cli/exportFiles.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** What each errno code means, said as the end of "PATH: cannot ACTION: …". */
const ERRNO_WORDS: Record<string, string> = {
  ENOENT: 'it, or a folder on its way, does not exist',
  ENOTDIR: 'a part of the path is not a folder',
  EISDIR: 'it is a folder',
  EEXIST: 'it already exists',
  ENOTEMPTY: 'the folder is not empty',
  EACCES: 'permission denied',
  EPERM: 'the operation is not permitted',
  EROFS: 'the file system is read-only',
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EXDEV: 'it is on another file system',
  ELOOP: 'too many symbolic links on the way (a loop?)',
  ENAMETOOLONG: 'the name is too long',
  EBUSY: 'it is in use',
  EMFILE: 'too many files are open',
  EIO: 'an input/output error (the disk or the network file system)',
  EINVAL: 'the name or the operation is not valid here',
};

/** The errno code of a Node file-system error, or null for any other error. */
export function errnoCode(err: unknown): string | null {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : null;
}

/** "permission denied (EACCES)"; an unlisted code is given as "error CODE". */
export function errnoWords(err: unknown): string {
  const code = errnoCode(err);
  if (!code) return (err as Error)?.message ?? String(err);
  return `${ERRNO_WORDS[code] ?? 'a file-system error'} (${code})`;
}

/** `PATH: cannot ACTION: WORDS (CODE)` for a file-system error; any other error is returned as is. */
export function fsError(err: unknown, file: string, action: string): Error {
  if (!errnoCode(err)) return err instanceof Error ? err : new Error(String(err));
  return new Error(`${file}: cannot ${action}: ${errnoWords(err)}`);
}

/** Runs `fn`, turning a file-system error into one naming `file` and `action` in words. */
export function withFsError<T>(file: string, action: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw fsError(err, file, action);
  }
}

/** lstat that answers null for a path that does not exist (a link is described, not followed). */
export function lstatOrNull(file: string): fs.Stats | null {
  try {
    return fs.lstatSync(file);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return null;
    throw fsError(err, file, 'look at');
  }
}

/**
 * Where `file` lands once every symbolic link on its way is resolved, for a path that may not
 * exist yet: the real path of its nearest existing ancestor, with the missing part appended.
 */
export function realPathOfNew(file: string): string {
  const abs = path.resolve(file);
  let existing = abs;
  const missing: string[] = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync(existing), ...missing);
    } catch (err) {
      const parent = path.dirname(existing);
      if (parent === existing || (errnoCode(err) !== 'ENOENT' && errnoCode(err) !== 'ENOTDIR')) return abs;
      missing.unshift(path.basename(existing));
      existing = parent;
    }
  }
}

/** True when `child` is `parent` or lies under it (both absolute, compared as written). */
export function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}
