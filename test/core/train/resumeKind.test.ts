/**
 * A run checkpoint of the lab's former character Transformer (`policies.json` with modelKind
 * "lab", written before the one model family, decision 069) cannot be read by this version. A
 * resume of such a run is refused before any engine starts (the API's resumeRun, the CLI's
 * `resume`), with what to do instead, and nothing recorded is lost: the steps after the
 * checkpoint, which a resume would redo, are still there. openPolicies refuses it too.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/commands';
import type { CliIO } from '../../../src/cli/io';
import { presetConfig } from '../../../src/core/config';
import { LabService } from '../../../src/core/host/labService';
import type { EngineLauncher } from '../../../src/core/host/launcher';
import { runDirFor } from '../../../src/core/host/paths';
import { createRun } from '../../../src/core/host/runs';
import { checkResumeKind, openPolicies, POLICIES_FILE } from '../../../src/core/policies/registry';
import { LabStore } from '../../../src/core/store';
import { checkpointDir } from '../../../src/core/train/checkpoints';
import { makeStep } from '../store/fixtures/makeStep';

const NO_ENGINES: EngineLauncher = {
  launch: () => {
    throw new Error('an engine was launched: the resume should have been refused before');
  },
};

/** A lab with one run of 3 committed steps and a checkpoint of the former model after step 0. */
function formerLab(): { dbPath: string; ckpt: string } {
  const dir = mkdtempSync(join(tmpdir(), 'srpo-resumekind-'));
  const dbPath = join(dir, 'lab.db');
  const store = LabStore.open(dbPath);
  const id = createRun(store, { config: presetConfig('math-quick'), preset: 'math-quick' });
  const ckpt = checkpointDir(runDirFor(dbPath, id), 0);
  mkdirSync(join(ckpt, 'shared'), { recursive: true });
  writeFileSync(join(ckpt, POLICIES_FILE), JSON.stringify({ modelKind: 'lab', sharing: 'shared', policies: ['shared'] }));
  writeFileSync(join(ckpt, 'shared', 'config.json'), JSON.stringify({ dModel: 64, nLayers: 2 }));
  store.writeStep(id, { ...makeStep(0), checkpoint: { path: ckpt } });
  store.writeStep(id, makeStep(1));
  store.writeStep(id, makeStep(2));
  store.close();
  return { dbPath, ckpt };
}

const committed = (dbPath: string): number[] => {
  const store = LabStore.open(dbPath);
  try {
    return store.committedSteps(1);
  } finally {
    store.close();
  }
};

describe("a resume from the former lab model's checkpoint", () => {
  it('checkResumeKind and openPolicies refuse it, naming the folder and what to do', () => {
    const { ckpt } = formerLab();
    expect(() => checkResumeKind(ckpt)).toThrow(/former character Transformer \(model kind "lab"\)/);
    expect(() => checkResumeKind(ckpt)).toThrow(ckpt);
    expect(() => openPolicies(presetConfig('math-quick'), { baseDir: process.cwd(), resumeDir: ckpt })).toThrow(/start a new run from the same preset/);
    // A checkpoint of this version's kind, or none recorded, passes.
    const ok = mkdtempSync(join(tmpdir(), 'srpo-resumekind-ok-'));
    writeFileSync(join(ok, POLICIES_FILE), JSON.stringify({ modelKind: 'hf', sharing: 'shared', policies: ['shared'] }));
    expect(() => checkResumeKind(ok)).not.toThrow();
    expect(() => checkResumeKind(mkdtempSync(join(tmpdir(), 'srpo-resumekind-none-')))).not.toThrow();
  });

  it('the API refuses it before launching an engine, and no step is lost', async () => {
    const { dbPath } = formerLab();
    const service = new LabService({ dbPath, launcher: NO_ENGINES, maxEngines: 1 });
    try {
      await expect(service.call('resumeRun', { runId: 1 })).rejects.toThrow(/former character Transformer/);
    } finally {
      await service.close();
    }
    expect(committed(dbPath)).toEqual([0, 1, 2]);
  });

  it('the CLI refuses it the same way', async () => {
    const { dbPath } = formerLab();
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIO = { out: (l) => out.push(l), tty: null, launcher: NO_ENGINES, onInterrupt: () => () => {} };
    const code = await runCli(['resume', '1', '--db', dbPath], io, (l) => err.push(l));
    expect(code).not.toBe(0);
    expect(err.join('\n')).toMatch(/former character Transformer/);
    expect(committed(dbPath)).toEqual([0, 1, 2]);
  });
});
