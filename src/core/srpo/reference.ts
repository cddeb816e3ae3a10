/**
 * Slow, obvious float64 reference of every objective variant, in plain loops, written from
 * SRPO.md's formulas independently of the tfjs fast path. Tests hold the two against each
 * other on seeded random batches and hold this one against cases worked by hand; gradient tests
 * take finite differences of it. Never used for training.
 *
 * Shared with the fast path on purpose: validation, incomplete-event dropping and the
 * advantages (batch.ts, advantages.ts), which are already plain float64 code.
 */
import { LOG_RATIO_CLAMP, type Algorithm, type ObjectiveConfig } from './config';
import { objectiveConfig, prepareObjectiveBatch } from './objective';
import { REDUCTION_WEIGHT, SET_NORM_SCALE } from './scales';
import type { EventReport, ObjectiveBatch, PreparedBatch } from './types';

export interface ReferenceReport {
  loss: number;
  events: EventReport[];
  /** The ratio/clip diagnostics (clip/*, ratio/*, kl/approx). */
  metrics: Record<string, number>;
}

/** One ratio unit (event, member or token) with its loss weight. */
interface Unit {
  logRatio: number;
  advantage: number;
  weight: number;
}

interface UnitSet {
  units: Unit[];
  /** Loss = -sum(weight * psi) / denominator. */
  denominator: number;
  /** Units are events, one per prepared event, in order. */
  perEvent: boolean;
}

function memberLogRatio(logpCur: number[], logpOld: number[], mask: number[]): number {
  let l = 0;
  for (let t = 0; t < mask.length; t++) if (mask[t] === 1) l += logpCur[t] - logpOld[t];
  return l;
}

const UNITS = {
  srpo: (b, cfg) => {
    const weight = REDUCTION_WEIGHT[cfg.reduction];
    const units = b.events.map((e) => {
      let sum = 0;
      for (const j of e.members) {
        const m = b.members[j];
        const l = memberLogRatio(m.logpCur, m.logpOld, m.mask);
        sum += cfg.lengthNorm ? l / Math.max(m.length, 1) : l;
      }
      return { logRatio: SET_NORM_SCALE[cfg.setNorm](e.k) * sum, advantage: e.advantage, weight: weight(e) };
    });
    return { units, denominator: units.reduce((a, u) => a + u.weight, 0), perEvent: true };
  },
  grpo_token: (b) => tokenUnits(b),
  drmas: (b) => tokenUnits(b),
  grpo_seq: (b) => memberUnits(b, false),
  gspo: (b) => memberUnits(b, true),
} satisfies Record<Algorithm, (b: PreparedBatch, cfg: ObjectiveConfig) => UnitSet>;

function tokenUnits(b: PreparedBatch): UnitSet {
  const units: Unit[] = [];
  for (const m of b.members) {
    for (let t = 0; t < m.mask.length; t++) {
      if (m.mask[t] === 1) units.push({ logRatio: m.logpCur[t] - m.logpOld[t], advantage: m.advantage, weight: 1 });
    }
  }
  return { units, denominator: units.length, perEvent: false };
}

function memberUnits(b: PreparedBatch, lengthNormalised: boolean): UnitSet {
  const units = b.members.map((m) => {
    const l = memberLogRatio(m.logpCur, m.logpOld, m.mask);
    return { logRatio: lengthNormalised ? l / Math.max(m.length, 1) : l, advantage: m.advantage, weight: 1 };
  });
  return { units, denominator: units.length, perEvent: false };
}

export function referenceObjective(batch: ObjectiveBatch, config: unknown = {}): ReferenceReport {
  const cfg = objectiveConfig(config);
  const prepared = prepareObjectiveBatch(batch, cfg);
  const events: EventReport[] = prepared.events.map((e) => ({ id: e.id, advantage: e.advantage }));
  if (prepared.events.length === 0) return { loss: 0, events, metrics: {} };

  const { units, denominator, perEvent } = UNITS[cfg.algorithm](prepared, cfg);
  const lo = 1 - cfg.clipLow;
  const hi = 1 + cfg.clipHigh;
  let objective = 0;
  let low = 0;
  let high = 0;
  let dual = 0;
  let ratioSum = 0;
  let logAbsSum = 0;
  let klSum = 0;
  let clamped = 0;
  let ratioMin = Infinity;
  let ratioMax = -Infinity;
  units.forEach((u, i) => {
    const lc = Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, u.logRatio));
    const rho = Math.exp(lc);
    const a = u.advantage;
    let psi = Math.min(rho * a, Math.min(hi, Math.max(lo, rho)) * a);
    if (cfg.dualClip !== null && a < 0) {
      if (psi < cfg.dualClip * a) dual++;
      psi = Math.max(psi, cfg.dualClip * a);
    }
    objective += u.weight * psi;
    const isLow = a < 0 && rho < lo;
    const isHigh = a > 0 && rho > hi;
    if (isLow) low++;
    if (isHigh) high++;
    if (Math.abs(u.logRatio) > LOG_RATIO_CLAMP) clamped++;
    ratioSum += rho;
    logAbsSum += Math.abs(lc);
    klSum += rho - 1 - lc;
    ratioMin = Math.min(ratioMin, rho);
    ratioMax = Math.max(ratioMax, rho);
    if (perEvent) Object.assign(events[i], { logRatio: lc, ratio: rho, clipped: isLow ? 'low' : isHigh ? 'high' : false });
  });
  const n = Math.max(1, units.length);
  const metrics: Record<string, number> = {
    'clip/frac_low': low / n,
    'clip/frac_high': high / n,
    'clip/frac': (low + high) / n,
    'ratio/mean': ratioSum / n,
    'ratio/log_abs_mean': logAbsSum / n,
    'ratio/clamped': clamped,
    'kl/approx': klSum / n,
  };
  if (units.length > 0) Object.assign(metrics, { 'ratio/min': ratioMin, 'ratio/max': ratioMax });
  if (cfg.dualClip !== null) metrics['clip/frac_dual'] = dual / n;
  // "+ 0" turns -0 into 0 so that a zero objective reads as a plain 0.
  return { loss: -objective / Math.max(1, denominator) + 0, events, metrics };
}
