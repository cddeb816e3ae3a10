/**
 * A real (short) training run of the lab's warm-started tiny model through an agent program
 * written with the official `openai` npm client (examples/agents/math_team.mjs, preset
 * external-math-quick): its two parallel solver calls tagged "solve" become ONE active set
 * (K = 2) in every episode, rewards arrive (no failed episodes), every step commits in the
 * store, and each stored member carries the exact ids the policy read and sampled with their
 * log-probs; the evaluation runs through the same program (the lab grades its posted answers).
 */
import { describe, expect, it } from 'vitest';
import { presetConfig } from '../../src/core/config';
import { EXTERNAL_PANELS, lookupMetric } from '../../src/shared/metricCatalogue';
import { trainExternalRun, useClosers } from './trainRun';

const closers = useClosers();

describe('external-math-quick: the JS example program trains as a run', () => {
  it('tagged parallel calls are one K = 2 set, rewards arrive, steps commit, members are stored with their tokens', async () => {
    const config = presetConfig('external-math-quick', {
      steps: 2,
      rollout: { tasksPerStep: 2, groupSize: 2 },
      eval: { every: 2, n: 2, queries: 2 },
      checkpointEvery: 0,
    });
    const { store, runId, steps, logs } = await trainExternalRun('ext', config, closers);

    expect(store.committedSteps(runId)).toEqual([0, 1, 2]);
    for (const s of steps.slice(0, 2)) {
      expect(s.metrics['external/failed_episodes'], logs.join('\n')).toBe(0);
      expect(s.metrics['external/requests']).toBeGreaterThanOrEqual(2 * 2 * 3); // 4 episodes x (2 solvers + verifier + last call)
      expect(Number.isFinite(s.metrics['loss/policy'])).toBe(true);
      expect(s.metrics['policy/shared/version']).toBeGreaterThan(0); // the update ran
    }
    expect(steps[2].metrics['eval/arith-chain/avg']).toBeGreaterThanOrEqual(0);
    // The dashboard's external panels read keys the step wrote, each with its own catalogue entry.
    for (const p of EXTERNAL_PANELS) for (const k of p.keys) expect(steps[0].metrics[k], k).toEqual(expect.any(Number));
    for (const k of Object.keys(steps[0].metrics).filter((k) => k.startsWith('external/'))) expect(lookupMetric(k)?.info.pattern, k).toBe(k);

    const train = store.listEvents(runId, { fromStep: 0, toStep: 0, split: 'train' }, { limit: 1000, after: null }).events;
    const episodes = [...new Set(train.map((e) => e.episodeId))].map((id) => store.getEpisode(id)!);
    expect(episodes).toHaveLength(4);
    for (const ep of episodes) {
      const solve = ep.events.filter((e) => e.key.endsWith('/solve'));
      expect(solve, ep.key).toHaveLength(1);
      expect(solve[0]).toMatchObject({ expectedK: 2, complete: true, kind: 'solve' });
      expect(solve[0].members).toHaveLength(2);
      expect(ep.events[1].key.endsWith('/verifier#0')).toBe(true);
      expect([0, 1]).toContain(ep.reward);
      for (const ev of ep.events) {
        for (const m of ev.members) {
          expect(m.tokens, 'step 0 stores token detail').not.toBeNull();
          expect(m.tokens!.promptTokens.length).toBe(m.promptLength);
          expect(m.promptLength).toBeGreaterThan(2);
          expect(m.tokens!.outputTokens.length).toBeGreaterThan(0);
          expect(m.tokens!.logpOld.length).toBe(m.tokens!.outputTokens.length);
          // What the model read: the lab folder's template, `<bos>`, the role marker, then the call's text.
          expect(m.prompt).toMatch(/^<bos><(solver|verifier|aggregator)>Problem: /);
        }
      }
    }
  }, 240_000);
});
