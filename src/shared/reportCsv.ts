/**
 * The CSV exports of runs: metrics (run,step,key,value,wall_time) and the training trace's events,
 * one header each, shared by the UI's downloads, the API's exportReport and `srpo-lab export`.
 * `step` is updates done, as on the charts (src/shared/stepConvention.ts): a training metric or
 * event of update N at N, an evaluation after N updates at N.
 * Pure, browser-safe. Tested by test/server/server.test.ts (content) and test/e2e/lab.test.ts.
 */
import type { EventSummary } from './records';
import { csvLines } from './reportText';

/** Metrics CSV: run,step,key,value,wall_time (null values as NaN). */
export function metricsCsv(rows: { runId: number; key: string; step: number; value: number | null; wallTime: number }[]): string {
  return csvLines(
    ['run', 'step', 'key', 'value', 'wall_time'],
    rows.map((r) => [r.runId, r.step, r.key, r.value ?? NaN, r.wallTime]),
  );
}

export const EVENT_CSV_HEAD = [
  'run',
  'step',
  'event_id',
  'episode_id',
  'key',
  'seq',
  'kind',
  'state',
  'group',
  'k',
  'members',
  'invalid_members',
  'complete',
  'drop_reason',
  'reward',
  'advantage',
  'log_ratio',
  'ratio',
  'clipped',
];

export function eventsCsv(events: EventSummary[]): string {
  return csvLines(
    EVENT_CSV_HEAD,
    events.map((e) => [
      e.runId,
      e.step,
      e.id,
      e.episodeId,
      e.key,
      e.seq,
      e.kind,
      e.stateId,
      e.group,
      e.expectedK,
      e.memberCount,
      e.invalidMembers,
      e.complete,
      e.dropReason,
      e.reward,
      e.advantage,
      e.logRatio,
      e.ratio,
      e.clipped,
    ]),
  );
}
