/**
 * LabStore: one connection to a lab database and every repository call on it, as methods. A thin
 * facade over runs.ts, steps.ts, series.ts, traces.ts and results.ts (which hold the SQL); it adds
 * nothing but the connection. One LabStore per process and database: the engine owns the
 * writable one for its run, the host opens its own (read-only where it only reads).
 * better-sqlite3 is synchronous, so every call blocks its thread for its duration; keep it off
 * the Electron main thread (STYLE.md point 13).
 *
 * Tests: everything under test/core/store/.
 */
import { openLabDb, type LabDb, type OpenOptions } from './db';
import type {
  CheckpointInfo,
  EpisodeDetail,
  EventDetail,
  EventFilter,
  EventPage,
  EventPageRequest,
  MetricPoint,
  MetricSeriesOptions,
  NewRunRecord,
  RunPatch,
  RunRecord,
  StepRecord,
  StoredEvaluation,
} from './records';
import * as results from './results';
import * as runs from './runs';
import * as series from './series';
import * as steps from './steps';
import * as traces from './traces';

export class LabStore {
  constructor(readonly db: LabDb) {}

  /** Opens (creating and migrating unless read-only) the database at `path`; ':memory:' allowed. */
  static open(path: string, options?: OpenOptions): LabStore {
    return new LabStore(openLabDb(path, options));
  }

  close(): void {
    this.db.close();
  }

  // runs
  createRun(run: NewRunRecord): number {
    return runs.createRun(this.db, run);
  }
  getRun(runId: number): RunRecord | null {
    return runs.getRun(this.db, runId);
  }
  listRuns(): RunRecord[] {
    return runs.listRuns(this.db);
  }
  updateRun(runId: number, patch: RunPatch): void {
    runs.updateRun(this.db, runId, patch);
  }
  deleteRun(runId: number): boolean {
    return runs.deleteRun(this.db, runId);
  }
  markInterrupted(runId: number, reason: string): boolean {
    return runs.markInterrupted(this.db, runId, reason);
  }

  // steps
  writeStep(runId: number, record: StepRecord): void {
    steps.writeStep(this.db, runId, record);
  }
  truncateAfter(runId: number, step: number): number {
    return steps.truncateAfter(this.db, runId, step);
  }
  committedSteps(runId: number): number[] {
    return steps.committedSteps(this.db, runId);
  }
  addCheckpoint(runId: number, step: number, path: string): void {
    steps.addCheckpoint(this.db, runId, step, path);
  }

  // metrics
  metricKeys(runId: number): string[] {
    return series.metricKeys(this.db, runId);
  }
  metricSeries(runId: number, key: string, options?: MetricSeriesOptions): MetricPoint[] {
    return series.metricSeries(this.db, runId, key, options);
  }
  latestMetrics(runId: number): Record<string, MetricPoint> {
    return series.latestMetrics(this.db, runId);
  }

  // traces
  listEvents(runId: number, filter: EventFilter, page: EventPageRequest): EventPage {
    return traces.listEvents(this.db, runId, filter, page);
  }
  countEvents(runId: number, filter: EventFilter = {}): number {
    return traces.countEvents(this.db, runId, filter);
  }
  getEvent(eventId: number): EventDetail | null {
    return traces.getEvent(this.db, eventId);
  }
  getEpisode(episodeId: number, options?: traces.EpisodeReadOptions): EpisodeDetail | null {
    return traces.getEpisode(this.db, episodeId, options);
  }

  // evaluations and checkpoints
  evaluations(runId: number): StoredEvaluation[] {
    return results.evaluations(this.db, runId);
  }
  checkpoints(runId: number): CheckpointInfo[] {
    return results.checkpoints(this.db, runId);
  }
  latestCheckpoint(runId: number): CheckpointInfo | null {
    return results.latestCheckpoint(this.db, runId);
  }
}
