/**
 * LabContext: what the parts of the LabService share (labService.ts builds one and hands it to
 * runQueries.ts, runControl.ts, suiteControl.ts, runReports.ts): the lab's store, its database
 * path, the chart series cache, the push channel to the subscribers, and whether an engine of this
 * host runs a run now.
 *
 * Not here: any behaviour; the engines and the queue themselves (runControl.ts), the subscribers
 * (pushRelay.ts). Types only; checked by tsc and exercised by every LabService test.
 */
import type { LabPush } from '../../shared/api';
import type { LabStore } from '../store';
import type { MetricSeriesCache } from '../store/series';

export interface LabContext {
  readonly store: LabStore;
  /** The lab database file (run folders sit beside it, host/paths.ts). */
  readonly dbPath: string;
  /** Long series kept in memory between chart reads (checked against the store on each read). */
  readonly seriesCache: MetricSeriesCache;
  /** Sends one push to every subscriber. */
  push(p: LabPush): void;
  /** Whether an engine of this host is running the run now. */
  isActive(runId: number): boolean;
}
