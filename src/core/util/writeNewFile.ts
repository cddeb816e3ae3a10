/**
 * Writes a file for a person who named it (`srpo-lab export --out FILE`) without clobbering
 * anything by accident:
 * - an existing file is refused unless `force` is set;
 * - a symbolic link at the destination is refused, even with `force`: writing through it would
 *   replace its target's contents (possibly a file far from where the person looked), and
 *   replacing the link itself would undo a link someone made on purpose. The refusal says so and
 *   names the link; the person removes it or picks another name;
 * - anything else that is not a regular file (a folder, a pipe, a device) is refused;
 * - the text is written to a hidden temporary file in the destination's folder (created with
 *   O_EXCL, so never through a link) and then moved into place: a reader never sees half a file,
 *   and a failure leaves the destination as it was. Without `force` the move is a hard link,
 *   which fails if a file appeared at the destination meanwhile (a rename would replace it); on a
 *   file system without hard links it falls back to a rename after checking again. Rename
 *   replaces a name and never follows a link there.
 * Every file-system error names the path in words (fsErrors.ts).
 *
 * Not here: folders (models/hf/saveModel.ts writeFolderAtomically). Node only (node:fs).
 * Tested by test/cli/exportFiles.test.ts.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { errnoCode, fsError, lstatOrNull, withFsError } from './fsErrors';

export interface WriteNewFileOptions {
  /** Replace an existing regular file (never a link, a folder or a device). */
  force?: boolean;
}

/** Why an existing destination is refused, or null when it may be written. */
function refusal(target: string, st: fs.Stats | null, force: boolean): string | null {
  if (!st) return null;
  if (st.isSymbolicLink()) {
    let to = '';
    try {
      to = ` (to ${fs.readlinkSync(target)})`;
    } catch {
      // A link that cannot be read is refused all the same.
    }
    return `${target}: is a symbolic link${to}; not writing through it, even with --force (remove the link or choose another file name)`;
  }
  if (st.isDirectory()) return `${target}: is a folder; name a file to write`;
  if (!st.isFile()) return `${target}: exists and is not a regular file (a pipe, socket or device); choose another file name`;
  return force ? null : `${target}: already exists; add --force to replace it, or choose another file name`;
}

/** Writes `text` to `dest` as described above; returns the absolute path written. */
export function writeNewFile(dest: string, text: string | Uint8Array, options: WriteNewFileOptions = {}): string {
  const force = options.force ?? false;
  const target = path.resolve(dest);
  const refused = refusal(target, lstatOrNull(target), force);
  if (refused) throw new Error(refused);
  const parent = path.dirname(target);
  const parentStat = lstatOrNull(parent);
  if (!parentStat) throw new Error(`${parent}: the folder to write ${path.basename(target)} in does not exist`);
  const tmp = path.join(parent, `.${path.basename(target)}.partial-${process.pid}-${randomBytes(4).toString('hex')}`);
  withFsError(target, 'write', () => fs.writeFileSync(tmp, text, { flag: 'wx' }));
  try {
    if (force) withFsError(target, 'replace', () => fs.renameSync(tmp, target));
    else moveIfAbsent(tmp, target);
  } finally {
    try {
      fs.unlinkSync(tmp);
    } catch {
      // Gone already: renamed into place.
    }
  }
  return target;
}

/** Moves `tmp` to `target` unless something is there by now (a hard link cannot replace a name). */
function moveIfAbsent(tmp: string, target: string): void {
  try {
    fs.linkSync(tmp, target);
    return;
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'EEXIST') {
      const again = refusal(target, lstatOrNull(target), false);
      throw new Error(again ?? `${target}: already exists; add --force to replace it, or choose another file name`);
    }
    // No hard links here (FAT, some network file systems): check again, then rename.
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw fsError(err, target, 'write');
  }
  const refused = refusal(target, lstatOrNull(target), false);
  if (refused) throw new Error(refused);
  withFsError(target, 'write', () => fs.renameSync(tmp, target));
}
