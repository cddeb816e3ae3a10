/**
 * A read-only lab database is readable: a file with mode 0444, in a read-only folder (where SQLite
 * cannot create the WAL's -shm file) or a writable one, opens read-only for every read command
 * (`runs`, `show`, `export`) and for LabService (`serve`, the desktop app), which refuses the
 * writes with a message naming the file. The file keeps every byte.
 *
 * File modes mean nothing to root, so when the tests run as root the commands run in child
 * processes as user `nobody` (uid 65534); otherwise as the current user. Either way they are real
 * processes: the installed `srpo-lab` shim, and fixtures/readonlyService.ts under tsx.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presetConfig } from '../../../src/core/config';
import { createRun } from '../../../src/core/host/runs';
import { LabStore } from '../../../src/core/store';
import { makeStep } from './fixtures/makeStep';

const ROOT = resolve(__dirname, '../../..');
const AS_OTHER_USER = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
const RUN_NAME = 'kept-read-only';

function sha(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

function run(args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { ...process.env, HOME: tmpdir() }, ...AS_OTHER_USER });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const cli = (argv: string[]) => run([join(ROOT, 'src/cli/srpo-lab.cjs'), ...argv]);

/** A lab with one run of one committed step, its folder traversable by everyone. */
function makeLab(): { dir: string; dbPath: string } {
  const parent = mkdtempSync(join(tmpdir(), 'srpo-readonly-'));
  chmodSync(parent, 0o755);
  const dir = join(parent, 'lab');
  const dbPath = join(dir, 'lab.db');
  mkdirSync(dir);
  const store = LabStore.open(dbPath);
  const id = createRun(store, { config: presetConfig('math-quick', { name: RUN_NAME }), preset: 'math-quick' });
  store.writeStep(id, makeStep(0));
  store.close();
  return { dir, dbPath };
}

const SCENARIOS = {
  'a 0444 file in a read-only folder': { fileMode: 0o444, dirMode: 0o555 },
  'a 0444 file in a writable folder': { fileMode: 0o444, dirMode: 0o777 },
} satisfies Record<string, { fileMode: number; dirMode: number }>;

// As root the commands run as `nobody`, who must be able to run this very Node: not so when it
// lives under root's home (e.g. a Node fetched into ~/.cache by scripts/node-lts.mjs). Then the
// read-only behaviour cannot be shown (root ignores file modes): skip, saying so.
const NODE_RUNS_AS_OTHER = spawnSync(process.execPath, ['-e', '0'], { ...AS_OTHER_USER }).status === 0;
if (!NODE_RUNS_AS_OTHER) {
  console.log(`SKIP read-only database tests: user nobody cannot run ${process.execPath} (root ignores file modes, so they need another user)`);
}

for (const [what, { fileMode, dirMode }] of Object.entries(SCENARIOS)) {
  describe.skipIf(!NODE_RUNS_AS_OTHER)(`${what} opens read-only`, () => {
    let lab: { dir: string; dbPath: string };
    let before: string;

    beforeAll(() => {
      lab = makeLab();
      chmodSync(lab.dbPath, fileMode);
      chmodSync(lab.dir, dirMode);
      before = sha(lab.dbPath);
    });

    afterAll(() => {
      chmodSync(lab.dir, 0o755);
      rmSync(join(lab.dir, '..'), { recursive: true, force: true });
    });

    it('runs lists the run', () => {
      const r = cli(['runs', '--db', lab.dbPath]);
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      expect(r.out).toContain(RUN_NAME);
    });

    it('show shows it, with its committed step', () => {
      const r = cli(['show', '1', '--db', lab.dbPath]);
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      expect(r.out).toContain(`run 1 "${RUN_NAME}"`);
      expect(r.out).toMatch(/progress\s+1\/\d+ steps/); // one update committed (src/shared/stepConvention.ts)
    });

    it('export writes its metrics', () => {
      const r = cli(['export', '1', '--format', 'csv', '--db', lab.dbPath]);
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      expect(r.out.split('\n')[0]).toBe('run,step,key,value,wall_time'); // the UI's metrics CSV
      expect(r.out.split('\n').length).toBeGreaterThan(2);
    });

    it('LabService (serve) reads through the API and refuses writes naming the file', () => {
      const r = run(['-r', 'tsx/cjs', join(ROOT, 'test/core/store/fixtures/readonlyService.ts'), lab.dbPath]);
      expect(r.code, r.err).toBe(0);
      const result = JSON.parse(r.out.trim().split('\n').pop()!);
      expect(result.readonly).toBe(true);
      expect(result.runs).toEqual([RUN_NAME]);
      expect(result.detail).toEqual({ name: RUN_NAME, lastStep: 0 });
      expect(result.metricKeys).toBeGreaterThan(0);
      for (const write of ['createRun', 'startRun', 'deleteRun']) {
        expect(result[write], write).toContain(lab.dbPath);
        expect(result[write], write).toMatch(/read-?only/);
      }
    });

    it('the file is unchanged', () => {
      expect(sha(lab.dbPath)).toBe(before);
      expect(readdirSync(lab.dir).filter((n) => n.startsWith('lab.db') && !/-(wal|shm)$/.test(n))).toEqual(['lab.db']);
    });
  });
}
