/**
 * Matched budgets (`budget: { teamTokens?, toolCalls? }` in the run config): the running totals
 * of what the training rollouts cost, recorded every step as cumulative metrics
 * (`budget/team_tokens`, `budget/tool_calls`), and which budget, if any, they have reached. The
 * trainer ends training after the step that reaches one (so a run overshoots by at most one
 * step's cost), runs its final evaluation, and the report says which bound ended it.
 *
 * Totals survive a resume: each checkpoint holds them (`budget.json` beside the weights), and a
 * checkpoint without one falls back to the last committed step's metrics.
 * Not here: the loop (trainer.ts), what the report says (src/shared/budget.ts).
 * Tests: test/core/train/budget.test.ts.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUDGET_METRICS, BUDGET_NAMES, type BudgetName } from '../../shared/budget';
import type { RunConfig } from '../config';
import type { RolloutBatch } from '../rollout/orchestrator';

/** This step's cost of each budget. */
const COST = {
  teamTokens: (r) => r.episodes.reduce((a, e) => a + e.generatedTokens, 0),
  toolCalls: (r) => r.episodes.reduce((a, e) => a + e.result.toolCalls, 0),
} satisfies Record<BudgetName, (rollouts: RolloutBatch) => number>;

export class BudgetMeter {
  readonly totals: Record<BudgetName, number>;

  /** `restored`: the cumulative metrics of the last committed step (resume), if any. */
  constructor(
    private readonly budget: RunConfig['budget'],
    restored: Partial<Record<string, number>> = {},
  ) {
    this.totals = Object.fromEntries(BUDGET_NAMES.map((n) => [n, restored[BUDGET_METRICS[n]] ?? 0])) as Record<BudgetName, number>;
  }

  /** Adds a step's rollouts; returns the cumulative metrics to record with the step. */
  add(rollouts: RolloutBatch): Record<string, number> {
    for (const n of BUDGET_NAMES) this.totals[n] += COST[n](rollouts);
    return this.metrics();
  }

  metrics(): Record<string, number> {
    return Object.fromEntries(BUDGET_NAMES.map((n) => [BUDGET_METRICS[n], this.totals[n]]));
  }

  /** The first budget reached, or null. */
  reached(): BudgetName | null {
    return BUDGET_NAMES.find((n) => this.budget[n] !== undefined && this.totals[n] >= this.budget[n]!) ?? null;
  }
}

const BUDGET_FILE = 'budget.json';

/** Writes the meter's cumulative metrics into a checkpoint directory. */
export function saveBudgetTotals(dir: string, meter: BudgetMeter): void {
  writeFileSync(join(dir, BUDGET_FILE), `${JSON.stringify(meter.metrics())}\n`);
}

/** The cumulative metrics a checkpoint holds, or null for a checkpoint without them. */
export function loadBudgetTotals(dir: string): Record<string, number> | null {
  const path = join(dir, BUDGET_FILE);
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, number>;
  } catch (err) {
    throw new Error(`checkpoint ${dir}: ${BUDGET_FILE} is not valid JSON (${(err as Error).message})`);
  }
}
