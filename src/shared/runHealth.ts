/**
 * Health warnings over a run's metric series: the signs that a run is not learning, each with
 * what was measured (which metric, at which steps) and what usually causes it. Shown on the
 * dashboard (RunDashboard), in `srpo-lab show` and once each on the CLI's progress line.
 *
 * The checks are a typed registry (HEALTH_CHECKS): each names the keys it reads and turns their
 * series into at most one warning. Series are in steps (updates done, src/shared/stepConvention.ts)
 * and may be downsampled; the checks look only at runs of consecutive points, so a min/max
 * downsampled series can only shorten a run, never invent one.
 *
 * - no-signal: `groups/zero_std_frac` = 1 (every group's rewards equal, so every advantage is 0)
 *   or `reward/std` = 0, for NO_SIGNAL_STEPS consecutive steps (all of a shorter run's).
 * - all-invalid: some `role/{role}/valid_rate` = 0 for as many steps.
 * - clip-saturated: `clip/frac` >= CLIP_SATURATED for as many steps.
 * - gradient: `grad/norm` non-finite at any step, or `update/skipped` > 0.
 *
 * Pure and browser-safe. Tests: test/shared/runHealth.test.ts; on screen test/e2e/stepAgreement.test.ts.
 */

/** A point as the series API gives it (null: a non-finite value). */
export interface HealthPoint {
  step: number;
  value: number | null;
}

export type HealthSeries = Readonly<Record<string, readonly HealthPoint[]>>;

export type HealthCheckName = 'no-signal' | 'all-invalid' | 'clip-saturated' | 'gradient';

export interface HealthWarning {
  check: HealthCheckName;
  /** A short title: `No learning signal`. */
  title: string;
  /** What was measured: the metric, its value and the steps. */
  measured: string;
  /** What usually causes it, and what to try. */
  cause: string;
}

/** Consecutive steps a sign must hold before it is a warning (fewer when the run has fewer). */
export const NO_SIGNAL_STEPS = 3;
/** A clipped fraction at or above this is saturated. */
export const CLIP_SATURATED = 0.95;

/** The longest run of consecutive points (in series order) that satisfy `test`: its first and last step and length. */
function longestRun(points: readonly HealthPoint[], test: (v: number | null) => boolean): { from: number; to: number; n: number } | null {
  let best: { from: number; to: number; n: number } | null = null;
  let from = 0;
  let n = 0;
  for (const p of points) {
    if (test(p.value)) {
      if (n === 0) from = p.step;
      n++;
      if (!best || n > best.n) best = { from, to: p.step, n };
    } else n = 0;
  }
  return best;
}

/**
 * A run long enough to warn: NO_SIGNAL_STEPS points, or, when the series are an ended run's whole
 * series (`ended`), every point of a shorter one; while a run trains only NO_SIGNAL_STEPS do.
 */
function sustained(points: readonly HealthPoint[], test: (v: number | null) => boolean, ended: boolean): { from: number; to: number; n: number } | null {
  const run = longestRun(points, test);
  return run && run.n >= (ended ? Math.min(NO_SIGNAL_STEPS, points.length) : NO_SIGNAL_STEPS) ? run : null;
}

const stepsWord = (r: { from: number; to: number; n: number }): string =>
  r.n === 1 ? `at step ${r.from}` : `for ${r.n} consecutive steps (${r.from}-${r.to})`;

interface HealthCheck {
  /** The keys it reads; `{role}` stands for any role (matched against the run's keys). */
  keys: readonly string[];
  run(series: HealthSeries, ended: boolean): HealthWarning | null;
}

const isOne = (v: number | null): boolean => v !== null && v >= 1 - 1e-9;
const isZero = (v: number | null): boolean => v !== null && Math.abs(v) <= 1e-12;
const ROLE_VALID = /^role\/([^/]+)\/valid_rate$/;

