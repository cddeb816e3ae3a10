/**
 * Evaluation episodes in the store (issue 17, item 6): a short run stores every evaluation's
 * episodes with split 'eval' and the evaluation's step, the API's `listEvents` with split=eval
 * returns their events (and split=train none of them), and the stored rows agree with the
 * recorded Avg@n (the mean of their correctness and of their rewards, worked out here from the
 * rows); eval.storeQueries caps them, eval.storeEpisodes=false stores none, and token detail is
 * stored only with eval.storeTokens; a crash after a
 * step's early evaluation commits, before the step does, is redone once by the resume, giving
 * the rows the uninterrupted run stores; the store writes them all or nothing.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { presetConfig } from '../../../src/core/config';
import { LabService } from '../../../src/core/host/labService';
import { NodeForkLauncher } from '../../../src/core/host/launcher';
import { LabStore } from '../../../src/core/store';
import type { EpisodeDetail, EventSummary } from '../../../src/core/store/records';
import type { ApiOutputs } from '../../../src/shared/api';
import { Trainer } from '../../../src/core/train/trainer';
import { makeStep } from '../store/fixtures/makeStep';

/** The preset's warm-started policy (d64 x 2): it solves some arith-chain queries, so Avg@n is not 0. */
const warm = (overrides: Record<string, unknown> = {}) =>
  presetConfig('math-quick', {
    steps: 2,
    rollout: { tasksPerStep: 2, groupSize: 2 },
    eval: { every: 1, n: 2, queries: 6, storeTokens: true },
    checkpointEvery: 1,
    ...overrides,
  });
