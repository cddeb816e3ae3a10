/**
 * Run folders belong to one database. Two databases in one folder (`A.db`, `B.db`, each with a
 * run 1) keep their checkpoints and STOP flags apart, and deleting B's run 1 leaves A's files.
 * Folders of the old shared layout (`<dir>/runs/<id>/`) are moved beside their database with the
 * checkpoint rows rewritten when it is unambiguous which database they belong to, and left where
 * they are (saying why) when it is not. A checkpoint folder missing on disk is an error naming
 * the run, the step and the path.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/commands';
import type { CliIO } from '../../../src/cli/io';
import { presetConfig } from '../../../src/core/config';
import { LabService } from '../../../src/core/host/labService';
import type { EngineLauncher } from '../../../src/core/host/launcher';
import { legacyRunsRootFor, runDirFor, runsRootFor, stopFlagPath } from '../../../src/core/host/paths';
import { adoptLegacyRunFolders } from '../../../src/core/host/runFolders';
import { createRun } from '../../../src/core/host/runs';
import { checkpointDir } from '../../../src/core/train/checkpoints';
import { LabStore } from '../../../src/core/store';
import { makeStep } from '../store/fixtures/makeStep';

const NO_ENGINES: EngineLauncher = {
  launch: () => {
    throw new Error('no engine in this test');
  },
};

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'srpo-runfolders-'));
}

/** A run with committed steps 0..`steps`-1 and a checkpoint row for each, at `checkpointPath(step)`. */
function addRun(store: LabStore, checkpointPath: (runId: number, step: number) => string, steps = 1): number {
  const id = createRun(store, { config: presetConfig('math-quick'), preset: 'math-quick' });
  for (let s = 0; s < steps; s++) store.writeStep(id, { ...makeStep(s), checkpoint: { path: checkpointPath(id, s) } });
  return id;
}

/** Writes a file into a checkpoint folder saying whose it is. */
function writeCheckpoint(dir: string, owner: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'owner.txt'), owner);
}

describe('two databases in one folder', () => {
  it('keep their run 1 folders, checkpoints and STOP flags apart; deleting B run 1 leaves A files', async () => {
    const dir = tempDir();
    const a = join(dir, 'A.db');
    const b = join(dir, 'B.db');
    const stores = { A: LabStore.open(a), B: LabStore.open(b) };
    const ids = {
      A: addRun(stores.A, (id, s) => checkpointDir(runDirFor(a, id), s)),
      B: addRun(stores.B, (id, s) => checkpointDir(runDirFor(b, id), s)),
    };
    expect(ids).toEqual({ A: 1, B: 1 });
    stores.A.close();
    stores.B.close();

    expect(runDirFor(a, 1)).not.toBe(runDirFor(b, 1));
    expect(stopFlagPath(runDirFor(a, 1))).not.toBe(stopFlagPath(runDirFor(b, 1)));
    writeCheckpoint(checkpointDir(runDirFor(a, 1), 0), 'A');
    writeCheckpoint(checkpointDir(runDirFor(b, 1), 0), 'B');
    writeFileSync(stopFlagPath(runDirFor(b, 1)), 'stop B\n');
    expect(readFileSync(join(checkpointDir(runDirFor(a, 1), 0), 'owner.txt'), 'utf8')).toBe('A');
    expect(existsSync(stopFlagPath(runDirFor(a, 1)))).toBe(false);

    const service = new LabService({ dbPath: b, launcher: NO_ENGINES, maxEngines: 1 });
    try {
      expect(await service.call('deleteRun', { runId: 1 })).toEqual({ deleted: true });
    } finally {
      await service.close();
    }
    expect(existsSync(runDirFor(b, 1))).toBe(false);
    expect(readFileSync(join(checkpointDir(runDirFor(a, 1), 0), 'owner.txt'), 'utf8')).toBe('A');
    const after = LabStore.open(a);
    expect(after.checkpoints(1).map((c) => c.path)).toEqual([checkpointDir(runDirFor(a, 1), 0)]);
    after.close();
  });

  it('the run folder is named after the database file, beside it', () => {
    expect(runsRootFor('/labs/mq.db')).toBe('/labs/mq.db.runs');
    expect(runDirFor('/labs/mq.db', 3)).toBe('/labs/mq.db.runs/3');
    expect(runDirFor('/labs/sq.db', 3)).toBe('/labs/sq.db.runs/3');
  });
});

/** A lab of the old layout: `lab.db` with runs whose checkpoints sit in `<dir>/runs/<id>/`. */
function oldLayoutLab(runs = 2): { dir: string; dbPath: string; legacy: string } {
  const dir = tempDir();
  const dbPath = join(dir, 'lab.db');
  const legacy = legacyRunsRootFor(dbPath);
  const store = LabStore.open(dbPath);
  for (let r = 0; r < runs; r++) addRun(store, (id, s) => checkpointDir(join(legacy, String(id)), s), 2);
  store.close();
  for (let id = 1; id <= runs; id++) for (const s of [0, 1]) writeCheckpoint(checkpointDir(join(legacy, String(id)), s), `lab.db run ${id} step ${s}`);
  return { dir, dbPath, legacy };
}