export const HEALTH_CHECKS = {
  'no-signal': {
    keys: ['groups/zero_std_frac', 'reward/std'],
    run(series, ended) {
      const groups = sustained(series['groups/zero_std_frac'] ?? [], isOne, ended);
      const std = groups ? null : sustained(series['reward/std'] ?? [], isZero, ended);
      if (!groups && !std) return null;
      return {
        check: 'no-signal',
        title: 'No learning signal',
        measured: groups
          ? `groups/zero_std_frac = 1 ${stepsWord(groups)}: every group's rewards were equal, so every advantage (and the loss and gradient) was 0`
          : `reward/std = 0 ${stepsWord(std!)}: every episode got the same reward, so every advantage was 0`,
        cause:
          'Usually a policy that never succeeds (or always does): a random-weight model gives every episode the same reward. ' +
          'Warm-start it (policies.init), use a pretrained model, or pick easier tasks or a larger group size.',
      };
    },
  },
  'all-invalid': {
    keys: ['role/{role}/valid_rate'],
    run(series, ended) {
      for (const [key, points] of Object.entries(series)) {
        const role = ROLE_VALID.exec(key)?.[1];
        if (!role) continue;
        const r = sustained(points, isZero, ended);
        if (!r) continue;
        return {
          check: 'all-invalid',
          title: 'Every output invalid',
          measured: `${key} = 0 ${stepsWord(r)}: none of the ${role}'s outputs could be parsed`,
          cause:
            "Usually the model does not produce the workflow's answer format: an untrained or random-weight model, a prompt template " +
            'the model was not tuned for, or rollout.maxNewTokens too small for the answer. Open the trace to see the outputs.',
        };
      }
      return null;
    },
  },
  'clip-saturated': {
    keys: ['clip/frac'],
    run(series, ended) {
      const r = sustained(series['clip/frac'] ?? [], (v) => v !== null && v >= CLIP_SATURATED, ended);
      if (!r) return null;
      return {
        check: 'clip-saturated',
        title: 'Clipping saturated',
        measured: `clip/frac >= ${CLIP_SATURATED} ${stepsWord(r)}: almost every training unit's term was clipped, so almost nothing moved the policy`,
        cause:
          'Usually the policy moves too far per update (a learning rate too high, too many epochs or mini-batches over one batch) ' +
          'or the behaviour log-probs disagree with the trained model (logp/behaviour_mismatch_max). Lower the learning rate or epochs.',
      };
    },
  },
  gradient: {
    keys: ['grad/norm', 'update/skipped'],
    run(series) {
      const bad = (series['grad/norm'] ?? []).filter((p) => p.value === null || !Number.isFinite(p.value));
      const skipped = (series['update/skipped'] ?? []).filter((p) => p.value !== null && p.value > 0);
      if (!bad.length && !skipped.length) return null;
      const parts: string[] = [];
      if (bad.length) parts.push(`grad/norm was not finite at ${bad.length} step${bad.length === 1 ? '' : 's'} (first: step ${bad[0].step})`);
      if (skipped.length) {
        const total = skipped.reduce((a, p) => a + (p.value ?? 0), 0);
        parts.push(
          `update/skipped > 0 at ${skipped.length} step${skipped.length === 1 ? '' : 's'} (first: step ${skipped[0].step}; ${total} mini-batches skipped)`,
        );
      }
      return {
        check: 'gradient',
        title: bad.length ? 'Gradient not finite' : 'Updates skipped',
        measured: `${parts.join('; ')}: those mini-batches changed nothing`,
        cause:
          'A non-finite gradient usually means a learning rate too high, a ratio that overflowed (log-probs far from the behaviour policy) ' +
          'or a numerically unstable model in float16; an empty mini-batch (no complete event with signal) is skipped too. Lower the learning rate, check the loss curve.',
      };
    },
  },
} satisfies Record<HealthCheckName, HealthCheck>;

export const HEALTH_CHECK_NAMES = Object.keys(HEALTH_CHECKS) as HealthCheckName[];

/** The keys the checks read, among a run's keys (each role's valid rate included). */
export function healthKeys(runKeys: readonly string[]): string[] {
  const fixed = HEALTH_CHECK_NAMES.flatMap((n) => HEALTH_CHECKS[n].keys).filter((k) => !k.includes('{'));
  return [...new Set([...fixed.filter((k) => runKeys.includes(k)), ...runKeys.filter((k) => ROLE_VALID.test(k))])];
}

/**
 * Every warning the series show, in registry order. `options.ended` (default true): the series
 * are the run's whole series; false while it trains (a sign must then hold NO_SIGNAL_STEPS steps).
 */
export function runHealth(series: HealthSeries, options: { ended?: boolean } = {}): HealthWarning[] {
  const ended = options.ended ?? true;
  return HEALTH_CHECK_NAMES.map((n) => (HEALTH_CHECKS[n] as HealthCheck).run(series, ended)).filter((w): w is HealthWarning => w !== null);
}

/** One line for a terminal: `warning: No learning signal: <measured>. <cause>`. */
export function healthLine(w: HealthWarning): string {
  return `warning: ${w.title}: ${w.measured}. ${w.cause}`;
}
