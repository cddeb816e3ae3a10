/**
 * Experiment suites as the API and the reports see them, and the paper's tables built from one
 * (Tables 1-3 and Appendix D.1-D.2), pure and browser-safe:
 *
 *   - per benchmark Avg@n and Pass@n of each run's final evaluation, and their macro average
 *     (per run, the mean over benchmarks), as mean ± sample std over the row's seeds;
 *   - the paired difference of each row's macro Avg@n and Pass@n against a baseline row, over
 *     the seeds both have, with a 95% t interval and the seeds it wins (pairedStats.ts);
 *   - cost columns of the final evaluation, per run the mean over benchmarks: U_tok (correct
 *     answers per million generated tokens), C_tok (tokens per query), C_call (agent calls per
 *     query), C_tool (tool calls per query), P50 / P95 episode latency (ms);
 *   - training dynamics of the `grad/norm` curve, per run: mean, coefficient of variation
 *     (sample std / mean) and range (min, max); mean ± std over seeds, the range over all seeds.
 *
 * Only completed runs enter a table (a run still training has no final evaluation yet).
 * Not here: reading the store (src/core/suites/tableData.ts), rendering (report.ts).
 * Tests: test/shared/suiteTable.test.ts (hand-computed values).
 */
import type { MeanStd } from './analysis';
import type { RunStatus, StoredEvaluation } from './records';
import { pairedDifference, type PairedDifference } from './pairedStats';

/** A cell of a suite: one row at one seed, and the run it became (null until created). */
export interface SuiteEntry {
  position: number;
  label: string;
  seed: number;
  runId: number | null;
  /** The run's status; `pending` before the run exists. */
  status: RunStatus | 'pending';
  /** Last committed step (-1 none) and the run's step count. */
  lastStep: number;
  steps: number;
}

export interface SuiteSummary {
  id: number;
  name: string;
  createdAt: number;
  /** Row labels in order. */
  rows: string[];
  seeds: number[];
  /** Label of the row the others are compared with. */
  baseline: string;
  /** Cells by status (`pending`: no run yet). */
  counts: Record<string, number>;
  total: number;
}

export interface SuiteDetail extends SuiteSummary {
  entries: SuiteEntry[];
  table: SuiteTable;
}

/** What the table needs of one completed run. */
export interface SuiteTableRun {
  label: string;
  seed: number;
  runId: number;
  /** The run's evaluations (the last step's are used). */
  evaluations: readonly StoredEvaluation[];
  /** Values of its `grad/norm` series (non-finite ones are skipped). */
  gradNorm: readonly (number | null)[];
}

export const COST_COLUMNS = ['uTok', 'cTok', 'cCall', 'cTool', 'p50Ms', 'p95Ms'] as const;
export type CostColumn = (typeof COST_COLUMNS)[number];
export const COST_LABELS: Record<CostColumn, string> = { uTok: 'U_tok', cTok: 'C_tok', cCall: 'C_call', cTool: 'C_tool', p50Ms: 'P50 ms', p95Ms: 'P95 ms' };

export interface SuiteTableRow {
  label: string;
  /** Seeds with a completed run, ascending. */
  seeds: number[];
  runIds: number[];
  n: number;
  cells: Record<string, { avg: MeanStd; pass: MeanStd }>;
  macro: { avg: MeanStd; pass: MeanStd };
  /** Against the baseline row (null for the baseline itself, or without a common seed). */
  diff: { avg: PairedDifference | null; pass: PairedDifference | null } | null;
  cost: Record<CostColumn, MeanStd>;
  dynamics: { gradMean: MeanStd; gradCv: MeanStd; gradMin: number | null; gradMax: number | null };
}

