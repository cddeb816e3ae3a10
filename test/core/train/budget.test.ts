/**
 * Matched budgets: the meter's cumulative totals and which budget they reach; the trainer ends
 * training after the step that reaches a team-token budget (final evaluation at the next index,
 * a checkpoint at the last training step), records the cumulative cost every step, keeps the step
 * count as the bound without a budget, and a run resumed after its budget ran out only runs its
 * final evaluation; the report says which bound ended a run.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { presetConfig, type RunConfig } from '../../../src/core/config';
import type { RolloutBatch } from '../../../src/core/rollout/orchestrator';
import { LabStore } from '../../../src/core/store';
import { BudgetMeter } from '../../../src/core/train/budget';
import { checkpointDir } from '../../../src/core/train/checkpoints';
import { Trainer, type StepSummary } from '../../../src/core/train/trainer';
import { endedBy } from '../../../src/shared/budget';
import { markdownReport } from '../../../src/shared/report';

const batch = (tokens: number[], toolCalls: number[]) =>
  ({ episodes: tokens.map((t, i) => ({ generatedTokens: t, result: { toolCalls: toolCalls[i] } })) }) as unknown as RolloutBatch;

describe('budget meter', () => {
  it('sums tokens and tool calls over steps and says which budget is reached', () => {
    const m = new BudgetMeter({ teamTokens: 100, toolCalls: 3 });
    expect(m.add(batch([30, 40], [1, 0]))).toEqual({ 'budget/team_tokens': 70, 'budget/tool_calls': 1 });
    expect(m.reached()).toBeNull();
    expect(m.add(batch([20, 5], [1, 1]))).toEqual({ 'budget/team_tokens': 95, 'budget/tool_calls': 3 });
    expect(m.reached()).toBe('toolCalls');
    expect(new BudgetMeter({}).reached()).toBeNull();
    expect(new BudgetMeter({ teamTokens: 50 }, { 'budget/team_tokens': 60 }).reached()).toBe('teamTokens'); // restored totals
  });

  it('names the bound that ended a run', async () => {
    expect(endedBy({ teamTokens: 100 }, { 'budget/team_tokens': 120 })).toEqual({ bound: 'teamTokens', label: 'team-token budget of 100 (120 spent)' });
    expect(endedBy({ teamTokens: 100 }, { 'budget/team_tokens': 80 }).bound).toBe('steps');
    expect(endedBy(undefined, {}).label).toBe('step count');
  });
});

const small = (overrides: Record<string, unknown> = {}): RunConfig =>
  presetConfig('math-quick', {
    steps: 6,
    policies: { init: null, modelOverrides: { dModel: 32, nLayers: 1, nHeads: 2, contextLength: 192 } },
    tasks: { train: ['arith-easy'], eval: ['arith-easy'] },
    rollout: { tasksPerStep: 2, groupSize: 2, maxNewTokens: 6 },
    eval: { every: 0, n: 2, queries: 2 },
    checkpointEvery: 0,
    ...overrides,
  });

const trainers: Trainer[] = [];
afterEach(() => trainers.splice(0).forEach((t) => t.dispose()));

async function run(config: RunConfig, store: LabStore, runId: number, runDir: string, resume?: { dir: string; step: number }): Promise<StepSummary[]> {
  const t = new Trainer({ config, runDir, store, runId, ...(resume ? { resume } : {}) });
  trainers.push(t);
  const out: StepSummary[] = [];
  for (const s of t.remainingSteps()) out.push(await t.step(s)); // lazily, as the engine does
  return out;
}

function newRun(config: RunConfig) {
  const store = LabStore.open(':memory:');
  const runId = store.createRun({ name: 'b', preset: 'math-quick', config, seed: config.seed, workflow: 'math', algorithm: 'srpo' });
  return { store, runId, runDir: mkdtempSync(join(tmpdir(), 'srpo-budget-')) };
}

describe('trainer with a budget', () => {
  it('ends training after the step that reaches the team-token budget', async () => {
    // Every step generates tokens, so a budget of 1 token is spent by step 0.
    const config = small({ budget: { teamTokens: 1 }, eval: { every: 100, n: 2, queries: 2 } });
    const { store, runId, runDir } = newRun(config);
    const steps = await run(config, store, runId, runDir);
    expect(steps.map((s) => [s.step, s.final])).toEqual([
      [0, false],
      [1, true],
    ]);
    expect(steps[0].metrics['budget/team_tokens']).toBeGreaterThan(0);
    expect(steps[0].checkpoint).not.toBeNull(); // the last training step is checkpointed
    expect([...new Set(store.evaluations(runId).map((e) => e.step))]).toEqual([0, 1]); // first and final
  });

  it('counts steps without a budget, recording the cumulative cost every step', async () => {
    const config = small({ steps: 2 });
    const { store, runId, runDir } = newRun(config);
    const steps = await run(config, store, runId, runDir);
    expect(steps.map((s) => s.step)).toEqual([0, 1, 2]);
    const tokens = store.metricSeries(runId, 'budget/team_tokens').map((p) => p.value!);
    expect(tokens).toHaveLength(2);
    expect(tokens[1]).toBeGreaterThan(tokens[0]); // cumulative
    expect(tokens[1] - tokens[0]).toBe(steps[1].metrics['cost/tokens'] * 4); // 2 tasks x 2 episodes, cost/tokens is the per-episode mean
  });

  it('resumed after its budget ran out, runs only the final evaluation; the report names the budget', async () => {
    const config = small({ budget: { teamTokens: 1 } });
    const { store, runId, runDir } = newRun(config);
    const first = new Trainer({ config, runDir, store, runId });
    trainers.push(first);
    await first.step(0); // the budget is spent; the "crash" comes before the final step
    const resumed = await run(config, store, runId, runDir, { dir: checkpointDir(runDir, 0), step: 0 });
    expect(resumed.map((s) => [s.step, s.final])).toEqual([[1, true]]);
    const md = markdownReport({
      generatedAt: 0,
      runs: [
        { run: { id: runId, name: 'b', config } as never, series: { 'budget/team_tokens': store.metricSeries(runId, 'budget/team_tokens') }, evaluations: [] },
      ],
    });
    expect(md).toMatch(/Training ended by: run 1: team-token budget of 1 \\\(\d+ spent\\\)/); // Markdown-escaped parentheses
  });
});
