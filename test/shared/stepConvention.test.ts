/**
 * The step convention (src/shared/stepConvention.ts) as the issue states it: one number, the
 * updates done. A completed 30-step run reads 30/30, a run stopped after 5 committed updates of 8
 * reads 5/8; checkpoint 10 holds 10 updates (written by store record 9); a training metric of
 * update N is plotted at N, an evaluation after N updates at N, so both curves end at S; the
 * eval-only record's engine figures belong to no update.
 */
import { describe, expect, it } from 'vitest';
import {
  checkpointLabel,
  checkpointRecord,
  checkpointUpdates,
  evalOnlyRecord,
  evaluationLabel,
  lastStepAfterPush,
  metricStepKind,
  pickCheckpoint,
  recordRange,
  seriesInSteps,
  stepsText,
  updatesDone,
} from '../../src/shared/stepConvention';

describe('step convention', () => {
  it('a completed run (last record = the final evaluation, S) reads S/S', () => {
    expect(stepsText(30, 30)).toBe('30/30');
    expect(updatesDone(30, 30)).toBe(30);
  });
  it('a run stopped after 5 committed updates of 8 reads 5/8', () => {
    expect(stepsText(4, 8)).toBe('5/8');
  });
  it('a completed run a budget ended after 4 of 6 updates reads 4/6 (its last record, 4, is the final evaluation)', () => {
    expect(stepsText(4, 6, 'completed')).toBe('4/6');
    expect(stepsText(6, 6, 'completed')).toBe('6/6');
    expect(stepsText(4, 6, 'stopped')).toBe('5/6');
  });
  it('nothing committed reads 0/S', () => {
    expect(stepsText(-1, 8)).toBe('0/8');
  });
  it('the last training record S - 1 already reads S/S (the final evaluation adds no update)', () => {
    expect(stepsText(29, 30)).toBe('30/30');
  });
  it('a push of record 0 means one update committed', () => {
    expect(updatesDone(lastStepAfterPush({ step: 0 }, -1), 8)).toBe(1);
  });
  it('a checkpoint is named by the updates it holds, and that name finds it again', () => {
    expect(checkpointUpdates(9)).toBe(10);
    expect(checkpointRecord(10)).toBe(9);
    expect(checkpointLabel(9)).toBe('step 10 (after 10 updates)');
    expect(checkpointLabel(0)).toBe('step 1 (after 1 update)');
    const ckpts = [{ step: 2 }, { step: 5 }];
    expect(pickCheckpoint(ckpts, '6', 'run 1', '--checkpoint')).toBe(ckpts[1]);
    expect(pickCheckpoint(ckpts, undefined, 'run 1', '--checkpoint')).toBe(ckpts[1]);
    expect(() => pickCheckpoint(ckpts, '5', 'run 1', '--checkpoint')).toThrow('run 1 has no checkpoint at step 5 (--checkpoint); checkpoints at steps 3, 6');
    expect(() => pickCheckpoint([], undefined, 'run 1', '--step')).toThrow('run 1 has no checkpoints yet');
  });
  it('evaluations are named by the updates behind the policy; the last is the final one', () => {
    expect(evaluationLabel(0, 30)).toBe('after 0 updates');
    expect(evaluationLabel(10, 30)).toBe('after 10 updates');
    expect(evaluationLabel(30, 30)).toBe('final (after 30 updates)');
  });
  it('training metrics of record s are at x = s + 1, evaluations at x = s: a 3-step run ends both at 3', () => {
    expect(metricStepKind('reward/mean')).toBe('train');
    expect(metricStepKind('time/step')).toBe('train');
    expect(metricStepKind('eval/macro/avg')).toBe('eval');
    expect(metricStepKind('eval/arith-chain/pass')).toBe('eval');
    const records = [0, 1, 2, 3].map((step) => ({ step, value: step * 10, wallTime: step }));
    // Record 3 is the eval-only final record of a completed 3-step run.
    const final = evalOnlyRecord({ status: 'completed', lastStep: 3 });
    expect(final).toBe(3);
    expect(seriesInSteps('reward/mean', records.slice(0, 3), final).map((p) => p.step)).toEqual([1, 2, 3]);
    expect(seriesInSteps('time/step', records, final).map((p) => [p.step, p.value])).toEqual([
      [1, 0],
      [2, 10],
      [3, 20],
    ]);
    expect(seriesInSteps('eval/macro/avg', [records[0], records[3]], final).map((p) => p.step)).toEqual([0, 3]);
  });
  it('a stopped run has no eval-only record: every training point is kept', () => {
    expect(evalOnlyRecord({ status: 'stopped', lastStep: 4 })).toBeNull();
    const pts = [0, 1, 2, 3, 4].map((step) => ({ step, value: 1, wallTime: 0 }));
    expect(seriesInSteps('loss/total', pts, null).map((p) => p.step)).toEqual([1, 2, 3, 4, 5]);
  });
  it('a step range reads the records that hold those steps', () => {
    expect(recordRange('reward/mean', { fromStep: 2, toStep: 5 })).toEqual({ fromStep: 1, toStep: 4 });
    expect(recordRange('eval/macro/avg', { fromStep: 2, toStep: 5 })).toEqual({ fromStep: 2, toStep: 5 });
    expect(recordRange('reward/mean', {})).toEqual({});
  });
});
