/**
 * The two small per-event tables of SRPO, as typed registries:
 * - set normalisation c(K) of the set log-ratio L_e = c(K_e) * sum_j l_{e,j} (SRPO.md point 1);
 * - reduction weight w_e in J = sum_e w_e psi_e / sum_e w_e (SRPO.md point 4).
 */
import type { Reduction, SetNorm } from './config';
import type { PreparedEvent } from './types';

export const SET_NORM_SCALE = {
  sqrt: (k: number) => 1 / Math.sqrt(k),
  mean: (k: number) => 1 / k,
  none: () => 1,
} satisfies Record<SetNorm, (k: number) => number>;

export const REDUCTION_WEIGHT = {
  /** Every transition counts once (SRPO). */
  event: () => 1,
  /** Weighted by the event's masked token count n_e (the paper's token-reduced diagnostic). */
  token: (e: PreparedEvent) => e.length,
  /** Weighted by the event's cardinality K_e. */
  member: (e: PreparedEvent) => e.k,
} satisfies Record<Reduction, (e: PreparedEvent) => number>;
