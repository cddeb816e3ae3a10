/**
 * The orchestrator with real (tiny, random) policies on the math workflow: every recorded event
 * has exactly its K sampled members, each with tokens, behaviour log-probs and its policy; one
 * sampler call per policy per round; episodes that end early drop out; behaviour log-probs equal
 * the teacher-forced ones of the recorded tokens (the trainer's old log-probs); a fixed seed
 * reproduces the batch; nothing leaks.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { getTaskGenerator } from '../../../src/core/data';
import { modelConfig, PolicySet, CharTokenizer, scoreCompletionsData } from '../../../src/core/models';
import { memberKey, runRollouts } from '../../../src/core/rollout/orchestrator';
import { getWorkflow } from '../../../src/core/workflows';

function setup(kind: 'shared' | 'per-role') {
  const tokenizer = new CharTokenizer();
  const config = modelConfig('tiny', { dModel: 32, nLayers: 1, nHeads: 2, contextLength: 192 });
  const policies = new PolicySet(kind, config, ['router', 'solver', 'verifier', 'aggregator']);
  const tasks = getTaskGenerator('arith-easy').rows('train', 2);
  const workflow = getWorkflow('math');
  const episodes = () =>
    tasks.flatMap((task, t) =>
      [0, 1].map((g) => workflow.createEpisode(task, { episodeId: `t${t}/g${g}`, config: { solvers: { mode: 'fixed', k: 3 }, maxLoops: 1 } })),
    );
  return { tokenizer, policies, episodes, ctx: { policies, tokenizer } };
}

describe('rollout orchestrator', () => {
  it('records every event with its K sampled members and their policies', () => {
    const { policies, episodes, ctx } = setup('per-role');
    const batch = runRollouts(episodes(), ctx, { temperature: 1, topP: 1, maxNewTokens: 12, seed: 5 });
    expect(batch.episodes).toHaveLength(4);
    expect(batch.samplerMs).toBeLessThanOrEqual(batch.wallMs);
    let sets = 0;
    for (const ep of batch.episodes) {
      expect(ep.result.events.length).toBeGreaterThan(0);
      let tokens = 0;
      for (const ev of ep.result.events) {
        expect(ev.members).toHaveLength(ev.expectedK);
        if (ev.kind === 'solve') {
          expect(ev.expectedK).toBe(3);
          sets++;
        }
        for (const m of ev.members) {
          const s = ep.sampled.get(memberKey(ev.eventId, m.memberIndex))!;
          expect(s, `${ev.eventId} member ${m.memberIndex}`).toBeDefined();
          expect(s.policyId).toBe(m.role);
          expect(s.logp).toHaveLength(s.outputTokens.length);
          expect(s.outputTokens.length).toBeGreaterThan(0);
          expect(s.outputTokens.length).toBeLessThanOrEqual(12);
          expect(s.promptTokens.length + s.outputTokens.length).toBeLessThanOrEqual(192);
          tokens += s.outputTokens.length;
        }
      }
      expect(ep.generatedTokens).toBe(tokens);
      expect(ep.latencyMs).toBeGreaterThan(0);
    }
    expect(sets).toBeGreaterThanOrEqual(4);
    policies.dispose();
  });

  it('records behaviour log-probs equal to teacher-forced scoring of the same tokens', () => {
    const { policies, tokenizer, episodes, ctx } = setup('shared');
    const batch = runRollouts(episodes(), ctx, { temperature: 1, topP: 1, maxNewTokens: 10, seed: 9 });
    const rows = batch.episodes.flatMap((e) => [...e.sampled.values()]);
    const scored = scoreCompletionsData(
      policies.get('shared').model,
      rows.map((r) => ({ prompt: r.promptTokens, completion: r.outputTokens })),
      { padId: tokenizer.padId },
    );
    rows.forEach((r, i) => r.logp.forEach((lp, t) => expect(Math.abs(lp - scored.logp[i][t])).toBeLessThan(1e-4)));
    policies.dispose();
  });

  it('reproduces a batch from its seed, and leaks no tensors', () => {
    const { policies, episodes, ctx } = setup('shared');
    const run = () => runRollouts(episodes(), ctx, { temperature: 1, topP: 0.95, maxNewTokens: 8, seed: 3 });
    run();
    const before = tf.memory().numTensors;
    const a = run();
    const b = run();
    expect(tf.memory().numTensors).toBe(before);
    const texts = (x: typeof a) => x.episodes.flatMap((e) => e.result.events.flatMap((ev) => ev.members.map((m) => m.output)));
    expect(texts(a)).toEqual(texts(b));
    const c = runRollouts(episodes(), ctx, { temperature: 1, topP: 0.95, maxNewTokens: 8, seed: 4 });
    expect(texts(c)).not.toEqual(texts(a));
    policies.dispose();
  });
});
