/**
 * LabService: the LabApi implementation (src/shared/api.ts) over one lab database. Both transports
 * wrap one instance: `srpo-lab serve` (src/server) and the Electron main process (src/main), each
 * through the lab worker (labWorker.ts). `call(method, raw)` validates the raw input with the
 * contract's schema, so a transport only has to hand over what arrived; each handler is one line
 * that delegates to the file owning its concern:
 *
 * - runQueries.ts: runs, summaries, series, events, episodes (reads);
 * - runControl.ts: create, start, resume, pause, stop, delete; the engine limit, queue and leases;
 * - pushRelay.ts: the subscribers, and engine messages turned into pushes;
 * - configForm.ts: presets, the config form's fields, validation (in web mode under path roots,
 *   pathRoots.ts; data files hashed ahead off this thread, dataHashing.ts);
 * - suiteControl.ts: suites; runReports.ts: report export.
 *
 * Not here: transports, auth, the training loop (src/engine). Handlers return the store's domain
 * records unchanged (src/shared/records.ts); `call` turns each result into its wire form once
 * (src/shared/wire.ts: typed arrays as number arrays). Tested by test/server/*.test.ts and
 * test/e2e/lab.test.ts (real engines through NodeForkLauncher); the queue by
 * test/core/host/engineQueue.test.ts, the lease refusals by test/engine/leases.test.ts.
 */
import { LabApiError, parseApiInput, type ApiMethod, type ApiOutputs, type ApiParsedInput, type LabApiHandlers, type LabPush } from '../../shared/api';
import { toWire } from '../../shared/wire';
import { LabStore } from '../store';
import { MetricSeriesCache } from '../store/series';
import { suiteSummaries } from '../suites/tableData';
import { cancelBackgroundHashes } from '../data/datasetTasks';
import { configFields, prepareRunConfig, prepareSuiteSpec, presetInfos, validateConfigOffThread, type ConfigCheckOptions } from './configForm';
import { engineLimit } from './engineLimit';
import type { LabContext } from './labContext';
import type { EngineLauncher } from './launcher';
import { PathRoots } from './pathRoots';
import { PushHub } from './pushRelay';
import { adoptLegacyRunFolders } from './runFolders';
import { RunControl } from './runControl';
import { episodeOrThrow, eventWithTokenText, listEvents, listRuns, metricSeries, queuedRunIds, runDetail, runOrThrow } from './runQueries';
import { exportReport, type PdfPrinter } from './runReports';
import { createSuite, startSuite, suiteOrThrow } from './suiteControl';

export { configFields } from './configForm';

export interface LabServiceOptions {
  /** The lab database (created and migrated if missing; opened read-only where the file or its folder is). */
  dbPath: string;
  launcher: EngineLauncher;
  /** Prints an HTML report to PDF (web mode: headless Chromium; desktop: printToPDF). Absent: pdf is 'unsupported'. */
  printPdf?: PdfPrinter;
  /** Engines run at once; more starts are queued. Default: SRPO_LAB_MAX_ENGINES, else one per GPU (one without). */
  maxEngines?: number;
  /**
   * Web mode (`srpo-lab serve --allow DIR`): the folders every path a client names must lie in
   * (pathRoots.ts). Absent: any path (the desktop app, the CLI, tests).
   */
  pathRoots?: readonly string[];
  /** How long validateConfig waits for data files' hashes before answering pending (default VALIDATE_HASH_WAIT_MS). */
  hashWaitMs?: number;
}

export class LabService {
  readonly store: LabStore;
  /** Engines this service runs at once. */
  readonly maxEngines: number;
  readonly handlers: LabApiHandlers;
  private readonly pushes = new PushHub();
  private readonly runs: RunControl;

