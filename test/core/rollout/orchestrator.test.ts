/**
 * The orchestrator with real (tiny, random) policies on the math workflow (the lab's character
 * model as a Hugging Face folder, shared or one copy per role): every recorded event
 * has exactly its K sampled members, each with tokens, behaviour log-probs and its policy; one
 * sampler call per policy per round; episodes that end early drop out; behaviour log-probs equal
 * the teacher-forced ones of the recorded tokens (the trainer's old log-probs); a fixed seed
 * reproduces the batch; nothing leaks; a prompt that does not fit the model's positions with the
 * new tokens is refused (never cut).
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { getTaskGenerator } from '../../../src/core/data';
import { memberKey, runRollouts } from '../../../src/core/rollout/orchestrator';
import { getWorkflow } from '../../../src/core/workflows';
import { labPolicies } from '../train/labPolicies';

/** The lab folder's context; its max_position_embeddings is twice that (models/hf/labFolder.ts POSITION_ROOM). */
const CONTEXT = 192;

function setup(kind: 'shared' | 'per-role') {
  const policies = labPolicies({ sharing: kind, shape: { contextLength: CONTEXT } });
  const tasks = getTaskGenerator('arith-easy').rows('train', 2);
  const workflow = getWorkflow('math');
  const episodes = () =>
    tasks.flatMap((task, t) =>
      [0, 1].map((g) => workflow.createEpisode(task, { episodeId: `t${t}/g${g}`, config: { solvers: { mode: 'fixed', k: 3 }, maxLoops: 1 } })),
    );
  return { policies, episodes, ctx: { policies } };
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
          expect(s.promptTokens.length + s.outputTokens.length).toBeLessThanOrEqual(2 * CONTEXT);
          // What the policy read: <bos>, the role marker, then the member's prompt text (the lab folder's chat template).
          expect(policies.tokenizer.decode(s.promptTokens)).toBe(`<bos><${m.role}>${m.prompt}`);
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
    const { policies, episodes, ctx } = setup('shared');
    const batch = runRollouts(episodes(), ctx, { temperature: 1, topP: 1, maxNewTokens: 10, seed: 9 });
    const rows = batch.episodes.flatMap((e) => [...e.sampled.values()]);
    const scored = policies.scoreData(
      'shared',
      rows.map((r) => ({ prompt: r.promptTokens, completion: r.outputTokens })),
      'current',
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

  it('refuses a prompt that does not fit the model with the new tokens, naming the numbers (never cuts it)', () => {
    const { policies } = setup('shared');
    const workflow = getWorkflow('math');
    const long = { ...getTaskGenerator('arith-easy').rows('train', 1)[0], question: '1+'.repeat(CONTEXT) + '1' };
    const episode = workflow.createEpisode(long, { episodeId: 'long', config: { solvers: { mode: 'fixed', k: 1 }, maxLoops: 1 } });
    const before = tf.memory().numTensors;
    try {
      expect(() => runRollouts([episode], { policies }, { temperature: 1, topP: 1, maxNewTokens: 8, seed: 1 })).toThrow(
        new RegExp(`a solver prompt of \\d+ tokens \\+ rollout\\.maxNewTokens 8 exceeds the model's max_position_embeddings ${2 * CONTEXT}`),
      );
      expect(tf.memory().numTensors).toBe(before);
    } finally {
      policies.dispose();
    }
  });
});
