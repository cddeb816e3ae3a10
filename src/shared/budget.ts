/**
 * Matched budgets as the reports see them (browser-safe): the cumulative cost metrics every
 * training step records, and which bound ended a run (a budget of its config reached by its
 * last cumulative metrics, else its step count). The meter itself: src/core/train/budget.ts.
 * Tests: test/core/train/budget.test.ts.
 */

export const BUDGET_NAMES = ['teamTokens', 'toolCalls'] as const;
export type BudgetName = (typeof BUDGET_NAMES)[number];

/** Cumulative metric key of each budget. */
export const BUDGET_METRICS: Record<BudgetName, string> = { teamTokens: 'budget/team_tokens', toolCalls: 'budget/tool_calls' };
const LABELS: Record<BudgetName, string> = { teamTokens: 'team-token budget', toolCalls: 'tool-call budget' };

/** Which bound ended a run. `last`: metric key -> its last value. */
export function endedBy(
  budget: Partial<Record<BudgetName, number>> | undefined,
  last: Partial<Record<string, number | null>>,
): { bound: BudgetName | 'steps'; label: string } {
  for (const n of BUDGET_NAMES) {
    const limit = budget?.[n];
    const spent = last[BUDGET_METRICS[n]] ?? 0;
    if (limit !== undefined && spent >= limit) return { bound: n, label: `${LABELS[n]} of ${limit} (${spent} spent)` };
  }
  return { bound: 'steps', label: 'step count' };
}