/** A random tiny policy (~0.3 s a step): for what does not need right answers. */
const tiny = (overrides: Record<string, unknown> = {}) =>
  presetConfig('math-quick', {
    steps: 3,
    policies: { init: null, modelOverrides: { dModel: 32, nLayers: 1, nHeads: 2, contextLength: 192 } },
    tasks: { train: ['arith-easy'], eval: ['arith-easy'] },
    rollout: { tasksPerStep: 2, groupSize: 2, maxNewTokens: 8 },
    eval: { every: 2, n: 2, queries: 3, storeTokens: true },
    checkpointEvery: 1,
    ...overrides,
  });

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});
function trainer(config: ReturnType<typeof tiny>, store: LabStore, runId: number, resume?: { dir: string; step: number }): Trainer {
  const t = new Trainer({ config, runDir: mkdtempSync(join(tmpdir(), 'srpo-evalep-')), store, runId, resume });
  closers.push(() => t.dispose());
  return t;
}
function newRun(store: LabStore, config: ReturnType<typeof tiny>): number {
  return store.createRun({ name: 'evalep', preset: 'math-quick', config, seed: config.seed, workflow: 'math', algorithm: 'srpo' });
}
/** Every event of a filter, through all pages. */
function allEvents(store: LabStore, runId: number, filter: Parameters<LabStore['listEvents']>[1]): EventSummary[] {
  const out: EventSummary[] = [];
  let after: EventSummary | null = null;
  do {
    const page = store.listEvents(runId, filter, { limit: 1000, after });
    out.push(...page.events);
    after = page.next ? out[out.length - 1] : null;
  } while (after);
  return out;
}
/** The eval episodes of a run by step, read back whole (events and members). */
function evalEpisodes(store: LabStore, runId: number): Map<number, EpisodeDetail[]> {
  const ids = [...new Set(allEvents(store, runId, { split: 'eval' }).map((e) => e.episodeId))];
  const byStep = new Map<number, EpisodeDetail[]>();
  for (const id of ids) {
    const ep = store.getEpisode(id)!;
    byStep.set(ep.step, [...(byStep.get(ep.step) ?? []), ep]);
  }
  return byStep;
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('evaluation episodes in the store', () => {
  it("a short run stores each evaluation's episodes as split eval; their mean reward is the recorded Avg@n; the API filters them", async () => {
    const service = new LabService({ dbPath: join(mkdtempSync(join(tmpdir(), 'srpo-evalep-')), 'lab.db'), launcher: new NodeForkLauncher({ stdio: 'pipe' }) });
    closers.push(() => service.close());
    const store = service.store;
    const config = warm();
    const runId = newRun(store, config);
    const t = trainer(config, store, runId);
    for (const s of t.remainingSteps()) await t.step(s);
    expect(store.committedSteps(runId)).toEqual([0, 1, 2]);

    // Through the API (input validated, the handler the UI calls), every page.
    const viaApi = async (filter: Record<string, unknown>) => {
      const out: EventSummary[] = [];
      let after: { step: number; id: number } | null = null;
      do {
        const page: ApiOutputs['listEvents'] = await service.call('listEvents', { runId, filter, limit: 1000, after });
        out.push(...page.events);
        after = page.next;
      } while (after);
      return out;
    };
    const evalEvents = await viaApi({ split: 'eval' });
    const trainEvents = await viaApi({ split: 'train' });
    const every = await viaApi({});
    expect(evalEvents.length).toBeGreaterThan(0);
    expect(evalEvents.length + trainEvents.length).toBe(every.length);
    expect(new Set(evalEvents.map((e) => e.step))).toEqual(new Set([0, 1, 2])); // the evaluations' steps, the final one included
    for (const e of evalEvents) {
      expect(e.key.startsWith(`eval${e.step}/`), e.key).toBe(true);
      expect([e.advantage, e.ratio, e.logRatio, e.clipped]).toEqual([null, null, null, null]);
    }
    // A training event's step is its update (shared/stepConvention.ts); its key names the store record, one before.
    for (const e of trainEvents) expect(e.key.startsWith(`s${e.step - 1}/`), e.key).toBe(true);

    const byStep = evalEpisodes(store, runId);
    let someCorrect = false;
    for (const ev of store.evaluations(runId)) {
      const eps = (byStep.get(ev.step) ?? []).filter((p) => p.benchmark === ev.benchmark);
      expect(eps.length, `step ${ev.step}`).toBe(config.eval.queries * config.eval.n);
      for (const p of eps) expect(p.split).toBe('eval');
      const metric = store.metricSeries(runId, `eval/${ev.benchmark}/avg`).find((m) => m.step === ev.step)!.value;
      // Avg@n over equal-sized queries is the mean over their episodes; math rewards are 0/1 correctness.
      expect(mean(eps.map((p) => p.reward))).toBeCloseTo(metric, 12);
      expect(mean(eps.map((p) => (p.correct ? 1 : 0)))).toBeCloseTo(ev.avgAtN, 12);
      // Pass@n: queries with a correct sample, from the rows.
      const solved = new Set(eps.filter((p) => p.correct).map((p) => p.taskId));
      expect(solved.size / config.eval.queries).toBeCloseTo(ev.passAtN, 12);
      expect(new Set(eps.map((p) => `${p.taskId}/${p.rollout}`)).size).toBe(eps.length); // n distinct samples per query
      someCorrect ||= metric > 0;
    }
    expect(someCorrect, 'the check is not vacuous: some evaluation solved a query').toBe(true);

    // An episode's events read through the API: members with prompts, outputs, parse results and
    // sampled tokens (eval.storeTokens, and this step stores token detail), nothing of an update.
    const episode = await service.call('getEpisode', { episodeId: evalEvents[0].episodeId });
    expect(episode.split).toBe('eval');
    const members = (await Promise.all(episode.events.map((e) => service.call('getEvent', { eventId: e.id })))).flatMap((e) => e.members);
    expect(members.length).toBeGreaterThanOrEqual(episode.events.length);
    for (const m of members) {
      expect(m.prompt.length).toBeGreaterThan(0);
      expect(m.policyId).not.toBe('');
      expect(m.parseError === null).toBe(m.valid);
      expect(m.logRatio).toBeNull();
      expect(m.tokens).not.toBeNull();
      expect(m.tokens!.outputTokens.length).toBeGreaterThan(0);
      expect(m.tokens!.logpOld.length).toBe(m.tokens!.outputTokens.length);
      expect(m.tokens!.logpCur).toBeNull();
    }
  }, 120_000);

  it('eval.storeQueries caps the stored queries; eval.storeEpisodes=false stores none but keeps the results; tokens only with eval.storeTokens', async () => {
    const store = LabStore.open(':memory:');
    closers.push(() => store.close());
    const counts = async (config: ReturnType<typeof tiny>) => {
      const runId = newRun(store, config);
      const t = trainer(config, store, runId);
      for (const s of t.remainingSteps()) await t.step(s);
      const byStep = evalEpisodes(store, runId);
      const members = [...byStep.values()].flat().flatMap((p) => p.events.flatMap((e) => e.members));
      const lists = [...byStep.values()];
      const tasks = lists.map((e) => new Set(e.map((p) => p.taskId)).size);
      return { runId, members, steps: [...byStep.keys()].sort(), sizes: lists.map((e) => e.length), tasks };
    };
    const capped = await counts(tiny({ steps: 1, eval: { every: 1, n: 2, queries: 3, storeQueries: 1 } }));
    expect(capped.steps).toEqual([0, 1]);
    expect(capped.sizes).toEqual([2, 2]); // one query x n = 2, of the 3 evaluated
    expect(capped.tasks).toEqual([1, 1]);
    expect(store.evaluations(capped.runId).map((e) => e.queries)).toEqual([3, 3]);
    // Without eval.storeTokens (the default) the members keep their text and token counts, not the tokens.
    expect(capped.members.length).toBeGreaterThan(0);
    for (const m of capped.members) {
      expect(m.tokens).toBeNull();
      expect(m.promptLength).toBeGreaterThan(0);
    }
    const off = await counts(tiny({ steps: 1, eval: { every: 1, n: 2, queries: 3, storeEpisodes: false } }));
    expect(off.steps).toEqual([]);
    expect(store.evaluations(off.runId).map((e) => e.step)).toEqual([0, 1]);
  }, 60_000);

  it("a crash after a step's evaluation commits, before the step does: the resume redoes it once, as the uninterrupted run stores it", async () => {
    const store = LabStore.open(':memory:');
    closers.push(() => store.close());
    const config = tiny();
    const twin = newRun(store, config);
    const t0 = trainer(config, store, twin);
    for (const s of t0.remainingSteps()) await t0.step(s);

    const runId = newRun(store, config);
    const a = trainer(config, store, runId);
    await a.step(0);
    await a.step(1);
    // Step 2's evaluation is committed ahead of it; the process "dies" before the update.
    await expect(
      a.step(2, (phase) => {
        if (phase === 'before-update') throw new Error('killed');
      }),
    ).rejects.toThrow('killed');
    expect(store.committedSteps(runId)).toEqual([0, 1]);
    expect(evalEpisodes(store, runId).get(2)?.length).toBe(config.eval.queries * config.eval.n);

    // The engine's resume: the latest checkpoint, every row after it removed, the rest recomputed.
    const ckpt = store.latestCheckpoint(runId)!;
    expect(ckpt.step).toBe(1);
    store.truncateAfter(runId, ckpt.step);
    expect(evalEpisodes(store, runId).get(2)).toBeUndefined();
    const b = trainer(config, store, runId, { dir: ckpt.path, step: ckpt.step });
    for (const s of b.remainingSteps()) await b.step(s);
    expect(store.committedSteps(runId)).toEqual([0, 1, 2, 3]);

    // Everything but wall-clock latency, per step, in stored order.
    const content = (id: number) =>
      [...evalEpisodes(store, id)]
        .sort(([x], [y]) => x - y)
        .map(([step, eps]) => ({
          step,
          episodes: eps.map((p) => ({
            key: p.key,
            reward: p.reward,
            correct: p.correct,
            answer: p.finalAnswer,
            events: p.events.map((e) => ({
              key: e.key,
              reward: e.reward,
              outputs: e.members.map((m) => m.output),
              tokens: e.members.map((m) => Array.from(m.tokens!.outputTokens)),
            })),
          })),
        }));
    const resumed = content(runId);
    expect(resumed.map((s) => s.step)).toEqual([0, 2, 3]);
    for (const s of resumed) expect(s.episodes).toHaveLength(config.eval.queries * config.eval.n); // none twice
    expect(resumed).toEqual(content(twin));
  }, 60_000);

  it('the store writes an evaluation with its episodes whole or not at all, and only eval episodes ahead of their step', () => {
    const store = LabStore.open(':memory:');
    closers.push(() => store.close());
    const config = tiny();
    const runId = newRun(store, config);
    const episodes = makeStep(0).episodes.map((e, i) => ({ ...e, key: `eval0/b/t${i}/g0`, split: 'eval' as const }));
    for (const e of episodes) for (const ev of e.events) ev.key = `${e.key}/${ev.key}`;
    const write = { step: 0, wallTime: 1, metrics: { 'eval/b/avg': 0.5 }, evaluations: [], episodes, tokens: true };
    store.writeEvaluation(runId, write);
    const stored = () => allEvents(store, runId, { split: 'eval' }).length;
    const n = episodes.reduce((a, e) => a + e.events.length, 0);
    expect(stored()).toBe(n);
    // Written twice without the resume's truncation: refused whole, nothing added.
    expect(() => store.writeEvaluation(runId, write)).toThrow(/writeEvaluation run \d+ step 0/);
    expect(stored()).toBe(n);
    // A training episode ahead of its step is refused, and the transaction's other rows with it.
    const train = { ...write, step: 1, metrics: { 'eval/b/avg': 0.25 }, episodes: [{ ...makeStep(1).episodes[0], split: 'train' as const }] };
    expect(() => store.writeEvaluation(runId, train)).toThrow(/split "train": only eval episodes are written ahead of their step/);
    expect(store.metricSeries(runId, 'eval/b/avg').map((p) => p.step)).toEqual([0]);
    // A resume from before the step removes the episodes with their events and members.
    store.truncateAfter(runId, -1);
    expect(stored()).toBe(0);
    expect(store.db.raw.prepare('SELECT count(*) FROM members WHERE run_id = ?').pluck().get(runId)).toBe(0);
  });
});
