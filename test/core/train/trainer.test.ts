/**
 * The training loop end to end on tiny policies: every step recorded in one store transaction
 * with its events, members and tokens; every SRPO.md diagnostic present and finite;
 * evaluations on schedule and at the end; a fixed seed reproduces a run; a run resumed from a
 * checkpoint continues exactly as the uninterrupted run; the search workflow runs with its
 * retriever.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { presetConfig } from '../../../src/core/config';
import { LabStore } from '../../../src/core/store';
import { Trainer, type StepSummary } from '../../../src/core/train/trainer';
import { checkpointDir } from '../../../src/core/train/checkpoints';

const TINY = { init: null, modelOverrides: { dModel: 32, nLayers: 1, nHeads: 2, contextLength: 192 } };
const small = (overrides: Record<string, unknown> = {}) =>
  presetConfig('math-quick', {
    steps: 3,
    policies: TINY,
    tasks: { train: ['arith-easy'], eval: ['arith-easy'] },
    rollout: { tasksPerStep: 2, groupSize: 3, maxNewTokens: 10 },
    eval: { every: 2, n: 2, queries: 2 },
    checkpointEvery: 1,
    ...overrides,
  });

const trainers: Trainer[] = [];
afterEach(() => trainers.splice(0).forEach((t) => t.dispose()));
function trainer(config: ReturnType<typeof small>, extra: Partial<ConstructorParameters<typeof Trainer>[0]> = {}): Trainer {
  const t = new Trainer({ config, runDir: mkdtempSync(join(tmpdir(), 'srpo-train-')), ...extra });
  trainers.push(t);
  return t;
}
// Wall times and memory (process-wide: other trainers of the same test file are alive) differ between twins.
const noTime = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('time/') && !k.startsWith('memory/')));

const DIAGNOSTICS = [
  'loss/policy',
  'grad/norm',
  'clip/frac_low',
  'clip/frac_high',
  'clip/frac',
  'ratio/mean',
  'ratio/min',
  'ratio/max',
  'ratio/log_abs_mean',
  'ratio/clamped',
  'kl/approx',
  'entropy',
  'set/size_mean',
  'events/complete',
  'events/dropped',
  'response/length_mean',
  'response/length_max',
  'response/truncated_frac',
  'reward/mean',
  'reward/std',
  'adv/mean',
  'adv/std',
  'adv/abs_max',
  'groups/zero_std_frac',
  'groups/singleton',
  'cost/tokens',
  'cost/calls',
  'cost/tool_calls',
  'time/rollout',
  'time/old_logp',
  'time/update',
  'role/solver/valid_rate',
];

describe('trainer', () => {
  it('records every step, its events and members, evaluations on schedule and every diagnostic', async () => {
    const config = small();
    const store = LabStore.open(':memory:');
    const runId = store.createRun({ name: 't', preset: 'math-quick', config, seed: config.seed, workflow: 'math', algorithm: 'srpo' });
    const t = trainer(config, { store, runId });
    const steps: StepSummary[] = [];
    for (const s of t.remainingSteps()) steps.push(await t.step(s));
    expect(store.committedSteps(runId)).toEqual([0, 1, 2, 3]);
    expect(steps[3].final).toBe(true);
    expect([...new Set(store.evaluations(runId).map((e) => e.step))]).toEqual([0, 2, 3]);
    for (const key of DIAGNOSTICS) {
      expect(steps[0].metrics[key], key).toBeDefined();
      expect(Number.isFinite(steps[0].metrics[key]), key).toBe(true);
    }
    expect(steps[0].metrics['set/size_hist/2']).toBeGreaterThan(0); // the K = 2 solver sets
    const page = store.listEvents(runId, { fromStep: 1, toStep: 1 }, { limit: 500 });
    expect(page.events.length).toBe(steps[1].metrics['events/complete'] + steps[1].metrics['events/dropped']);
    const detail = store.getEvent(page.events.find((e) => e.kind === 'solve')!.id)!;
    expect(detail.members).toHaveLength(detail.expectedK);
    for (const m of detail.members) {
      expect(m.tokens).not.toBeNull();
      expect(m.tokens!.logpOld.length).toBe(m.tokens!.outputTokens.length);
      expect(m.policyVersion).toBeGreaterThanOrEqual(0);
    }
    expect(store.checkpoints(runId).map((c) => c.step)).toEqual([0, 1, 2]);
    store.close();
  });

  it('reproduces a run from its seed', async () => {
    const a = trainer(small({ steps: 1, eval: { every: 0 } }));
    const b = trainer(small({ steps: 1, eval: { every: 0 } }));
    expect(noTime((await a.step(0)).metrics)).toEqual(noTime((await b.step(0)).metrics));
    const c = trainer(small({ steps: 1, eval: { every: 0 }, seed: 2 }));
    expect(noTime((await c.step(0)).metrics)).not.toEqual(noTime((await a.step(0)).metrics));
  });

  it('resumes from a checkpoint exactly where the uninterrupted run would be', async () => {
    const config = small({ eval: { every: 0 } });
    const straight = trainer(config);
    const full: StepSummary[] = [];
    for (const s of [0, 1, 2]) full.push(await straight.step(s));
    const first = trainer(config);
    await first.step(0);
    await first.step(1);
    const resumed = trainer(config, { resume: { dir: checkpointDir(first.runDir, 1), step: 1 } });
    expect(resumed.startStep).toBe(2);
    expect(resumed.policies.policies().map((p) => p.version)).toEqual(
      straight.policies.policies().map((p) => p.version - (full[2].metrics['update/applied'] ?? 0)),
    );
    expect(noTime((await resumed.step(2)).metrics)).toEqual(noTime(full[2].metrics));
  });

  it('runs the search workflow with its retriever', async () => {
    const config = presetConfig('search-quick', {
      steps: 1,
      policies: { ...TINY, modelOverrides: { ...TINY.modelOverrides, contextLength: 512 } },
      rollout: { tasksPerStep: 2, groupSize: 2, maxNewTokens: 12 },
      eval: { every: 0 },
      checkpointEvery: 0,
    });
    const s = await trainer(config).step(0);
    expect(s.metrics['events/complete']).toBeGreaterThan(0);
    expect(Number.isFinite(s.metrics['loss/policy'])).toBe(true);
  });
});
