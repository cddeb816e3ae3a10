/**
 * The statistics of the suite tables, plain and browser-safe: the 97.5% quantile of Student's t
 * (a two-sided 95% interval), and the paired difference of two rows over the seeds they share
 * (the seed fixes the task order, sampling and initialisation, so row A at seed s and row B at
 * seed s form a pair and the pairs' spread, not the rows', sets the interval):
 *
 *   d_s = a_s - b_s,   mean d,   95% CI = mean d ± t_{0.975, n-1} * sd(d) / sqrt(n),   wins = #{d_s > 0}
 *
 * With one pair the interval is undefined (null); with none there is no difference at all.
 * Not here: which numbers are compared (suites.ts). Tests: test/shared/pairedStats.test.ts.
 */

/** t_{0.975, df} for df = 1..30 (standard tables). */
const T975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069,
  2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];
/** Beyond 30: tabled points, linear in 1/df between them (error < 1e-3). */
const T975_TAIL: [number, number][] = [
  [30, 2.042],
  [40, 2.021],
  [60, 2.0],
  [120, 1.98],
  [Infinity, 1.96],
];

export function tQuantile975(df: number): number {
  if (!Number.isInteger(df) || df < 1) throw new Error(`tQuantile975: df must be an integer >= 1, got ${df}`);
  if (df <= 30) return T975[df - 1];
  for (let i = 1; i < T975_TAIL.length; i++) {
    const [d1, t1] = T975_TAIL[i];
    if (df <= d1) {
      const [d0, t0] = T975_TAIL[i - 1];
      const w = (1 / d0 - 1 / df) / (1 / d0 - (d1 === Infinity ? 0 : 1 / d1));
      return t0 + w * (t1 - t0);
    }
  }
  return 1.96;
}

export interface PairedDifference {
  /** Pairs (seeds present in both rows). */
  n: number;
  /** Seeds of the pairs, ascending. */
  seeds: number[];
  /** Mean of a_s - b_s. */
  mean: number;
  /** 95% t interval of the mean difference; null with fewer than two pairs. */
  lo: number | null;
  hi: number | null;
  /** Pairs with a_s > b_s. */
  wins: number;
}

/** Paired difference a - b over the seeds both have (maps seed -> value). Null without any pair. */
export function pairedDifference(a: ReadonlyMap<number, number>, b: ReadonlyMap<number, number>): PairedDifference | null {
  const seeds = [...a.keys()].filter((s) => b.has(s)).sort((x, y) => x - y);
  if (!seeds.length) return null;
  const d = seeds.map((s) => a.get(s)! - b.get(s)!);
  const n = d.length;
  const mean = d.reduce((x, y) => x + y, 0) / n;
  const wins = d.filter((x) => x > 0).length;
  if (n < 2) return { n, seeds, mean, lo: null, hi: null, wins };
  const sd = Math.sqrt(d.reduce((x, y) => x + (y - mean) ** 2, 0) / (n - 1));
  const half = (tQuantile975(n - 1) * sd) / Math.sqrt(n);
  return { n, seeds, mean, lo: mean - half, hi: mean + half, wins };
}

/** Whether the interval excludes 0: the difference exceeds the seed spread at 95%. */
export function excludesZero(d: PairedDifference | null): boolean {
  return d !== null && d.lo !== null && d.hi !== null && (d.lo > 0 || d.hi < 0);
}
