/**
 * Health warnings (src/shared/runHealth.ts) over series a user would see: the random-weight run of
 * issue 30 (every group's rewards equal for every step) warns "no learning signal" with its cause;
 * a healthy run warns nothing; each other sign warns with what it measured.
 */
import { describe, expect, it } from 'vitest';
import { healthKeys, healthLine, runHealth } from '../../src/shared/runHealth';

const series = (values: (number | null)[], first = 1) => values.map((value, i) => ({ step: first + i, value }));

describe('runHealth', () => {
  it('a run whose groups all had equal rewards at every step warns no learning signal, with the cause', () => {
    const w = runHealth({ 'groups/zero_std_frac': series([1, 1, 1, 1, 1, 1]), 'grad/norm': series([0, 0, 0, 0, 0, 0]) });
    expect(w.map((x) => x.check)).toEqual(['no-signal']);
    expect(w[0].measured).toBe(
      "groups/zero_std_frac = 1 for 6 consecutive steps (1-6): every group's rewards were equal, so every advantage (and the loss and gradient) was 0",
    );
    expect(w[0].cause).toMatch(/random-weight model gives every episode the same reward.*Warm-start it/);
    expect(healthLine(w[0])).toMatch(/^warning: No learning signal: groups\/zero_std_frac = 1/);
  });
  it('a short run counts all its steps; a healthy run warns nothing', () => {
    expect(runHealth({ 'reward/std': series([0, 0]) }).map((x) => x.measured)).toEqual([
      'reward/std = 0 for 2 consecutive steps (1-2): every episode got the same reward, so every advantage was 0',
    ]);
    expect(
      runHealth({
        'groups/zero_std_frac': series([1, 1, 0.5, 1, 1, 0.2]),
        'reward/std': series([0.3, 0, 0.2, 0, 0.1, 0.4]),
        'role/solver/valid_rate': series([0, 0.5, 0.9, 1]),
        'clip/frac': series([0.99, 0.1, 0.98, 0.2]),
        'grad/norm': series([1.2, 0.8, 0.5]),
        'update/skipped': series([0, 0, 0]),
      }),
    ).toEqual([]);
  });
  it('every output invalid, clipping saturated and a non-finite gradient each warn with what was measured', () => {
    const w = runHealth({
      'role/verifier/valid_rate': series([0.2, 0, 0, 0]),
      'clip/frac': series([0.97, 1, 0.96]),
      'grad/norm': series([1, null, 2]),
      'update/skipped': series([0, 2, 0]),
    });
    expect(w.map((x) => x.check)).toEqual(['all-invalid', 'clip-saturated', 'gradient']);
    expect(w[0].measured).toBe("role/verifier/valid_rate = 0 for 3 consecutive steps (2-4): none of the verifier's outputs could be parsed");
    expect(w[1].measured).toMatch(/^clip\/frac >= 0\.95 for 3 consecutive steps \(1-3\)/);
    expect(w[2].title).toBe('Gradient not finite');
    expect(w[2].measured).toBe(
      'grad/norm was not finite at 1 step (first: step 2); update/skipped > 0 at 1 step (first: step 2; 2 mini-batches skipped): those mini-batches changed nothing',
    );
  });
  it('reads the fixed keys a run has and every role valid rate', () => {
    expect(healthKeys(['reward/mean', 'reward/std', 'role/solver/valid_rate', 'grad/norm', 'role/solver/reward_mean']).sort()).toEqual([
      'grad/norm',
      'reward/std',
      'role/solver/valid_rate',
    ]);
  });
});
