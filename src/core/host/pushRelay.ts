/**
 * Pushes: the LabService's subscribers (PushHub) and the relay that turns an engine's messages
 * (messages.ts) into pushes for them (LabPush, src/shared/api.ts), one entry per message type in
 * a typed registry.
 *
 * A step (or a step's evaluation, committed ahead of it) is pushed as its key metrics (the
 * message's) and then every metric point it wrote, read back from the store, which has them
 * committed before the message is sent. That read is one statement for all the step's keys
 * (LabStore.metricsAtStep: a primary-key seek per key), not one query per key.
 *
 * Not here: which engines run (runControl.ts), the transports that carry pushes (src/server,
 * src/main). Tested by test/core/host/pushRelay.test.ts, and end to end by
 * test/server/server.test.ts (a tiny run pushed over the socket) and test/e2e/lab.test.ts.
 */
import type { LabPush, SeriesPoint } from '../../shared/api';
import type { LabStore } from '../store';
import type { EngineMessage, EngineStatus } from './messages';
import { finiteOrNull, seriesPoint } from './runQueries';
import { metricStepKind, stepOfRecord } from '../../shared/stepConvention';

/** The subscribers; one failing subscriber does not keep a push from the others. */
export class PushHub {
  private readonly listeners = new Set<(push: LabPush) => void>();

  /** Every push from now on; returns a disposer. */
  subscribe(listener: (push: LabPush) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  push(p: LabPush): void {
    for (const l of [...this.listeners]) {
      try {
        l(p);
      } catch {
        // A subscriber's failure is its own; the others still get the push.
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}

/** Where one engine's messages go. */
export interface RelayTarget {
  readonly store: LabStore;
  readonly runId: number;
  push(p: LabPush): void;
  /** The engine reported a status (runControl keeps whether its run is paused). */
  onStatus(status: EngineStatus): void;
}

/**
 * The 'points' push of one step record: every metric point it wrote, read back in one statement,
 * each point's step in steps (updates done, src/shared/stepConvention.ts: a training key of
 * record s at s + 1, an evaluation at s), as the series API gives them. `final`: the eval-only
 * record, whose engine figures belong to no update and are left out. The push's own `step` is
 * the store record (as the progress push's).
 */
export function stepPointsPush(store: LabStore, runId: number, step: number, final = false): Extract<LabPush, { type: 'points' }> {
  const points: Record<string, SeriesPoint> = {};
  try {
    for (const [key, p] of Object.entries(store.metricsAtStep(runId, step))) {
      const kind = metricStepKind(key);
      if (final && kind === 'train') continue;
      points[key] = { ...seriesPoint(p), step: stepOfRecord(p.step, kind) };
    }
  } catch {
    // A read failing under a busy writer only delays the curve; the next fetch catches up.
  }
  return { type: 'points', runId, step, points };
}

type Relay = { [T in EngineMessage['type']]: (m: Extract<EngineMessage, { type: T }>, to: RelayTarget) => void };

const RELAY = {
  step: (m, to) => {
    const metrics: Record<string, number | null> = {};
    for (const [k, v] of Object.entries(m.metrics)) metrics[k] = finiteOrNull(v);
    to.push({ type: 'progress', runId: to.runId, step: m.step, totalSteps: m.totalSteps, final: m.final, wallMs: finiteOrNull(m.wallMs), metrics });
    to.push(stepPointsPush(to.store, to.runId, m.step, m.final));
  },
  // The step's evaluation, committed before the step: its points only (no progress, the step is not done).
  evaluation: (m, to) => to.push(stepPointsPush(to.store, to.runId, m.step)),
  status: (m, to) => {
    to.onStatus(m.status);
    to.push({ type: 'status', runId: to.runId, status: m.status, error: m.error ?? null });
  },
  log: (m, to) => to.push({ type: 'log', runId: to.runId, level: m.level, line: m.line }),
  indexProgress: ({ type, ...p }, to) => to.push({ type, runId: to.runId, ...p }),
  ready: (m, to) =>
    to.push({ type: 'log', runId: to.runId, level: 'info', line: `engine ready: backend ${m.backend.name}, ${readySteps(m.startStep, m.totalSteps)}` }),
} satisfies Relay;

/** The engine-ready log line's step range, in steps (updates done): `steps 1..3` for a 3-step run, `steps 6..8` resuming after 5. */
export function readySteps(startRecord: number, totalSteps: number): string {
  return startRecord >= totalSteps ? 'the final evaluation to go' : `steps ${startRecord + 1}..${totalSteps}`;
}

/** One engine message -> its pushes. */
export function relayEngineMessage(m: EngineMessage, to: RelayTarget): void {
  (RELAY[m.type] as (m: EngineMessage, to: RelayTarget) => void)(m, to);
}
