/**
 * Pure helpers over the API's records shared by the renderer and the report builder: EMA smoothing with
 * bias correction, config flattening and diffs, and the paper-style evaluation table (benchmarks
 * as columns, Avg@n / Pass@n, macro average, mean ± sample std over seeds of runs that share a
 * config apart from seed and name).
 *
 * Not here: fetching (the API client), drawing (renderer, report.ts). Browser-safe.
 * Tested by test/server/analysis.test.ts.
 */
import type { SeriesPoint } from './series';
import type { StoredEvaluation } from './records';

/**
 * Exponential moving average with bias correction (Adam-style, as TensorBoard's smoothing):
 * s_t = w s_{t-1} + (1 - w) x_t from s_0 = 0, shown as s_t / (1 - w^t), so the first points are
 * not pulled towards zero. Null (NaN) values are kept null and do not advance the average.
 * weight in [0, 1); 0 returns the raw values.
 */
export function emaSmooth(values: readonly (number | null)[], weight: number): (number | null)[] {
  const w = emaWeight(weight);
  const state: EmaState = { s: 0, t: 0 };
  return values.map((x) => emaStep(state, x, w));
}

/** The running state of emaSmooth: the sum s and the count t of finite values so far. */
export interface EmaState {
  s: number;
  t: number;
}

/** A smoothing weight clamped to [0, 0.999], as emaSmooth uses it. */
export function emaWeight(weight: number): number {
  return Math.min(Math.max(weight, 0), 0.999);
}

/** One point of emaSmooth: advances `state` by x and returns the smoothed value (null for a null or non-finite x, which does not advance it). */
export function emaStep(state: EmaState, x: number | null, w: number): number | null {
  if (x === null || !Number.isFinite(x)) return null;
  state.t++;
  state.s = w * state.s + (1 - w) * x;
  return state.s / (1 - w ** state.t);
}