export interface SuiteTable {
  benchmarks: string[];
  baseline: string;
  rows: SuiteTableRow[];
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
const std = (xs: readonly number[]) => {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
};
const ms = (xs: readonly number[]): MeanStd => ({ mean: mean(xs), std: std(xs), n: xs.length });

/** The last evaluation step's rows of a run. */
function finalEvaluations(evaluations: readonly StoredEvaluation[]): StoredEvaluation[] {
  const last = Math.max(-1, ...evaluations.map((e) => e.step));
  return evaluations.filter((e) => e.step === last);
}

const COST_OF: Record<CostColumn, (e: StoredEvaluation) => number> = {
  uTok: (e) => e.successesPerMTok,
  cTok: (e) => e.tokensPerQuery,
  cCall: (e) => e.callsPerQuery,
  cTool: (e) => e.toolCallsPerQuery,
  p50Ms: (e) => e.latencyP50Ms,
  p95Ms: (e) => e.latencyP95Ms,
};

/** Grad-norm statistics of one run: mean, CV (sample std / mean), min, max; null without points. */
export function gradDynamics(values: readonly (number | null)[]): { mean: number; cv: number; min: number; max: number } | null {
  const xs = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (!xs.length) return null;
  const m = mean(xs);
  return { mean: m, cv: m !== 0 ? std(xs) / m : NaN, min: Math.min(...xs), max: Math.max(...xs) };
}

/**
 * The suite's table: rows in `rowOrder` (labels without a completed run are kept, empty), the
 * baseline named (default: the first row).
 */
export function buildSuiteTable(runs: readonly SuiteTableRun[], rowOrder: readonly string[], baseline?: string): SuiteTable {
  const labels = [...rowOrder, ...new Set(runs.map((r) => r.label).filter((l) => !rowOrder.includes(l)))];
  const base = baseline && labels.includes(baseline) ? baseline : (labels[0] ?? '');
  const finals = runs.map((r) => ({ run: r, evals: finalEvaluations(r.evaluations) })).filter((f) => f.evals.length > 0);
  const benchmarks = [...new Set(finals.flatMap((f) => f.evals.map((e) => e.benchmark)))].sort();
  const macroBySeed = new Map<string, { avg: Map<number, number>; pass: Map<number, number> }>();
  const rows: SuiteTableRow[] = labels.map((label) => {
    const own = finals.filter((f) => f.run.label === label).sort((a, b) => a.run.seed - b.run.seed);
    const cells: SuiteTableRow['cells'] = {};
    for (const b of benchmarks) {
      const per = own.map((f) => f.evals.find((e) => e.benchmark === b)).filter((e): e is StoredEvaluation => !!e);
      if (per.length) cells[b] = { avg: ms(per.map((e) => e.avgAtN)), pass: ms(per.map((e) => e.passAtN)) };
    }
    const avg = new Map(own.map((f) => [f.run.seed, mean(f.evals.map((e) => e.avgAtN))]));
    const pass = new Map(own.map((f) => [f.run.seed, mean(f.evals.map((e) => e.passAtN))]));
    macroBySeed.set(label, { avg, pass });
    const cost = Object.fromEntries(COST_COLUMNS.map((c) => [c, ms(own.map((f) => mean(f.evals.map(COST_OF[c]))))])) as Record<CostColumn, MeanStd>;
    const dyn = own.map((f) => gradDynamics(f.run.gradNorm)).filter((d): d is NonNullable<typeof d> => d !== null);
    return {
      label,
      seeds: own.map((f) => f.run.seed),
      runIds: own.map((f) => f.run.runId),
      n: own.length,
      cells,
      macro: { avg: ms([...avg.values()]), pass: ms([...pass.values()]) },
      diff: null,
      cost,
      dynamics: {
        gradMean: ms(dyn.map((d) => d.mean)),
        gradCv: ms(dyn.map((d) => d.cv).filter(Number.isFinite)),
        gradMin: dyn.length ? Math.min(...dyn.map((d) => d.min)) : null,
        gradMax: dyn.length ? Math.max(...dyn.map((d) => d.max)) : null,
      },
    };
  });
  const b = macroBySeed.get(base);
  for (const row of rows) {
    if (row.label === base || !b) continue;
    const own = macroBySeed.get(row.label)!;
    row.diff = { avg: pairedDifference(own.avg, b.avg), pass: pairedDifference(own.pass, b.pass) };
  }
  return { benchmarks, baseline: base, rows };
}

/** `+3.1 [-0.4, 6.6] (2/3)`: a difference in percentage points, its 95% interval and seeds won. */
export function formatDifference(d: PairedDifference | null | undefined, digits = 1): string {
  if (!d) return '–';
  const pp = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(digits)}`;
  const ci = d.lo !== null && d.hi !== null ? ` [${pp(d.lo)}, ${pp(d.hi)}]` : '';
  return `${pp(d.mean)}${ci} (${d.wins}/${d.n})`;
}

/** A plain number ± std (not a percentage), or `–`. */
export function formatPlain(x: MeanStd | undefined, digits = 3): string {
  if (!x || !x.n || !Number.isFinite(x.mean)) return '–';
  const f = (v: number) => Number(v.toPrecision(digits)).toString();
  return x.n > 1 ? `${f(x.mean)} ± ${f(x.std)}` : f(x.mean);
}