  constructor(options: LabServiceOptions) {
    this.maxEngines = engineLimit(options.maxEngines);
    // Read-only where the file or its folder is (the UI browses, starting or deleting is refused).
    const store = (this.store = LabStore.open(options.dbPath, { access: 'createOrRead' }));
    const folders = adoptLegacyRunFolders(store, options.dbPath);
    if (folders.message) console.log(`srpo-lab: ${folders.message}`);
    const ctx: LabContext = {
      store,
      dbPath: options.dbPath,
      seriesCache: new MetricSeriesCache(store.db),
      push: (p) => this.pushes.push(p),
      isActive: (runId) => this.runs.isActive(runId),
    };
    const runs = (this.runs = new RunControl(ctx, options.launcher, this.maxEngines));
    const roots = options.pathRoots ? new PathRoots(options.pathRoots) : null;
    const checks: ConfigCheckOptions = { roots, hashWaitMs: options.hashWaitMs };
    this.handlers = {
      listRuns: () => listRuns(ctx),
      getRun: ({ runId }) => runDetail(ctx, runOrThrow(store, runId)),
      deleteRun: ({ runId }) => runs.delete(runId),
      presets: () => presetInfos(),
      configSchema: () => configFields(),
      validateConfig: ({ preset, config }) => validateConfigOffThread(preset ?? null, config, checks),
      createRun: async ({ preset, config, start }) => (
        await prepareRunConfig(preset ?? null, config, { roots }),
        runs.create(preset ?? null, config, start ?? false)
      ),
      startRun: ({ runId }) => (runs.launch(runId, 'start'), { ok: true as const }),
      resumeRun: ({ runId, force }) => runs.resume(runId, force ?? false),
      pauseRun: ({ runId }) => runs.control(runId, 'pause'),
      stopRun: ({ runId }) => runs.control(runId, 'stop'),
      metricKeys: ({ runId }) => (runOrThrow(store, runId), store.metricKeys(runId)),
      metricSeries: (input) => metricSeries(ctx, input),
      evaluations: ({ runId }) => (runOrThrow(store, runId), store.evaluations(runId)),
      listEvents: (input) => listEvents(store, input),
      getEvent: ({ eventId }) => eventWithTokenText(store, eventId),
      getEpisode: ({ episodeId }) => episodeOrThrow(store, episodeId),
      exportReport: (input) => exportReport(ctx, input, options.printPdf),
      listSuites: () => suiteSummaries(store, queuedRunIds(store)),
      getSuite: ({ suiteId, baseline }) => suiteOrThrow(ctx, suiteId, baseline),
      createSuite: async ({ spec, start }) => (await prepareSuiteSpec(spec, { roots }), createSuite(ctx, runs, spec, start ?? false)),
      startSuite: ({ suiteId }) => startSuite(ctx, runs, suiteId),
    };
  }

  /** Validates `raw` against the method's schema and runs it. Throws LabApiError. */
  async call<M extends ApiMethod>(method: M, raw: unknown): Promise<ApiOutputs[M]>;
  async call(method: string, raw: unknown): Promise<unknown>;
  async call(method: string, raw: unknown): Promise<unknown> {
    const input = parseApiInput(method, raw) as ApiParsedInput<ApiMethod>;
    const handler = this.handlers[method as ApiMethod] as (i: unknown) => unknown;
    try {
      return toWire(await handler(input));
    } catch (err) {
      if (err instanceof LabApiError) throw err;
      throw new LabApiError('internal', (err as Error).message ?? String(err));
    }
  }

  /** Every push from now on; returns a disposer. */
  subscribe(listener: (push: LabPush) => void): () => void {
    return this.pushes.subscribe(listener);
  }

  /** Ids of the runs whose engines this service is running. */
  activeRuns(): number[] {
    return this.runs.activeRuns();
  }

  /** Ids of the runs waiting in this service's queue, in order. */
  queuedRuns(): number[] {
    return this.runs.queuedRuns();
  }

  /**
   * Drops its queue (the runs go back to their stored status), stops every engine it started (waiting
   * up to `timeoutMs` each, then kills) and closes the store.
   */
  async close(timeoutMs = 10_000): Promise<void> {
    cancelBackgroundHashes();
    await this.runs.close(timeoutMs);
    this.pushes.clear();
    this.store.close();
  }
}
