/**
 * The step convention (src/shared/stepConvention.ts) as the issue states it: a completed 30-step
 * run reads 30/30, a run stopped after 5 committed updates of 8 reads 5/8, a checkpoint of step
 * record 9 holds 10 updates, the final evaluation is named after the last update.
 */
import { describe, expect, it } from 'vitest';
import { checkpointLabel, checkpointUpdates, evaluationLabel, lastStepAfterPush, stepsText, updatesDone } from '../../src/shared/stepConvention';

describe('step convention', () => {
  it('a completed run (last record = the final evaluation, S) reads S/S', () => {
    expect(stepsText(30, 30)).toBe('30/30');
    expect(updatesDone(30, 30)).toBe(30);
  });

  it('a run stopped after 5 committed updates (last record 4) of 8 reads 5/8', () => {
    expect(stepsText(4, 8)).toBe('5/8');
  });

  it('a run with nothing committed reads 0/S', () => {
    expect(stepsText(-1, 8)).toBe('0/8');
  });

  it('the last training record (S - 1) already counts every update', () => {
    expect(stepsText(29, 30)).toBe('30/30');
  });

  it('a progress push moves the count forward at once (no lag), never back', () => {
    expect(updatesDone(lastStepAfterPush({ step: 0 }, -1), 8)).toBe(1);
    expect(lastStepAfterPush({ step: 2 }, 5)).toBe(5);
  });

  it('checkpoints are named by the updates they hold', () => {
    expect(checkpointUpdates(9)).toBe(10);
    expect(checkpointLabel(9)).toBe('after 10 updates (step 9)');
    expect(checkpointLabel(0)).toBe('after 1 update (step 0)');
  });

  it('evaluations: step s is after s updates; step S is the final one', () => {
    expect(evaluationLabel(0, 30)).toBe('after 0 updates');
    expect(evaluationLabel(10, 30)).toBe('after 10 updates');
    expect(evaluationLabel(30, 30)).toBe('final (after 30 updates)');
  });
});
