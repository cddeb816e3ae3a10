/**
 * `produceWarmStart`: demonstrations from the preset's tasks, supervised training whose loss
 * falls, a Hugging Face folder of the preset's lab shape (models/hf/labFolder.ts) that a run's
 * `policies.init` opens into a shared or a per-role set, the same seed writing the same weights,
 * and a per-role preset refused (a warm start is one shared model).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_WARM_START, presetConfig, warmStartRecipe } from '../../../src/core/config';
import { getTaskGenerator } from '../../../src/core/data';
import { readHfConfig } from '../../../src/core/models/hf/config';
import { openPolicies } from '../../../src/core/policies/registry';
import { produceWarmStart, warmStartDemonstrations } from '../../../src/core/train/warmstart';

const overrides = { policies: { modelOverrides: { dModel: 32, nLayers: 1, nHeads: 2, contextLength: 256 } } };
const HEAD = 'lm_head.weight';

describe('warm-start folders', () => {
  it('trains on demonstrations, writes a lab folder that policies.init opens, and is deterministic', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'srpo-ws-'));
    const a = await produceWarmStart({ preset: 'math-quick', out: join(dir, 'a'), epochs: 3, episodes: 12, overrides });
    expect(a.dir).toBe(join(dir, 'a'));
    expect(a.demonstrations).toBeGreaterThan(40);
    const losses = a.reports.map((r) => r.loss);
    expect(losses[losses.length - 1]).toBeLessThan(losses[0]);
    // The preset's lab shape (overridden here), max positions twice the context (labFolder.ts POSITION_ROOM).
    expect(readHfConfig(a.dir)).toMatchObject({ architecture: 'llama', hiddenSize: 32, numLayers: 1, numHeads: 2, numKvHeads: 2, maxPositions: 512 });
    const b = await produceWarmStart({ preset: 'math-quick', out: join(dir, 'b'), epochs: 3, episodes: 12, overrides });
    expect(b.demonstrations).toBe(a.demonstrations);
    expect(readFileSync(join(dir, 'b', 'model.safetensors'))).toEqual(readFileSync(join(dir, 'a', 'model.safetensors')));

    for (const sharing of ['shared', 'per-role'] as const) {
      const policies = openPolicies(presetConfig('math-quick', { policies: { sharing, init: a.dir } }), { baseDir: '/' });
      // The same shape, fresh: policies.init null writes a seeded lab folder (policies/registry.ts).
      const random = openPolicies(presetConfig('math-quick', { policies: { ...overrides.policies, sharing, init: null } }), { baseDir: '/' });
      try {
        const first = policies.ids()[0];
        const loaded = policies.trainable(first).get(HEAD)!.dataSync();
        expect(loaded).not.toEqual(random.trainable(first).get(HEAD)!.dataSync());
        expect(policies.ids()).toEqual(sharing === 'shared' ? ['shared'] : ['router', 'solver', 'verifier', 'aggregator', 'searcher', 'answerer']);
        // Every role of a per-role set starts from the one warm-started model.
        for (const id of policies.ids()) expect(policies.trainable(id).get(HEAD)!.dataSync(), id).toEqual(loaded);
        expect(policies.policies().every((p) => p.version === 0)).toBe(true);
      } finally {
        policies.dispose();
        random.dispose();
      }
    }
    await expect(produceWarmStart({ preset: 'math-per-role-grpo', out: join(dir, 'c'), epochs: 1, episodes: 2, overrides })).rejects.toThrow(
      /one shared model folder; policies.sharing is "per-role"/,
    );
  });

  it('presets carry their warm-start recipe; derived presets inherit it', () => {
    expect(warmStartRecipe('math-k1')).toEqual(warmStartRecipe('math-quick'));
    expect(warmStartRecipe('math-paper')).toEqual(DEFAULT_WARM_START);
    expect(warmStartRecipe('search-quick').dataSeeds).toBeGreaterThan(0);
    expect(() => warmStartRecipe('nope')).toThrow(/unknown preset "nope"/);
  });

  it('demonstrations from extra data seeds add new subjects but never a question of the test split', () => {
    const config = presetConfig('search-quick');
    const own = warmStartDemonstrations(config, 1, 30, 0);
    const more = warmStartDemonstrations(config, 1, 30, 2);
    expect(more.length).toBeGreaterThan(own.length * 2);
    const questionOf = (prompt: string): string => /^Question: (.*)$/m.exec(prompt)![1];
    const test = new Set(
      getTaskGenerator('kb-single')
        .rows('test')
        .map((r) => r.question),
    );
    const seen = new Set(more.map((d) => questionOf(d.prompt)));
    expect([...seen].filter((q) => test.has(q))).toEqual([]);
    // The extra knowledge bases bring names the run's own train split does not have.
    const ownQuestions = new Set(own.map((d) => questionOf(d.prompt)));
    expect([...seen].filter((q) => !ownQuestions.has(q)).length).toBeGreaterThan(30);
    // arith-chain has 1000 questions in all: other seeds redraw the same ones, so only the
    // exclusion keeps the 200 test questions out.
    const arith = warmStartDemonstrations(presetConfig('math-quick'), 1, 400, 2);
    const arithTest = new Set(
      getTaskGenerator('arith-chain')
        .rows('test')
        .map((r) => r.question),
    );
    const arithSeen = new Set(arith.map((d) => /^Problem: (.*)$/m.exec(d.prompt)![1]));
    expect(arithSeen.size).toBeGreaterThan(600);
    expect([...arithSeen].filter((q) => arithTest.has(q))).toEqual([]);
    // The run's own demonstrations come first and are unchanged by adding seeds.
    expect(more.slice(0, own.length)).toEqual(own);
  });

  it("a recipe's errorRate reaches the oracle: wrong answers at about that rate", () => {
    const config = presetConfig('search-quick');
    const wrongAnswers = (errorRate?: number): number => {
      const answers = warmStartDemonstrations(config, 1, 200, 0, errorRate).filter((d) => d.role === 'answerer' && d.completion.includes('<think>'));
      const grounded = answers.filter((d) => !d.completion.includes('no document has it'));
      const wrong = grounded.filter((d) => !d.completion.includes(`</think><answer>${/<think>(?:.* )?(\S+)<\/think>/.exec(d.completion)![1]}</answer>`));
      return wrong.length / grounded.length;
    };
    expect(wrongAnswers(0)).toBe(0);
    expect(wrongAnswers(0.05)).toBeLessThan(0.12);
    expect(wrongAnswers(undefined)).toBeGreaterThan(0.1); // the default, 0.2
    expect(warmStartRecipe('search-quick').errorRate).toBeLessThan(0.2);
  });
});
