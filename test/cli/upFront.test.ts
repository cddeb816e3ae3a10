/**
 * The CLI's refusals that used to come late or point the wrong way (issue 30, point 8):
 * `model info --seq-len` beyond the model's positions, `export-model` on a run of the lab's former
 * character Transformer (it says why there is nothing to export and what to do, not `export`,
 * which writes metrics), and
 * `export-model --role` on a run whose one shared policy plays every role. The runs here are
 * store records with checkpoint folders, no engine: these refusals come before any weight is read.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LabStore } from '../../src/core/store';
import { runCliCaptured } from './harness';

const QWEN3 = resolve(__dirname, '../fixtures/hf/qwen3-tiny'); // max_position_embeddings 128

const cli = runCliCaptured;

const dir = mkdtempSync(join(tmpdir(), 'srpo-upfront-cli-'));
const db = join(dir, 'lab.db');

/** A run with one checkpoint (store record 0: after 1 update) whose policies.json says `listing` (none: the former lab model's oldest layout). */
function runWithCheckpoint(name: string, listing: Record<string, unknown> | null): { runId: number; ckpt: string } {
  const ckpt = join(dir, `ckpt-${name}`);
  mkdirSync(join(ckpt, 'shared'), { recursive: true });
  if (listing) writeFileSync(join(ckpt, 'policies.json'), JSON.stringify(listing));
  const store = LabStore.open(db);
  try {
    const runId = store.createRun({ name, config: { steps: 1 }, seed: 1, workflow: 'math', algorithm: 'srpo' });
    store.writeStep(runId, { step: 0, wallTime: Date.now(), metrics: {}, episodes: [], tokens: false, checkpoint: { path: ckpt } });
    return { runId, ckpt };
  } finally {
    store.close();
  }
}

describe('model info --seq-len', () => {
  it("beyond the model's positions is refused, naming max_position_embeddings and the most it takes", async () => {
    const r = await cli(['model', 'info', '--model', QWEN3, '--seq-len', '2048']);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain("--seq-len 2048 is longer than the model's 128 positions (max_position_embeddings in");
    expect(r.err).toContain('use --seq-len 128 or less');
    // At the limit it answers.
    const ok = await cli(['model', 'info', '--model', QWEN3, '--seq-len', '128']);
    expect(ok.code).toBe(0);
    expect(ok.out).toContain('sequences of 128');
  });
});

describe('export-model', () => {
  it("on a run of the lab's former character Transformer says why there is nothing to export and what to do, not `export`", async () => {
    for (const [name, listing] of [
      ['lab-old', null],
      ['lab', { modelKind: 'lab', policies: ['shared'] }],
    ] as const) {
      const { runId, ckpt } = runWithCheckpoint(name, listing);
      const r = await cli(['export-model', String(runId), '--db', db, '--out', join(dir, `out-${name}`)]);
      expect(r.code).not.toBe(0);
      expect(r.err).toContain(`run ${runId} trained the lab's former character Transformer`);
      expect(r.err).toContain(`its checkpoint in ${ckpt} is in that model's own format`);
      expect(r.err).toContain('a new run of the same preset trains a Hugging Face folder that export-model writes');
      expect(r.err).not.toMatch(/ export` for it/);
    }
  });

  it('--role on a run with one shared policy is refused, saying so', async () => {
    const { runId } = runWithCheckpoint('shared-hf', { modelKind: 'hf', policies: ['shared'] });
    const r = await cli(['export-model', String(runId), '--db', db, '--role', 'solver', '--out', join(dir, 'out-shared')]);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain(`run ${runId} has one shared policy (it plays every role): leave out --role "solver"`);
  });
});
