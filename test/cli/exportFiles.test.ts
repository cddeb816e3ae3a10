/**
 * Exports never clobber (issue 26, point 8). `export --out` overwrote an existing file and wrote
 * through a symbolic link, replacing its target's contents; `export-model --out` inside the run's
 * own checkpoint folder was accepted (the next save of that step would remove it); onto a
 * symlinked or dangling destination it answered with raw `ENOTDIR ... rmdir` / `rename` messages.
 * Now: an existing file is kept unless --force, a link is refused even with --force (its target
 * untouched), the file appears whole through a temporary name (none left behind); a destination
 * inside the database's run folders is refused, also when reached through a link; every
 * file-system error names the path in words.
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFolderAtomically } from '../../src/core/models/hf/saveModel';
import { LabStore } from '../../src/core/store';
import { runCliCaptured } from './harness';

const cli = runCliCaptured;

/** Node's raw messages, which name a system call instead of saying what went wrong. */
const RAW = /ENOTDIR: |EEXIST: |ENOENT: |EISDIR: |\b(rmdir|rename|open|mkdir|lstat) '/;

const dir = mkdtempSync(join(tmpdir(), 'srpo-exportfiles-'));
const db = join(dir, 'lab.db');
let runId = 0;

beforeAll(() => {
  const store = LabStore.open(db);
  runId = store.createRun({ name: 'r', config: { steps: 1 }, seed: 1, workflow: 'math', algorithm: 'srpo' });
  store.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const exportCsv = (out: string, ...more: string[]) => cli(['export', String(runId), '--format', 'csv', '--out', out, '--db', db, ...more]);
const leftovers = (folder: string) => readdirSync(folder).filter((n) => n.includes('.partial-'));

describe('export --out never clobbers', () => {
  it('writes a new file, then refuses to replace it unless --force', async () => {
    const file = join(dir, 'run.csv');
    const first = await exportCsv(file);
    expect(first.err).toBe('');
    expect(readFileSync(file, 'utf8').split('\n')[0]).toBe('run,step,key,value,wall_time');
    writeFileSync(file, 'my notes\n');
    const again = await exportCsv(file);
    expect(again.code).toBe(1);
    expect(again.err).toBe(`srpo-lab export: ${file}: already exists; add --force to replace it, or choose another file name`);
    expect(readFileSync(file, 'utf8')).toBe('my notes\n');
    const forced = await exportCsv(file, '--force');
    expect(forced.err).toBe('');
    expect(readFileSync(file, 'utf8').split('\n')[0]).toBe('run,step,key,value,wall_time');
    expect(leftovers(dir)).toEqual([]);
  });

  it("refuses a symbolic link at the destination, even with --force; the link's target keeps its contents", async () => {
    const target = join(dir, 'precious.txt');
    writeFileSync(target, 'do not touch\n');
    const link = join(dir, 'link.csv');
    symlinkSync(target, link);
    for (const force of [[], ['--force']]) {
      const r = await exportCsv(link, ...force);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(new RegExp(`^srpo-lab export: ${link}: is a symbolic link \\(to ${target}\\); not writing through it, even with --force`));
    }
    expect(readFileSync(target, 'utf8')).toBe('do not touch\n');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    // A dangling link: nothing is created where it points.
    const nowhere = join(dir, 'nowhere.csv');
    const dangling = join(dir, 'dangling.csv');
    symlinkSync(nowhere, dangling);
    const d = await exportCsv(dangling, '--force');
    expect(d.code).toBe(1);
    expect(d.err).toMatch(/is a symbolic link/);
    expect(existsSync(nowhere)).toBe(false);
    expect(leftovers(dir)).toEqual([]);
  });

  it('says in words what is wrong with a folder, a missing folder or a path through a file', async () => {
    const folder = join(dir, 'a-folder');
    mkdirSync(folder);
    expect((await exportCsv(folder, '--force')).err).toBe(`srpo-lab export: ${folder}: is a folder; name a file to write`);
    const missing = join(dir, 'no-such-folder', 'run.csv');
    expect((await exportCsv(missing)).err).toBe(`srpo-lab export: ${join(dir, 'no-such-folder')}: the folder to write run.csv in does not exist`);
    const plain = join(dir, 'plain.txt');
    writeFileSync(plain, 'x');
    const through = await exportCsv(join(plain, 'run.csv'));
    expect(through.err).toBe(`srpo-lab export: ${join(plain, 'run.csv')}: cannot look at: a part of the path is not a folder (ENOTDIR)`);
    expect(through.err).not.toMatch(RAW);
  });
});

describe('export-model --out', () => {
  it("refuses a destination inside the database's run folders, also through a link", async () => {
    const runs = join(dir, 'lab.db.runs', String(runId), 'checkpoints');
    mkdirSync(runs, { recursive: true });
    for (const out of [join(runs, 'step-000001', 'exported'), join(dir, 'lab.db.runs', 'x'), join(dir, 'runs', '1', 'model')]) {
      const r = await cli(['export-model', String(runId), '--db', db, '--out', out]);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(new RegExp(`^srpo-lab export-model: ${out}: is inside the run folders of ${db}`));
    }
    // A link outside that leads inside.
    const door = join(dir, 'door');
    symlinkSync(runs, door);
    const via = await cli(['export-model', String(runId), '--db', db, '--out', join(door, 'model')]);
    expect(via.code).toBe(1);
    expect(via.err).toMatch(/is inside the run folders of/);
    expect(readdirSync(runs)).toEqual([]);
  });

  it('answers a symlinked or dangling destination in words naming the path, never ENOTDIR ... rmdir / rename', async () => {
    const empty = join(dir, 'empty-folder');
    mkdirSync(empty);
    const toEmpty = join(dir, 'to-empty');
    symlinkSync(empty, toEmpty);
    const dangling = join(dir, 'to-nothing');
    symlinkSync(join(dir, 'nothing-here'), dangling);
    for (const out of [toEmpty, dangling]) {
      const r = await cli(['export-model', String(runId), '--db', db, '--out', out]);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(
        new RegExp(`^srpo-lab export-model: ${out}: is a symbolic link \\(to .+\\); the export writes a new folder and does not follow or replace links`),
      );
      expect(r.err).not.toMatch(RAW);
    }
    // The writer itself (the adapter and model savers share it) refuses both the same way.
    for (const out of [toEmpty, dangling]) {
      expect(() => writeFolderAtomically(out, (tmp) => writeFileSync(join(tmp, 'x'), 'x'))).toThrow(/is a symbolic link/);
    }
    expect(readdirSync(empty)).toEqual([]);
    expect(existsSync(join(dir, 'nothing-here'))).toBe(false);
    expect(leftovers(dir)).toEqual([]);
  });

  it('a failure while writing names the destination in words and leaves nothing behind', () => {
    const plain = join(dir, 'a-file');
    writeFileSync(plain, 'x');
    const dest = join(plain, 'model');
    let msg = '';
    try {
      writeFolderAtomically(dest, () => undefined);
    } catch (err) {
      msg = (err as Error).message;
    }
    expect(msg).toBe(`${dest}: cannot look at: a part of the path is not a folder (ENOTDIR)`);
  });
});
