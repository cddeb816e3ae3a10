/**
 * The trace viewer's arithmetic, so that an event card can show where its numbers come from
 * (docs/ARCHITECTURE.md, "The objective library"):
 *
 *   set log-ratio  L_e = c(K) * sum_j l_{e,j}      c(K) = 1/sqrt(K) | 1/K | 1   (setNorm)
 *                  rho_e = exp(clamp(L_e, -20, 20))
 *   clip           A_e > 0: clipped high when rho_e > 1 + eps_high; A_e < 0: clipped low when
 *                  rho_e < 1 - eps_low (optional dual clip: psi >= c * A_e); A_e = 0: no signal
 *   advantage      A_e = (R_e - mean_g) / (std_g + eps), std with N - 1, over the complete events
 *                  of its group in the step; one event alone: 0; scaleByStd off: R_e - mean_g
 *   contribution   |A_e * rho_e|, the size of the event's term in the surrogate before the clip
 *
 * Plus the list's sort orders. Pure, browser-safe, no Vue. Recomputes from the stored parts only;
 * the stored values stay the truth (the card shows both when they differ, e.g. a variant whose
 * advantage scope is not the event group). Not the objective itself (src/core/srpo).
 * Tests: test/shared/traceExplain.test.ts.
 */

/** c(K) of each set normalisation (src/core/srpo/scales.ts, written again here: shared must not import core). */
export const SET_NORMS = {
  sqrt: { factor: (k: number) => 1 / Math.sqrt(k), text: (k: number) => `1/√${k}` },
  mean: { factor: (k: number) => 1 / k, text: (k: number) => `1/${k}` },
  none: { factor: () => 1, text: () => '1' },
} satisfies Record<string, { factor: (k: number) => number; text: (k: number) => string }>;
export type SetNormName = keyof typeof SET_NORMS;

/** The ±clamp on a log-ratio before exp (src/core/srpo/config.ts LOG_RATIO_CLAMP). */
export const LOG_RATIO_CLAMP = 20;

export interface SetRatioExplained {
  k: number;
  /** The member log-ratios l_j used (length-normalised when the run asks for it). */
  terms: number[];
  sum: number;
  factor: number;
  factorText: string;
  logRatio: number;
  clamped: boolean;
  ratio: number;
}

/**
 * L = c(K) * sum_j l_j from the members' log-ratios. `lengths` (member output lengths) divide each
 * l_j when `lengthNorm` is on. Null when a member has no log-ratio (no update reached it).
 */
export function explainSetRatio(
  memberLogRatios: readonly (number | null)[],
  setNorm: string,
  options: { lengthNorm?: boolean; lengths?: readonly number[] } = {},
): SetRatioExplained | null {
  if (memberLogRatios.length === 0 || memberLogRatios.some((l) => l === null || !Number.isFinite(l))) return null;
  const norm = SET_NORMS[(Object.hasOwn(SET_NORMS, setNorm) ? setNorm : 'sqrt') as SetNormName];
  const k = memberLogRatios.length;
  const terms = (memberLogRatios as number[]).map((l, j) => (options.lengthNorm ? l / Math.max(1, options.lengths?.[j] ?? 1) : l));
  const sum = terms.reduce((a, b) => a + b, 0);
  const factor = norm.factor(k);
  const logRatio = factor * sum;
  const clamped = Math.abs(logRatio) > LOG_RATIO_CLAMP;
  const ratio = Math.exp(Math.max(-LOG_RATIO_CLAMP, Math.min(LOG_RATIO_CLAMP, logRatio)));
  return { k, terms, sum, factor, factorText: norm.text(k), logRatio, clamped, ratio };
}

export interface ClipExplained {
  /** Which side of the clip this advantage's sign can hit. */
  side: 'high' | 'low' | 'none';
  /** The ratio interval inside which the gradient flows (the other end is open). */
  interval: [number, number];
  /** Plain sentence, e.g. "A > 0: clipped when ρ > 1.2". */
  rule: string;
  /** Whether this ratio is outside it (what the update saw: the stored clip state is the truth). */
  outside: boolean;
}

