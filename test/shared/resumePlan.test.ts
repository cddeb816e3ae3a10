/** What Resume says it will redo, and which failures are config errors (no Resume offered). */
import { describe, expect, it } from 'vitest';
import { isConfigError, resumePlan } from '../../src/shared/resumePlan';

describe('resumePlan', () => {
  it('after a stop (checkpoint at the last committed step) nothing is redone', () => {
    expect(resumePlan(4, [4])).toEqual({
      fromStep: 5,
      checkpointStep: 4,
      redo: [],
      text: 'Resume continues at step 5 from the checkpoint after 5 updates (step 4); nothing committed is redone.',
    });
  });
  it('after a crash the steps past the latest checkpoint are named', () => {
    expect(resumePlan(6, [2, 9])).toMatchObject({ fromStep: 3, checkpointStep: 2, redo: [3, 4, 5, 6] });
    expect(resumePlan(3, [2]).text).toMatch(/step 3 \(1 step\) was committed after it and will be recomputed/);
  });
  it('without a checkpoint the run restarts at step 0', () => {
    expect(resumePlan(1, [])).toMatchObject({ fromStep: 0, checkpointStep: null, redo: [0, 1] });
    expect(resumePlan(1, []).text).toMatch(/restarts the run at step 0: it has no checkpoint, so steps 0-1 \(2 steps\) were committed/);
    expect(resumePlan(-1, []).text).toBe('Resume starts the run at step 0 (nothing is committed yet).');
  });
});

describe('isConfigError', () => {
  it('config boundaries are config errors; runtime failures are not', () => {
    expect(isConfigError('run config: field "policies.modelOverrides.nHeads": nHeads (3) must divide dModel (64)')).toBe(true);
    expect(isConfigError('model config: field "nHeads" = 3: nHeads (3) must divide dModel (64)')).toBe(true);
    expect(isConfigError('field "policies.init" = "/nonexistent/warmstart/math-tiny": no such checkpoint directory')).toBe(true);
    expect(isConfigError("ENOTDIR: not a directory, mkdir '/tmp/x/checkpoints/step-000001'")).toBe(false);
    expect(isConfigError('step 7: every update of 3 steps in a row was skipped (last: non-finite loss)')).toBe(false);
    expect(isConfigError(null)).toBe(false);
  });
});
