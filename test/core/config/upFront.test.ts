/**
 * Validation up front (issue 30, point 8): what can be known before a model loads is refused
 * where the config is resolved (crossFieldProblems, the API's validateConfig that the new-run form
 * calls, `srpo-lab train --set`), with the fix in the message: LoRA on the lab's own model, and a
 * first prompt plus rollout.maxNewTokens that does not fit the model's context (the lab's
 * contextLength, a Hugging Face folder's max_position_embeddings).
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/commands';
import type { CliIO } from '../../../src/cli/io';
import { crossFieldProblems, PRESET_NAMES, presetConfig, presetNeedsModelFolder } from '../../../src/core/config';
import { validateConfig } from '../../../src/core/host/configForm';
import { LabStore } from '../../../src/core/store';

/** The tiny Qwen3 fixture with 512 positions (its chat-templated first prompts are a few hundred tokens). */
const QWEN3 = (() => {
  const dir = join(mkdtempSync(join(tmpdir(), 'srpo-upfront-hf-')), 'qwen3-tiny');
  cpSync(resolve(__dirname, '../../fixtures/hf/qwen3-tiny'), dir, { recursive: true });
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...config, max_position_embeddings: 512 }));
  return dir;
})();
const LORA_MESSAGE = "LoRA adapters need a Hugging Face model folder in policies.init; the lab's own model trains all its weights";

describe('LoRA needs a Hugging Face folder', () => {
  it("is refused on the lab's own model, from scratch and from the lab's warm start, naming policies.adapter.kind", () => {
    for (const init of [null, undefined]) {
      const c = presetConfig('math-quick', { policies: { adapter: { kind: 'lora' }, ...(init === null ? { init: null } : {}) } });
      const problems = crossFieldProblems(c).filter((p) => p.path === 'policies.adapter.kind');
      expect(problems).toHaveLength(1);
      expect(problems[0].message).toContain(LORA_MESSAGE);
      expect(problems[0].message).toMatch(/Set policies\.adapter to null/);
    }
  });

  it('passes on a Hugging Face folder', () => {
    const c = presetConfig('math-quick', { policies: { adapter: { kind: 'lora' }, init: QWEN3, modelOverrides: {} }, rollout: { maxNewTokens: 32 } });
    expect(crossFieldProblems(c)).toEqual([]);
  });

  it('the form (validateConfig) refuses it before a run exists', () => {
    const v = validateConfig('math-quick', { policies: { adapter: { kind: 'lora' } } });
    expect(v.ok).toBe(false);
    expect(v.errors).toEqual([{ path: 'policies.adapter.kind', message: expect.stringContaining(LORA_MESSAGE) }]);
  });

  it('`train --set policies.adapter.kind=lora` is refused and creates no run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'srpo-upfront-'));
    const db = join(dir, 'lab.db');
    const err: string[] = [];
    const io: CliIO = { out: () => {}, tty: null, launcher: null as never, onInterrupt: () => () => {} };
    const code = await runCli(['train', '--preset', 'math-quick', '--set', 'policies.adapter.kind=lora', '--set', 'steps=1', '--db', db], io, (l) =>
      err.push(l),
    );
    expect(code).not.toBe(0);
    expect(err.join('\n')).toContain(LORA_MESSAGE);
    const store = LabStore.open(db);
    try {
      expect(store.listRuns()).toEqual([]);
    } finally {
      store.close();
    }
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
    // math-quick's first solver prompt is about 60 characters; 64 positions leave no room for 32 new tokens.
    const c = presetConfig('math-quick', { policies: { init: null, modelOverrides: { contextLength: 64 } } });
    const problems = crossFieldProblems(c);
    expect(problems.map((p) => p.path)).toEqual(['rollout.maxNewTokens']);
    expect(problems[0].message).toMatch(
      /more than the model's context of 64: lower rollout\.maxNewTokens to at most \d+, raise the context \(policies\.modelOverrides\.contextLength\)/,
    );
    // Through the form too.
    const v = validateConfig('math-quick', { policies: { init: null, modelOverrides: { contextLength: 64 } } });
    expect(v.errors.map((e) => e.path)).toEqual(['rollout.maxNewTokens']);
  });

  it('every preset that runs without a model folder passes as shipped', () => {
    for (const name of PRESET_NAMES) {
      if (presetNeedsModelFolder(name)) continue;
      const problems = crossFieldProblems(presetConfig(name)).filter((p) => p.path === 'rollout.maxNewTokens' || p.path === 'policies.adapter.kind');
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
