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
import { LabStoreError } from './errors';
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

  /** Opens the database at `path` as `options.access` allows (default: creating and migrating); ':memory:' allowed. */
  static open(path: string, options?: OpenOptions): LabStore {
    return new LabStore(openLabDb(path, options));
  }

  close(): void {
    this.db.close();
  }

  /** Whether the connection is read-only (a read-only file or folder, or a read-only open): every write is refused. */
  get readonly(): boolean {
    return this.db.readonly;
  }

  /**
   * Runs one repository call: a write on a read-only connection is refused with a LabStoreError
   * saying why, and any error that does not name the database file gets the file appended, so
   * a message read far from here (an engine's log, an API error) still says which lab it was.
   */
  private call<T>(what: string, write: boolean, fn: () => T): T {
    if (write && this.db.readonly) {
      throw new LabStoreError('read_only', `${what}: ${this.db.path} is open readonly (the file or its folder is read-only); nothing was written`);
    }
    try {
      return fn();
    } catch (e) {
      if (e instanceof Error && !e.message.includes(this.db.path)) e.message = `${e.message} (${this.db.path})`;
      throw e;
    }
  }

  // runs
  createRun(run: NewRunRecord): number {
    return this.call('createRun', true, () => runs.createRun(this.db, run));
  }
  getRun(runId: number): RunRecord | null {
    return this.call('getRun', false, () => runs.getRun(this.db, runId));
  }
  listRuns(): RunRecord[] {
    return this.call('listRuns', false, () => runs.listRuns(this.db));
  }
  updateRun(runId: number, patch: RunPatch): void {
    this.call('updateRun', true, () => runs.updateRun(this.db, runId, patch));
  }
  deleteRun(runId: number): boolean {
    return this.call('deleteRun', true, () => runs.deleteRun(this.db, runId));
  }
  markInterrupted(runId: number, reason: string): boolean {
    return this.call('markInterrupted', true, () => runs.markInterrupted(this.db, runId, reason));
  }
  relocateRunFiles(runId: number, fromDir: string, toDir: string, move?: () => void): number {
    return this.call('relocateRunFiles', true, () => runs.relocateRunFiles(this.db, runId, fromDir, toDir, move));
  }

  // steps
  writeStep(runId: number, record: StepRecord): void {
    this.call('writeStep', true, () => steps.writeStep(this.db, runId, record));
  }
  writeEvaluation(runId: number, record: Parameters<typeof steps.writeEvaluation>[2]): void {
    this.call('writeEvaluation', true, () => steps.writeEvaluation(this.db, runId, record));
  }
  truncateAfter(runId: number, step: number): number {
    return this.call('truncateAfter', true, () => steps.truncateAfter(this.db, runId, step));
  }
  committedSteps(runId: number): number[] {
    return this.call('committedSteps', false, () => steps.committedSteps(this.db, runId));
  }
  addCheckpoint(runId: number, step: number, path: string): void {
    this.call('addCheckpoint', true, () => steps.addCheckpoint(this.db, runId, step, path));
  }

  // metrics
  metricKeys(runId: number): string[] {
    return this.call('metricKeys', false, () => series.metricKeys(this.db, runId));
  }
  metricSeries(runId: number, key: string, options?: MetricSeriesOptions): MetricPoint[] {
    return this.call('metricSeries', false, () => series.metricSeries(this.db, runId, key, options));
  }
  metricsAtStep(runId: number, step: number): Record<string, MetricPoint> {
    return this.call('metricsAtStep', false, () => series.metricsAtStep(this.db, runId, step));
  }
  latestMetrics(runId: number): Record<string, MetricPoint> {
    return this.call('latestMetrics', false, () => series.latestMetrics(this.db, runId));
  }

  // traces
  listEvents(runId: number, filter: EventFilter, page: EventPageRequest): EventPage {
    return this.call('listEvents', false, () => traces.listEvents(this.db, runId, filter, page));
  }
  countEvents(runId: number, filter: EventFilter = {}): number {
    return this.call('countEvents', false, () => traces.countEvents(this.db, runId, filter));
  }
  /** An event's split, by which the API maps its step record to a step (src/shared/stepConvention.ts). */
  eventSplit(eventId: number): 'train' | 'eval' | null {
    return this.call('eventSplit', false, () => traces.eventSplit(this.db, eventId));
  }
  getEvent(eventId: number): EventDetail | null {
    return this.call('getEvent', false, () => traces.getEvent(this.db, eventId));
  }
  getEpisode(episodeId: number, options?: traces.EpisodeReadOptions): EpisodeDetail | null {
    return this.call('getEpisode', false, () => traces.getEpisode(this.db, episodeId, options));
  }

  // evaluations and checkpoints
  evaluations(runId: number): StoredEvaluation[] {
    return this.call('evaluations', false, () => results.evaluations(this.db, runId));
  }
  checkpoints(runId: number): CheckpointInfo[] {
    return this.call('checkpoints', false, () => results.checkpoints(this.db, runId));
  }
  latestCheckpoint(runId: number): CheckpointInfo | null {
    return this.call('latestCheckpoint', false, () => results.latestCheckpoint(this.db, runId));
  }
}
