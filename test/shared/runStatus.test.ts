/**
 * One rule for the status a run shows (src/shared/records.ts shownStatus), used by the runs list
 * and the suite tables alike, and the one list of final statuses.
 */
import { describe, expect, it } from 'vitest';
import { FINAL_STATUSES, isFinalStatus, RUN_STATUSES, shownStatus } from '../../src/shared/records';

describe('run status', () => {
  it('a queued lease shows as queued whatever the stored status (a resumed run waiting too), unless an engine runs it', () => {
    expect(shownStatus('created', true)).toBe('queued');
    expect(shownStatus('interrupted', true)).toBe('queued');
    expect(shownStatus('stopped', true, false)).toBe('queued');
    expect(shownStatus('running', true, true)).toBe('running');
    expect(shownStatus('interrupted', false)).toBe('interrupted');
  });

  it('final statuses: completed, stopped, failed, and nothing else', () => {
    expect([...FINAL_STATUSES]).toEqual(['completed', 'stopped', 'failed']);
    expect(RUN_STATUSES.filter(isFinalStatus)).toEqual(['completed', 'stopped', 'failed']);
  });
});