describe('moving folders of the old layout', () => {
  it('moves runs/<id> beside its only database, rewrites the checkpoint rows, and says so', () => {
    const { dbPath, legacy } = oldLayoutLab();
    const store = LabStore.open(dbPath);
    const report = adoptLegacyRunFolders(store, dbPath);
    expect(report.moved).toEqual([1, 2]);
    expect(report.left).toBe(false);
    expect(report.message).toContain(`moved the folders of runs 1, 2 from ${legacy} to ${runsRootFor(dbPath)}`);
    expect(existsSync(legacy)).toBe(false);
    for (const id of [1, 2]) {
      const rows = store.checkpoints(id);
      expect(rows.map((c) => c.path)).toEqual([0, 1].map((s) => checkpointDir(runDirFor(dbPath, id), s)));
      for (const c of rows) expect(readFileSync(join(c.path, 'owner.txt'), 'utf8')).toBe(`lab.db run ${id} step ${c.step}`);
    }
    expect(adoptLegacyRunFolders(store, dbPath)).toEqual({ moved: [], left: false, message: null });
    store.close();
  });

  it('LabService (serve, the desktop app) moves them when it opens the lab', async () => {
    const { dbPath, legacy } = oldLayoutLab(1);
    const service = new LabService({ dbPath, launcher: NO_ENGINES, maxEngines: 1 });
    await service.close();
    expect(existsSync(legacy)).toBe(false);
    expect(readFileSync(join(checkpointDir(runDirFor(dbPath, 1), 1), 'owner.txt'), 'utf8')).toBe('lab.db run 1 step 1');
  });

  /** Each way the owner of runs/ is ambiguous, and what the message must say. */
  const AMBIGUOUS = {
    'another lab database in the folder': {
      arrange: (dir: string) => LabStore.open(join(dir, 'other.db')).close(),
      says: 'other.db',
    },
    'a folder that is not a run of this database': {
      arrange: (dir: string) => writeCheckpoint(join(dir, 'runs', '7'), 'someone'),
      says: 'runs/7 is not a run of lab.db',
    },
    'the new folder exists already': {
      arrange: (dir: string) => mkdirSync(join(dir, 'lab.db.runs', '2'), { recursive: true }),
      says: 'already exists',
    },
  } satisfies Record<string, { arrange: (dir: string) => void; says: string }>;

  for (const [what, { arrange, says }] of Object.entries(AMBIGUOUS)) {
    it(`leaves everything where it is with ${what}, and says why`, () => {
      const { dir, dbPath, legacy } = oldLayoutLab();
      arrange(dir);
      const store = LabStore.open(dbPath);
      const rowsBefore = [1, 2].map((id) => store.checkpoints(id));
      const report = adoptLegacyRunFolders(store, dbPath);
      expect(report.moved).toEqual([]);
      expect(report.left).toBe(true);
      expect(report.message).toContain(`run folders in ${legacy} left where they are`);
      expect(report.message).toContain(says);
      expect([1, 2].map((id) => store.checkpoints(id))).toEqual(rowsBefore);
      expect(readFileSync(join(checkpointDir(join(legacy, '2'), 1), 'owner.txt'), 'utf8')).toBe('lab.db run 2 step 1');
      store.close();
    });
  }

  it('moves nothing through a read-only connection', () => {
    const { dbPath, legacy } = oldLayoutLab(1);
    const store = LabStore.open(dbPath, { readonly: true });
    const report = adoptLegacyRunFolders(store, dbPath);
    expect(report.left).toBe(true);
    expect(report.message).toContain('read-only');
    expect(existsSync(join(legacy, '1'))).toBe(true);
    store.close();
  });

  it('repairs rows left pointing into runs/<id> by a move whose transaction never committed', () => {
    const { dbPath, legacy } = oldLayoutLab(1);
    const store = LabStore.open(dbPath);
    // The rename happened, the row update did not (a crash between the two).
    mkdirSync(runsRootFor(dbPath));
    renameSync(join(legacy, '1'), runDirFor(dbPath, 1));
    adoptLegacyRunFolders(store, dbPath);
    expect(store.checkpoints(1).map((c) => c.path)).toEqual([0, 1].map((s) => checkpointDir(runDirFor(dbPath, 1), s)));
    store.close();
  });
});

describe('a checkpoint folder missing on disk', () => {
  it('eval says which run, step and path, not a raw ENOENT', async () => {
    const dir = tempDir();
    const dbPath = join(dir, 'lab.db');
    const gone = join(dir, 'elsewhere', 'step-000000');
    const store = LabStore.open(dbPath);
    addRun(store, () => gone);
    store.close();
    const err: string[] = [];
    const io: CliIO = { out: () => {}, tty: null, launcher: NO_ENGINES, onInterrupt: () => () => {} };
    const code = await runCli(['eval', '1', '--db', dbPath], io, (l) => err.push(l));
    expect(code).toBe(1);
    const message = err.join('\n');
    expect(message).toContain('the checkpoint of step 1'); // record 0's checkpoint holds 1 update (shared/stepConvention.ts)
    expect(message).toContain('run 1');
    expect(message).toContain(gone);
    expect(message).not.toMatch(/ENOENT/);
  });
});
