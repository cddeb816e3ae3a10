/**
 * Validation up front (issue 30, point 8): what can be known before a model loads is refused
 * where the config is resolved (crossFieldProblems, the API's validateConfig that the new-run form
 * calls, `srpo-lab train --set`), with the fix in the message: a first prompt plus
 * rollout.maxNewTokens that does not fit the model's context (a Hugging Face folder's
 * max_position_embeddings; the lab's own model's, twice its contextLength), and a lab model shape
 * that cannot be built. Since the one model family (decision 069) the lab's own model is a Hugging
 * Face folder, so LoRA on it, refused before, is a valid run.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crossFieldProblems, PRESET_NAMES, presetConfig, presetNeedsModelFolder } from '../../../src/core/config';
import { validateConfig } from '../../../src/core/host/configForm';

/** The tiny Qwen3 fixture with 512 positions (its chat-templated first prompts are a few hundred tokens). */
const QWEN3 = (() => {
  const dir = join(mkdtempSync(join(tmpdir(), 'srpo-upfront-hf-')), 'qwen3-tiny');
  cpSync(resolve(__dirname, '../../fixtures/hf/qwen3-tiny'), dir, { recursive: true });
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...config, max_position_embeddings: 512 }));
  return dir;
})();
describe("LoRA on the lab's own model (a Hugging Face folder since decision 069)", () => {
  it('passes the cross-field rules from the warm start and from scratch, as on any Hugging Face folder', () => {
    for (const init of [undefined, null]) {
      const c = presetConfig('math-quick', { policies: { adapter: { kind: 'lora' }, ...(init === null ? { init: null } : {}) } });
      expect(crossFieldProblems(c)).toEqual([]);
    }
    const c = presetConfig('math-quick', { policies: { adapter: { kind: 'lora' }, init: QWEN3, modelOverrides: {} }, rollout: { maxNewTokens: 32 } });
    expect(crossFieldProblems(c)).toEqual([]);
  });

  it('the form (validateConfig) accepts it', () => {
    const v = validateConfig('math-quick', { policies: { adapter: { kind: 'lora' } } });
    expect(v.errors).toEqual([]);
    expect(v.ok).toBe(true);
  });
});

describe('the lab model shape is checked up front', () => {
  it('an odd head width (RoPE rotates pairs) is refused naming policies.modelOverrides.nHeads', () => {
    // 64 / 4 = 16 is fine; 48 / 16 = 3 is odd.
    const c = presetConfig('math-quick', { policies: { init: null, modelOverrides: { dModel: 48, nHeads: 16 } } });
    expect(crossFieldProblems(c)).toEqual([
      { path: 'policies.modelOverrides.nHeads', message: expect.stringMatching(/head width dModel \/ nHeads = 3 must be even/) },
    ]);
    const ok = presetConfig('math-quick', { policies: { init: null, modelOverrides: { dModel: 64, nHeads: 4 } } });
    expect(crossFieldProblems(ok)).toEqual([]);
  });
});

describe("prompts against the model's context", () => {
  it('a Hugging Face folder: prompt + maxNewTokens over max_position_embeddings is refused with the room left', () => {
    const c = presetConfig('math-quick', { policies: { init: QWEN3, modelOverrides: {} }, rollout: { maxNewTokens: 300 } });
    const problems = crossFieldProblems(c);
    expect(problems).toHaveLength(1);
    expect(problems[0].path).toBe('rollout.maxNewTokens');
    const m =
      /is (\d+) tokens; with rollout\.maxNewTokens 300 it needs (\d+) positions, more than the model's context of 512: lower rollout\.maxNewTokens to at most (\d+)/.exec(
        problems[0].message,
      );
    expect(m).not.toBeNull();
    const [prompt, needed, room] = m!.slice(1).map(Number);
    expect(needed).toBe(prompt + 300);
    expect(room).toBe(512 - prompt);
    expect(problems[0].message).toMatch(
      /raise the context \(policies\.init's max_position_embeddings: a model trained for longer inputs\), or use shorter prompts/,
    );
    // The number it suggests fits.
    const ok = presetConfig('math-quick', { policies: { init: QWEN3, modelOverrides: {} }, rollout: { maxNewTokens: room } });
    expect(crossFieldProblems(ok)).toEqual([]);
  });

  it("the lab's model: contextLength too short for the first prompt and maxNewTokens is refused, suggesting contextLength", () => {
    // math-quick's first solver prompt is about 60 characters; contextLength 32 gives the lab folder
    // 64 positions (max_position_embeddings is twice contextLength), no room for 32 new tokens.
    const c = presetConfig('math-quick', { policies: { init: null, modelOverrides: { contextLength: 32 } } });
    const problems = crossFieldProblems(c);
    expect(problems.map((p) => p.path)).toEqual(['rollout.maxNewTokens']);
    expect(problems[0].message).toMatch(
      /more than the model's context of 64: lower rollout\.maxNewTokens to at most \d+, raise the context \(policies\.modelOverrides\.contextLength/,
    );
    // Through the form too.
    const v = validateConfig('math-quick', { policies: { init: null, modelOverrides: { contextLength: 32 } } });
    expect(v.errors.map((e) => e.path)).toEqual(['rollout.maxNewTokens']);
  });

  it('every preset that runs without a model folder passes as shipped', () => {
    for (const name of PRESET_NAMES) {
      if (presetNeedsModelFolder(name)) continue;
      // Dataset slots ($aime24 ...) are the data presets' own question (--set tasks.paths.NAME).
      const problems = crossFieldProblems(presetConfig(name)).filter((p) => p.path !== 'tasks.paths');
      expect({ name, problems }).toEqual({ name, problems: [] });
    }
  });
});

describe('the form switches a K mode as --set does', () => {
  it("a new solvers.mode takes only the fields the form sends for it (the preset's k is not left beside maxK)", () => {
    const v = validateConfig('math-quick', { workflow: { name: 'math', options: { solvers: { mode: 'router', maxK: 3 }, maxLoops: 1 } } });
    expect(v.errors).toEqual([]);
    expect((v.config as { workflow: { options: { solvers: unknown } } }).workflow.options.solvers).toEqual({ mode: 'router', maxK: 3 });
    // A new workflow starts its options afresh.
    const search = validateConfig('math-quick', {
      workflow: { name: 'search', options: { searchers: { mode: 'fixed', k: 3 } } },
      tasks: { train: ['kb-single'], eval: ['kb-single'] },
    });
    expect(search.errors).toEqual([]);
  });
});
