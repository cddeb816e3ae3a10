/** What Resume says it will redo, and which failures are config errors (no Resume offered). */
import { describe, expect, it } from 'vitest';
import { isConfigError, resumePlan } from '../../src/shared/resumePlan';

describe('resumePlan (in steps: updates done)', () => {
  it('after a stop (checkpoint at the last committed step) nothing is redone', () => {
    // Record 4 committed = 5 updates; its checkpoint holds 5 updates: step 5, and step 6 runs next.
    expect(resumePlan(4, [4])).toEqual({
      fromStep: 6,
      checkpointStep: 5,
      redo: [],
      text: 'Resume continues at step 6 from the checkpoint of step 5 (after 5 updates); nothing committed is redone.',
    });
    expect(resumePlan(0, [0]).text).toBe('Resume continues at step 2 from the checkpoint of step 1 (after 1 update); nothing committed is redone.');
  });
  it('after a crash the steps past the latest checkpoint are named', () => {
    // Records 0..6 committed (7 updates), checkpoint of record 2 (3 updates): steps 4-7 are redone.
    expect(resumePlan(6, [2, 9])).toMatchObject({ fromStep: 4, checkpointStep: 3, redo: [4, 5, 6, 7] });
    expect(resumePlan(3, [2]).text).toMatch(/step 4 \(1 step\) was committed after it and will be recomputed/);
  });
  it('without a checkpoint the run restarts at step 0', () => {
    expect(resumePlan(1, [])).toMatchObject({ fromStep: 1, checkpointStep: null, redo: [1, 2] });
    expect(resumePlan(1, []).text).toMatch(/restarts the run at step 1: it has no checkpoint, so steps 1-2 \(2 steps\) were committed/);
    expect(resumePlan(-1, []).text).toBe('Resume starts the run at step 1 (nothing is committed yet).');
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