/** Flattens nested plain objects to dotted paths; arrays and scalars are leaves. */
export function flatten(obj: unknown, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  if (obj && typeof obj === 'object' && !Array.isArray(obj)) {
    const entries = Object.entries(obj as Record<string, unknown>);
    if (entries.length === 0 && prefix) out[prefix] = {};
    for (const [k, v] of entries) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (prefix) out[prefix] = obj;
  return out;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Leaves that differ between two configs, sorted by path. */
export function configDiff(before: unknown, after: unknown): { path: string; before: unknown; after: unknown }[] {
  const a = flatten(before);
  const b = flatten(after);
  const paths = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return paths.filter((p) => !same(a[p], b[p])).map((p) => ({ path: p, before: a[p], after: b[p] }));
}

/** Leaves that differ across several configs: path -> value per config. */
export function configsDiff(configs: readonly unknown[]): { path: string; values: unknown[] }[] {
  const flat = configs.map((c) => flatten(c));
  const paths = [...new Set(flat.flatMap((f) => Object.keys(f)))].sort();
  return paths.map((p) => ({ path: p, values: flat.map((f) => f[p]) })).filter((r) => r.values.some((v) => !same(v, r.values[0])));
}

/** The identity of a config for grouping seeds: everything but seed and name. */
export function configKeyWithoutSeed(config: unknown): string {
  const flat = flatten(config);
  delete flat.seed;
  delete flat.name;
  return JSON.stringify(
    Object.keys(flat)
      .sort()
      .map((k) => [k, flat[k]]),
  );
}

export function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
}

/** Sample standard deviation (n - 1); 0 for a single value. */
export function sampleStd(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

export interface MeanStd {
  mean: number;
  std: number;
  n: number;
}

export interface EvalTableRow {
  /** Name of the config group (the first run's name without its seed suffix). */
  label: string;
  runIds: number[];
  seeds: number[];
  /** n of Avg@n / Pass@n (from the evaluations). */
  n: number;
  /** benchmark -> Avg@n and Pass@n over seeds (each run's last evaluation). */
  cells: Record<string, { avg: MeanStd; pass: MeanStd }>;
  /** The step of each run's last evaluation (runIds order; -1: none). */
  evalSteps: number[];
  /**
   * Every run's last evaluation is its final one (at its planned `steps`, after the last
   * update). False for a stopped or running run whose last evaluation came earlier (a step-0
   * evaluation is the untrained policy, not a result); true when steps are not given.
   */
  final: boolean;
  macro: { avg: MeanStd; pass: MeanStd };
}

export interface EvalTable {
  benchmarks: string[];
  rows: EvalTableRow[];
}

export interface EvalTableInput {
  runId: number;
  name: string;
  seed: number;
  config: unknown;
  evaluations: readonly StoredEvaluation[];
  /** Planned steps: the final evaluation is recorded at this step. */
  steps?: number;
}

const ms = (xs: number[]): MeanStd => ({ mean: mean(xs), std: sampleStd(xs), n: xs.length });

/**
 * The paper's table: one row per config (runs differing only in seed merged), each run's last
 * evaluation per benchmark, mean ± sample std over its seeds; macro = per-run mean over
 * benchmarks, then mean ± std over seeds.
 */
export function evalTable(runs: readonly EvalTableInput[]): EvalTable {
  const benchmarks = [...new Set(runs.flatMap((r) => r.evaluations.map((e) => e.benchmark)))].sort();
  const groups = new Map<string, EvalTableInput[]>();
  for (const r of runs) {
    const key = configKeyWithoutSeed(r.config);
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const rows: EvalTableRow[] = [];
  for (const members of groups.values()) {
    const lastSteps = members.map((r) => Math.max(-1, ...r.evaluations.map((e) => e.step)));
    const finals = members.map((r, i) => r.evaluations.filter((e) => e.step === lastSteps[i]));
    const cells: EvalTableRow['cells'] = {};
    for (const b of benchmarks) {
      const per = finals.map((f) => f.find((e) => e.benchmark === b)).filter((e): e is StoredEvaluation => !!e);
      if (per.length) cells[b] = { avg: ms(per.map((e) => e.avgAtN)), pass: ms(per.map((e) => e.passAtN)) };
    }
    const macroAvg = finals.filter((f) => f.length).map((f) => mean(f.map((e) => e.avgAtN)));
    const macroPass = finals.filter((f) => f.length).map((f) => mean(f.map((e) => e.passAtN)));
    rows.push({
      label: members[0].name.replace(/-s\d+$/, ''),
      runIds: members.map((r) => r.runId),
      seeds: members.map((r) => r.seed),
      n: finals.flat()[0]?.n ?? 0,
      cells,
      evalSteps: lastSteps,
      final: members.every((r, i) => r.steps === undefined || lastSteps[i] === r.steps),
      macro: { avg: ms(macroAvg), pass: ms(macroPass) },
    });
  }
  return { benchmarks, rows };
}

/** `12.3 ± 1.2` in percent, or `12.3` for a single seed, or `–` for none. */
export function formatMeanStd(x: MeanStd | undefined, digits = 1): string {
  if (!x || !x.n || !Number.isFinite(x.mean)) return '–';
  const m = (x.mean * 100).toFixed(digits);
  return x.n > 1 ? `${m} ± ${(x.std * 100).toFixed(digits)}` : m;
}

/** Values of a series as [x, y] pairs, x by step or by wall time (seconds since the first point). */
export function seriesXY(points: readonly SeriesPoint[], x: 'step' | 'time'): [number, number | null][] {
  const t0 = points[0]?.wallTime ?? 0;
  return points.map((p) => [x === 'step' ? p.step : (p.wallTime - t0) / 1000, p.value]);
}

/** A run's best evaluation: the step and value of its highest `eval/macro/avg`. */
export type BestEval = { step: number; value: number };

/**
 * The best evaluation after one more point: the highest finite value wins, an equal one does not
 * replace the earlier step. A fold step, so a whole series (the run list) and a live push (the
 * renderer's store) compute it the same way.
 */
export function bestEvalAfter(best: BestEval | null, step: number, value: number | null | undefined): BestEval | null {
  if (value === null || value === undefined || !Number.isFinite(value)) return best;
  return !best || value > best.value ? { step, value } : best;
}

/** The best evaluation of a series (the first step of its highest finite value), or null when it has none. */
export function bestEval(points: readonly { step: number; value: number | null }[]): BestEval | null {
  return points.reduce<BestEval | null>((best, p) => bestEvalAfter(best, p.step, p.value), null);
}