export function explainClip(advantage: number, ratio: number | null, clipLow: number, clipHigh: number, dualClip: number | null = null): ClipExplained {
  const hi = 1 + clipHigh;
  const lo = 1 - clipLow;
  if (advantage > 0)
    return { side: 'high', interval: [0, hi], rule: `A > 0: clipped high when ρ > 1 + ε_high = ${fmt(hi)}`, outside: ratio !== null && ratio > hi };
  if (advantage < 0) {
    const dual = dualClip !== null ? `; dual clip: the term is at least ${fmt(dualClip)}·A` : '';
    return { side: 'low', interval: [lo, Infinity], rule: `A < 0: clipped low when ρ < 1 − ε_low = ${fmt(lo)}${dual}`, outside: ratio !== null && ratio < lo };
  }
  return { side: 'none', interval: [0, Infinity], rule: 'A = 0: the event adds no gradient, whatever ρ', outside: false };
}

export interface GroupExplained {
  n: number;
  mean: number;
  /** Sample standard deviation (N - 1); 0 for a single event. */
  std: number;
  /** The advantage recomputed for `reward` from these statistics. */
  advantage: number;
}

/** Group-relative advantage of `reward` among `rewards` (the complete events of its group, itself included). */
export function explainAdvantage(
  reward: number,
  rewards: readonly number[],
  options: { eps?: number; scaleByStd?: boolean; stdFloor?: number } = {},
): GroupExplained {
  const n = rewards.length;
  const mean = n ? rewards.reduce((a, b) => a + b, 0) / n : reward;
  const std = n > 1 ? Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / (n - 1)) : 0;
  if (n < 2) return { n, mean, std, advantage: 0 };
  const centred = reward - mean;
  const scale = (options.scaleByStd ?? true) ? Math.max(std, options.stdFloor ?? 0) + (options.eps ?? 1e-6) : 1;
  return { n, mean, std, advantage: centred / scale };
}

/** |A x rho|: how large the event's term in the surrogate is (0 without an advantage or ratio). */
export function contribution(e: { advantage: number | null; ratio: number | null }): number {
  return e.advantage === null || e.ratio === null ? 0 : Math.abs(e.advantage * e.ratio);
}

export const SORT_KEYS = {
  list: null,
  advantage: (e: { advantage: number | null }) => e.advantage,
  ratio: (e: { ratio: number | null }) => e.ratio,
  contribution: (e: { advantage: number | null; ratio: number | null }) => (e.advantage === null || e.ratio === null ? null : contribution(e)),
} satisfies Record<string, ((e: { advantage: number | null; ratio: number | null }) => number | null) | null>;
export type SortKey = keyof typeof SORT_KEYS;
export const isSortKey = (s: string | undefined): s is SortKey => s !== undefined && Object.hasOwn(SORT_KEYS, s);

/**
 * The list in the order asked for: 'list' keeps the stored (step, id) order; the others sort by
 * their value (descending by default), events without one last, ties in list order.
 */
export function sortEvents<E extends { advantage: number | null; ratio: number | null }>(
  events: readonly E[],
  key: SortKey,
  dir: 'desc' | 'asc' = 'desc',
): E[] {
  const value = SORT_KEYS[key];
  if (!value) return [...events];
  const sign = dir === 'desc' ? -1 : 1;
  return events
    .map((e, i) => ({ e, i, v: value(e) }))
    .sort((a, b) => {
      if (a.v === null || b.v === null) return a.v === null ? (b.v === null ? a.i - b.i : 1) : -1;
      return a.v === b.v ? a.i - b.i : sign * (a.v - b.v);
    })
    .map((x) => x.e);
}

/** A number as the card prints it: 4 significant digits, no trailing zeros. */
export function fmt(v: number, digits = 4): string {
  if (!Number.isFinite(v)) return String(v);
  return Number(v.toPrecision(digits)).toString();
}
