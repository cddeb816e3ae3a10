/**
 * Slow, obvious float64 reference of every objective variant, in plain loops, written from
 * SRPO.md's formulas independently of the tfjs fast path. Tests hold the two against each
 * other on seeded random batches and hold this one against cases worked by hand; gradient tests
 * take finite differences of it. Never used for training.
 *
 * Shared with the fast path on purpose: validation and incomplete-event dropping (batch.ts).
 * The advantages of every grouping are recomputed here with their own loops (no shared group
 * helper), from the grouping definitions in groupings/*.ts's headers.
 */
import { LOG_RATIO_CLAMP, type Algorithm, type Grouping, type ObjectiveConfig } from './config';
import { groupingOf, objectiveConfig, prepareObjectiveBatch } from './objective';
import { REDUCTION_WEIGHT, SET_NORM_SCALE } from './scales';
import type { EventReport, ObjectiveBatch, PreparedBatch } from './types';

export interface ReferenceReport {
  loss: number;
  events: EventReport[];
  /** Advantage of each member of a complete event, in prepared order (events' order, then input order). */
  memberAdvantages: number[];
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

/** Group-relative normalisation of one list of rewards, written out again. */
function normalise(rewards: number[], cfg: ObjectiveConfig): number[] {
  const n = rewards.length;
  if (n < 2) return rewards.map(() => 0);
  let sum = 0;
  for (const r of rewards) sum += r;
  const mean = sum / n;
  let ss = 0;
  for (const r of rewards) ss += (r - mean) ** 2;
  const std = Math.max(Math.sqrt(ss / (n - 1)), cfg.stdFloor);
  return rewards.map((r) => (cfg.scaleByStd ? (r - mean) / (std + cfg.advEps) : r - mean));
}

/** Normalises rewards within groups named by `keys` (parallel arrays), in input order. */
function byKey(keys: string[], rewards: number[], cfg: ObjectiveConfig): number[] {
  const out = new Array<number>(keys.length).fill(0);
  const done = new Set<string>();
  for (let i = 0; i < keys.length; i++) {
    if (done.has(keys[i])) continue;
    done.add(keys[i]);
    const idx: number[] = [];
    for (let j = 0; j < keys.length; j++) if (keys[j] === keys[i]) idx.push(j);
    const adv = normalise(
      idx.map((j) => rewards[j]),
      cfg,
    );
    idx.forEach((j, t) => (out[j] = adv[t]));
  }
  return out;
}

/** Event and member advantages of every grouping, by plain loops over the prepared batch. */
const ADVANTAGES = {
  event: (b, cfg) => {
    const events = byKey(
      b.events.map((e) => e.group),
      b.events.map((e) => e.reward),
      cfg,
    );
    return { events, members: b.members.map((m) => events[m.event]) };
  },
  trajectory: (b, cfg) => {
    // One outcome per (prompt, trajectory): the mean R_e over the trajectory's member outputs.
    const keys: string[] = [];
    const prompts: string[] = [];
    const outcomes: number[] = [];
    for (const e of b.events) {
      const key = `${e.prompt}|${e.trajectory}`;
      if (keys.includes(key)) continue;
      let sum = 0;
      let n = 0;
      for (const m of b.members) {
        const ev = b.events[m.event];
        if (ev.prompt === e.prompt && ev.trajectory === e.trajectory) {
          sum += ev.reward;
          n++;
        }
      }
      keys.push(key);
      prompts.push(e.prompt);
      outcomes.push(sum / n);
    }
    const adv = byKey(prompts, outcomes, cfg);
    const events = b.events.map((e) => adv[keys.indexOf(`${e.prompt}|${e.trajectory}`)]);
    return { events, members: b.members.map((m) => events[m.event]) };
  },
  agent: (b, cfg) => {
    const members = byKey(
      b.members.map((m) => `${b.events[m.event].prompt}|${m.role}`),
      b.members.map((m) => b.events[m.event].reward),
      cfg,
    );
    const events = b.events.map((e) => {
      let sum = 0;
      for (const j of e.members) sum += members[j];
      return sum / e.members.length;
    });
    return { events, members };
  },
} satisfies Record<Grouping, (b: PreparedBatch, cfg: ObjectiveConfig) => { events: number[]; members: number[] }>;

export function referenceObjective(batch: ObjectiveBatch, config: unknown = {}): ReferenceReport {
  const cfg = objectiveConfig(config);
  const fromFastPath = prepareObjectiveBatch(batch, cfg);
  // Validation and dropping are shared; the advantages are overwritten by this file's own loops.
  const adv = ADVANTAGES[groupingOf(cfg)](fromFastPath, cfg);
  const prepared: PreparedBatch = {
    ...fromFastPath,
    events: fromFastPath.events.map((e, i) => ({ ...e, advantage: adv.events[i] })),
    members: fromFastPath.members.map((m, j) => ({ ...m, advantage: adv.members[j] })),
  };
  const events: EventReport[] = prepared.events.map((e) => ({ id: e.id, advantage: e.advantage }));
  const memberAdvantages = adv.members;
  if (prepared.events.length === 0) return { loss: 0, events, memberAdvantages, metrics: {} };

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
  return { loss: -objective / Math.max(1, denominator) + 0, events, memberAdvantages, metrics };
}
