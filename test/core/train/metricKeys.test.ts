/**
 * The metric catalogue against a real step (issue 29): a training step and an evaluation of the
 * lab's tiny model emit only catalogued keys, each from the producer the catalogue names (the
 * trainer merges through StepMetrics, which throws otherwise), and every key the dashboard,
 * Compare, the reports, `show` and the engine's step message show by default is among them.
 * `reward/mean` is the per-episode team reward: recomputed here from the step's stored episodes.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presetConfig } from '../../../src/core/config';
import { KEY_METRICS } from '../../../src/core/host/messages';
import { LabStore } from '../../../src/core/store';
import { Trainer } from '../../../src/core/train/trainer';
import { COMPARE_KEYS, DASHBOARD_PANELS, HEADLINE_KEYS, lookupMetric, METRICS, StepMetrics } from '../../../src/shared/metricCatalogue';
import { REPORT_CHART_KEYS } from '../../../src/shared/report';

const config = presetConfig('math-quick', {
  steps: 2,
  policies: { init: null, modelOverrides: { dModel: 32, nLayers: 1, nHeads: 2, contextLength: 192 } },
  tasks: { train: ['arith-easy'], eval: ['arith-easy'] },
  rollout: { tasksPerStep: 2, groupSize: 3, maxNewTokens: 10 },
  eval: { every: 1, n: 2, queries: 2 },
  checkpointEvery: 1,
});

describe('metric keys of a real step', () => {
  let trainer: Trainer;
  let store: LabStore;
  let runId: number;
  let keys: Set<string>;
  let training: Record<string, number>;

  beforeAll(async () => {
    store = LabStore.open(join(mkdtempSync(join(tmpdir(), 'srpo-metric-keys-')), 'lab.db'));
    runId = store.createRun({ name: 'keys', preset: 'math-quick', config, seed: config.seed, workflow: 'math', algorithm: 'srpo' });
    trainer = new Trainer({ config, runDir: mkdtempSync(join(tmpdir(), 'srpo-metric-keys-run-')), store, runId });
    // Step 0 evaluates (committed early) and trains; step 1 trains; step 2 is the final evaluation.
    const summaries = [];
    for (let s = 0; s <= 2; s++) summaries.push(await trainer.step(s));
    keys = new Set(summaries.flatMap((s) => Object.keys(s.metrics)));
    training = summaries[1].metrics;
  }, 120_000);
  afterAll(() => {
    trainer?.dispose();
    store?.close();
  });

  it('emits only catalogued keys', () => {
    expect([...keys].filter((k) => !lookupMetric(k))).toEqual([]);
    expect(keys.size).toBeGreaterThan(50);
  });

  it('emits every key the screens, reports, show and the step message show by default', () => {
    const shown = new Set<string>([
      ...DASHBOARD_PANELS.flatMap((p) => p.keys),
      ...COMPARE_KEYS,
      ...REPORT_CHART_KEYS,
      ...HEADLINE_KEYS,
      ...KEY_METRICS,
      'eval/arith-easy/avg',
      'eval/arith-easy/pass',
    ]);
    // clip/frac_low and ratio/min need a negative advantage / a counted unit: the step may lack them, the catalogue may not.
    expect([...shown].filter((k) => !keys.has(k))).toEqual([]);
  });

  it('reward/mean is the mean team reward per episode; the event view has its own key', () => {
    const episodes = store.db.raw.prepare("SELECT reward AS r FROM episodes WHERE run_id = ? AND step = 1 AND split = 'train'").all(runId) as { r: number }[];
    expect(episodes.length).toBe(6);
    const mean = episodes.reduce((a, e) => a + e.r, 0) / episodes.length;
    expect(training['reward/mean']).toBeCloseTo(mean, 12);
    expect(training['reward/event_mean']).toEqual(expect.any(Number));
  });
});

describe('StepMetrics', () => {
  it('refuses a key produced twice, naming both producers', () => {
    const m = new StepMetrics().add('rollout', { 'reward/mean': 1 });
    expect(() => m.add('batch', { 'reward/mean': 0.5 })).toThrow(/"reward\/mean" produced twice in one step: by rollout, then by batch/);
  });
  it('refuses a key outside the catalogue and a key from the wrong producer', () => {
    expect(() => new StepMetrics().add('engine', { 'made/up': 1 })).toThrow(/not in the metric catalogue/);
    expect(() => new StepMetrics().add('engine', { 'reward/mean': 1 })).toThrow(/catalogue says rollout produces it/);
  });
  it('reads patterns, exact keys first', () => {
    expect(lookupMetric('eval/macro/avg')?.info.title).toMatch(/macro/);
    expect(lookupMetric('eval/gsm8k/avg')?.params).toEqual({ benchmark: 'gsm8k' });
    expect(lookupMetric('time/step')?.info.pattern).toBe('time/step');
    expect(lookupMetric('time/rollout')?.params).toEqual({ phase: 'rollout' });
    expect(new Set(METRICS.map((x) => x.pattern)).size).toBe(METRICS.length);
  });
});
