/**
 * Shared by the Hugging Face trainer tests: a copy of the tiny Qwen3 checkpoint
 * (test/fixtures/hf/qwen3-tiny: transformers-made, hidden 32, 2 layers, byte-level vocabulary)
 * whose max_position_embeddings is raised from 128 to 4096, since chat prompts with the roles'
 * system messages run to ~700 byte tokens (default RoPE, so longer positions are well defined),
 * and the run config of a small SRPO run on it.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { mergeConfig, presetInput, resolveRunConfig, type RunConfig } from '../../../src/core/config';

export const QWEN3_TINY = resolve(__dirname, '../../fixtures/hf/qwen3-tiny');

/** A fresh copy of qwen3-tiny (max_position_embeddings 4096) in a temporary folder. */
export function tinyQwenFolder(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'srpo-hf-')), 'qwen3-tiny');
  cpSync(QWEN3_TINY, dir, { recursive: true });
  const file = join(dir, 'config.json');
  const json = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  writeFileSync(file, JSON.stringify({ ...json, max_position_embeddings: 4096 }, null, 2));
  return dir;
}

export const LORA = { kind: 'lora', r: 2, alpha: 4, targetModules: ['q_proj', 'v_proj', 'down_proj'] } as const;

/** Mixed K (1 or 2 solvers): events of one group differ in K and so in invalid-action penalties, giving a random model nonzero advantages. */
export const MIXED_MATH = { name: 'math', options: { solvers: { mode: 'mixed', ks: [1, 2] }, maxLoops: 1 } } as const;

/** A small run of a preset on the tiny Qwen3 folder (LoRA unless `adapter: null` is given); a `workflow` override replaces the preset's. */
export function hfRunConfig(dir: string, overrides: Record<string, unknown> = {}, preset = 'math-quick'): RunConfig {
  const { policies, workflow, ...rest } = overrides as { policies?: Record<string, unknown>; workflow?: Record<string, unknown> };
  const input = mergeConfig(presetInput(preset), {
    steps: 3,
    policies: { init: dir, adapter: LORA, sharing: 'shared', ...(policies ?? {}) },
    tasks: { train: ['arith-easy'], eval: ['arith-easy'] },
    rollout: { tasksPerStep: 2, groupSize: 2, maxNewTokens: 6, temperature: 1 },
    update: { epochs: 1, miniBatches: 1 },
    optimizer: { lr: 1e-2 },
    eval: { every: 0, n: 2, queries: 2 },
    checkpointEvery: 1,
    backend: 'wasm',
    ...rest,
  });
  if (workflow) input.workflow = workflow;
  return resolveRunConfig(input);
}
