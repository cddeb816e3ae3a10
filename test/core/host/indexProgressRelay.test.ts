/**
 * A corpus index build's progress on its way to the UI: the engine's `indexProgress` message is
 * validated at the host (messages.ts: a malformed one is an error naming the field) and relayed
 * (pushRelay.ts) as an `indexProgress` push of the run, with every figure the dashboard's bar
 * draws.
 */
import { describe, expect, it } from 'vitest';
import { parseEngineMessage } from '../../../src/core/host/messages';
import { relayEngineMessage, type RelayTarget } from '../../../src/core/host/pushRelay';
import type { LabStore } from '../../../src/core/store';
import type { LabPush } from '../../../src/shared/api';

describe('indexProgress: engine message -> push', () => {
  it('is relayed as a push of the run with its figures', () => {
    const pushes: LabPush[] = [];
    const statuses: string[] = [];
    const target: RelayTarget = { store: null as unknown as LabStore, runId: 7, push: (p) => pushes.push(p), onStatus: (s) => statuses.push(s) };
    const message = parseEngineMessage({
      type: 'indexProgress',
      passages: 100_000,
      bytesRead: 76_000_000,
      totalBytes: 152_000_000,
      elapsedMs: 4000,
      done: false,
    });
    relayEngineMessage(message, target);
    relayEngineMessage(
      parseEngineMessage({ type: 'indexProgress', passages: 200_000, bytesRead: 152_000_000, totalBytes: 152_000_000, elapsedMs: 8000, done: true }),
      target,
    );
    expect(pushes).toEqual([
      { type: 'indexProgress', runId: 7, passages: 100_000, bytesRead: 76_000_000, totalBytes: 152_000_000, elapsedMs: 4000, done: false },
      { type: 'indexProgress', runId: 7, passages: 200_000, bytesRead: 152_000_000, totalBytes: 152_000_000, elapsedMs: 8000, done: true },
    ]);
    expect(statuses).toEqual([]); // not a status change
  });

  it('a malformed message is an error naming the field', () => {
    expect(() => parseEngineMessage({ type: 'indexProgress', passages: -1, bytesRead: 0, totalBytes: 10, elapsedMs: 1, done: false })).toThrow(/passages/);
    expect(() => parseEngineMessage({ type: 'indexProgress', passages: 1, bytesRead: 0, totalBytes: 10, elapsedMs: 1 })).toThrow(/done/);
  });
});
