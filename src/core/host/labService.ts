/**
 * LabService: the LabApi implementation (src/shared/api.ts) over one lab database. It reads the
 * store, creates runs from presets and configs, owns the engines it launches (host/runs.ts,
 * through the EngineLauncher it is given) and turns their messages into pushes for its
 * subscribers. Both transports wrap one instance: `srpo-lab serve` (src/server) and the Electron
 * main process (src/main). `call(method, raw)` validates the raw input with the contract's
 * schema, so a transport only has to hand over what arrived.
 *
 * Engines and leases: it runs at most `maxEngines` engines at once (engineLimit.ts); a start or
 * resume beyond that waits in a FIFO queue, holding the run's lease as `queued` (so no other
 * host can take the run meanwhile; status `queued` in listRuns/getRun and pushes) and starts
 * when a slot frees. Starting, resuming and deleting a run whose lease another process holds
 * alive (an engine of the CLI, another `serve`) is refused with a conflict naming the holder.
 *
 * Not here: transports, auth, the training loop (src/engine). Handlers return the store's domain
 * records unchanged (src/shared/records.ts); `call` turns each result into its wire form once
 * (src/shared/wire.ts: typed arrays as number arrays). Tested by test/server/*.test.ts and
 * test/e2e/lab.test.ts (real engines through NodeForkLauncher); the queue by test/core/host/engineQueue.test.ts, the
 * lease refusals by test/engine/leases.test.ts.
 */
import { rmSync } from 'node:fs';
import { z } from 'zod';
import {
  LabApiError,
  parseApiInput,
  type ApiMethod,
  type ApiOutputs,
  type ApiParsedInput,
  type ConfigField,
  type ConfigValidation,
  type LabApiHandlers,
  type LabPush,
  type PresetInfo,
  type ReportFile,
  type RunDetail,
  type RunSummary,
  type SeriesMap,
  type SeriesPoint,
} from '../../shared/api';
import { configDiff } from '../../shared/analysis';
import { toWire } from '../../shared/wire';
import { eventsCsv, htmlReport, markdownReport, metricsCsv, REPORT_CHART_KEYS, suiteTableCsv, type ReportData } from '../../shared/report';
import { buildSuiteTable, type SuiteDetail } from '../../shared/suites';
import { createSuite as storeSuite } from '../store/suites';
import { materialiseSuite } from '../suites/runner';
import { expandSuite, resolveSuiteSpec } from '../suites/spec';
import { suiteDetail, suiteSummaries } from '../suites/tableData';
import { findForbiddenKey, forbiddenKeyMessage } from '../../shared/inputGuards';
import { crossFieldProblems, giveWayToModelFolder, mergeConfig, PRESET_NAMES, PRESETS, presetConfig, presetInput, presetNeedsModelFolder, resolveRunConfig, runConfigSchema, type RunConfig } from '../config';
import { schemaProblems } from '../util/schemaError';
import { assertRunDataUnchanged } from '../data/datasetTasks';
import { CHARACTERS, SPECIAL_TOKENS } from '../models/tokenizer';
import { LabStore, type EventSummary, type MetricPoint, type RunRecord, type StoredMember, type TokensWithText } from '../store';
import { MetricSeriesCache } from '../store/series';
import type { EngineLauncher, EngineMode } from './launcher';
import type { EngineMessage } from './messages';
import { acquireLease, assertNoLiveLease, heartbeatLease, HEARTBEAT_EVERY_MS, LeaseHeldError, leaseHolder, liveLeases, releaseLease } from '../store/leases';
import { engineLimit } from './engineLimit';
import { runDirFor } from './paths';
import { adoptLegacyRunFolders } from './runFolders';
import { checkRunnable, createRun, launchRun, type ActiveRun } from './runs';

export interface LabServiceOptions {
  /** The lab database (created and migrated if missing; opened read-only where the file or its folder is). */
  dbPath: string;
  launcher: EngineLauncher;
  /** Prints an HTML report to PDF (web mode: headless Chromium; desktop: printToPDF). Absent: pdf is 'unsupported'. */
  printPdf?: (html: string) => Promise<Uint8Array>;
  /** Engines run at once; more starts are queued. Default: SRPO_LAB_MAX_ENGINES, else one per GPU (one without). */
  maxEngines?: number;
}

/** A start or resume waiting for an engine slot. */
interface QueuedLaunch {
  runId: number;
  mode: EngineMode;
  force: boolean;
}

const TOKEN_TEXT: readonly string[] = [...SPECIAL_TOKENS, ...CHARACTERS];
const num = (v: number): number | null => (Number.isFinite(v) ? v : null);
const point = (p: MetricPoint): SeriesPoint => ({ step: p.step, value: num(p.value), wallTime: p.wallTime });

export class LabService {
  readonly store: LabStore;
  /** Long series kept in memory between chart reads (checked against the store on each read). */
  private readonly seriesCache: MetricSeriesCache;
  private readonly active = new Map<number, ActiveRun & { paused: boolean }>();
  private readonly listeners = new Set<(push: LabPush) => void>();
  /** This service's lease identity (its queued runs, and the engines it launches until they take over). */
  private readonly holder = leaseHolder();
  private readonly queue: QueuedLaunch[] = [];
  private queueHeartbeat: NodeJS.Timeout | null = null;
  /** Engines this service runs at once. */
  readonly maxEngines: number;
  readonly handlers: LabApiHandlers;

  constructor(private readonly options: LabServiceOptions) {
    this.maxEngines = engineLimit(options.maxEngines);
    // Read-only where the file or its folder is (the UI browses, starting or deleting is refused).
    this.store = LabStore.open(options.dbPath, { access: 'createOrRead' });
    const folders = adoptLegacyRunFolders(this.store, options.dbPath);
    if (folders.message) console.log(`srpo-lab: ${folders.message}`);
    this.seriesCache = new MetricSeriesCache(this.store.db);
    this.handlers = {
      listRuns: () => {
        const queued = this.queuedRunIds();
        return this.store.listRuns().map((r) => this.summary(r, queued));
      },
      getRun: ({ runId }) => this.detail(this.runOrThrow(runId)),
      deleteRun: ({ runId }) => this.deleteRun(runId),
      presets: () => PRESET_NAMES.map((name): PresetInfo => {
        const p = PRESETS[name] as { description: string; base?: string };
        return {
          name,
          description: p.description,
          base: p.base ?? null,
          input: presetInput(name),
          config: presetConfig(name) as unknown as Record<string, unknown>,
        };
      }),
      configSchema: () => configFields(),
      validateConfig: ({ preset, config }) => this.validate(preset ?? null, config),
      createRun: ({ preset, config, start }) => this.createRun(preset ?? null, config, start ?? false),
      startRun: ({ runId }) => (this.launch(runId, 'start'), { ok: true as const }),
      resumeRun: ({ runId, force }) => this.resumeRun(runId, force ?? false),
      pauseRun: ({ runId }) => this.control(runId, 'pause'),
      stopRun: ({ runId }) => this.control(runId, 'stop'),
      metricKeys: ({ runId }) => (this.runOrThrow(runId), this.store.metricKeys(runId)),
      metricSeries: ({ runId, keys, fromStep, toStep, maxPoints }) => {
        this.runOrThrow(runId);
        const out: SeriesMap = {};
        for (const k of keys) out[k] = this.seriesCache.series(runId, k, { fromStep, toStep, maxPoints }).map(point);
        return out;
      },
      evaluations: ({ runId }) => (this.runOrThrow(runId), this.store.evaluations(runId)),
      listEvents: ({ runId, filter, limit, after }) => {
        this.runOrThrow(runId);
        return this.store.listEvents(runId, filter ?? {}, { limit, after: after ?? null });
      },
      getEvent: ({ eventId }) => {
        const e = this.store.getEvent(eventId);
        if (!e) throw new LabApiError('not_found', `no event with id ${eventId}`);
        return { ...e, members: e.members.map(withTokenText) };
      },
      getEpisode: ({ episodeId }) => {
        const ep = this.store.getEpisode(episodeId, { members: false });
        if (!ep) throw new LabApiError('not_found', `no episode with id ${episodeId}`);
        return ep;
      },
      exportReport: ({ runIds, suiteId, baseline, format }) => this.exportReport(runIds ?? [], format, suiteId, baseline),
      listSuites: () => suiteSummaries(this.store, this.queuedRunIds()),
      getSuite: ({ suiteId, baseline }) => this.suiteOrThrow(suiteId, baseline),
      createSuite: ({ spec, start }) => this.createSuite(spec, start ?? false),
      startSuite: ({ suiteId }) => this.startSuite(suiteId),
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
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Ids of the runs whose engines this service is running. */
  activeRuns(): number[] {
    return [...this.active.keys()];
  }

  /** Ids of the runs waiting in this service's queue, in order. */
  queuedRuns(): number[] {
    return this.queue.map((q) => q.runId);
  }

  /**
   * Drops its queue (the runs go back to their stored status), stops every engine it started (waiting
   * up to `timeoutMs` each, then kills) and closes the store.
   */
  async close(timeoutMs = 10_000): Promise<void> {
    for (const q of this.queue.splice(0)) releaseLease(this.store.db, q.runId, this.holder);
    this.syncQueueHeartbeat();
    await Promise.all(
      [...this.active.values()].map(async (a) => {
        a.stop();
        const timer = setTimeout(() => a.engine.kill('SIGKILL'), timeoutMs);
        await a.done;
        clearTimeout(timer);
      }),
    );
    this.listeners.clear();
    this.store.close();
  }

  private push(p: LabPush): void {
    for (const l of [...this.listeners]) {
      try {
        l(p);
      } catch {
        // A subscriber's failure is its own; the others still get the push.
      }
    }
  }

  private runOrThrow(runId: number): RunRecord {
    const run = this.store.getRun(runId);
    if (!run) throw new LabApiError('not_found', `no run with id ${runId}`);
    return run;
  }

  /** Runs with a live `queued` lease: this service's queue and any other host's. */
  private queuedRunIds(): Set<number> {
    return new Set(liveLeases(this.store.db).filter((l) => l.kind === 'queued').map((l) => l.runId));
  }

  private summary(r: RunRecord, queued: Set<number> = this.queuedRunIds()): RunSummary {
    const config = r.config as Partial<RunConfig>;
    const evals = this.store.metricSeries(r.id, 'eval/macro/avg');
    let best: RunSummary['bestEval'] = null;
    for (const p of evals) if (Number.isFinite(p.value) && (!best || p.value > best.value)) best = { step: p.step, value: p.value };
    return {
      id: r.id,
      name: r.name,
      preset: r.preset,
      status: queued.has(r.id) && !this.active.has(r.id) ? 'queued' : r.status,
      workflow: r.workflow,
      objective: r.algorithm,
      backend: r.backend,
      seed: r.seed,
      steps: config.steps ?? 0,
      lastStep: r.lastStep,
      createdAt: r.createdAt,
      startedAt: r.startedAt,
      endedAt: r.endedAt,
      error: r.error,
      bestEval: best,
      active: this.active.has(r.id),
    };
  }

  private detail(r: RunRecord): RunDetail {
    return { ...this.summary(r), config: r.config as Record<string, unknown>, checkpoints: this.store.checkpoints(r.id) };
  }

  private deleteRun(runId: number): { deleted: boolean } {
    this.runOrThrow(runId);
    if (this.active.has(runId)) throw new LabApiError('conflict', `run ${runId} is running; stop it before deleting it`);
    this.dequeue(runId);
    try {
      assertNoLiveLease(this.store.db, runId, this.holder);
    } catch (err) {
      if (err instanceof LeaseHeldError) throw new LabApiError('conflict', `${err.message}; stop it before deleting it`);
      throw err;
    }
    const deleted = this.store.deleteRun(runId);
    this.seriesCache.clear(runId);
    try {
      rmSync(runDirFor(this.options.dbPath, runId), { recursive: true, force: true });
    } catch {
      // Checkpoint files left behind do not matter to the database.
    }
    this.push({ type: 'runs' });
    return { deleted };
  }

  /** The config a request asks for: preset input, then the partial config over it. */
  private mergedInput(preset: string | null, config: Record<string, unknown>): Record<string, unknown> {
    if (preset !== null && !(PRESET_NAMES as readonly string[]).includes(preset)) {
      throw new LabApiError('invalid_input', `unknown preset "${preset}"; valid: ${PRESET_NAMES.join(', ')}`, [{ path: 'preset', message: `unknown preset; valid: ${PRESET_NAMES.join(', ')}` }]);
    }
    // Refused by name (mergeConfig would throw a plain error, answered as 'internal').
    const hit = findForbiddenKey(config);
    if (hit) throw new LabApiError('invalid_input', forbiddenKeyMessage(hit.key, `config at "${hit.path}"`), [{ path: hit.path, message: `the key "${hit.key}" is not allowed` }]);
    return preset ? mergeConfig(presetInput(preset), config) : config;
  }

  private validate(preset: string | null, config: Record<string, unknown>): ConfigValidation {
    const input = this.mergedInput(preset, config);
    const parsed = runConfigSchema.safeParse(input);
    // Plain words, one problem per field (core/util/schemaError), not zod's text.
    if (!parsed.success) {
      return { ok: false, errors: schemaProblems(parsed.error, input).map(({ path, message }) => ({ path, message })), config: null, diff: [] };
    }
    let resolved: RunConfig;
    try {
      resolved = giveWayToModelFolder(resolveRunConfig(input)); // a Hugging Face folder's shape wins over modelOverrides
    } catch (err) {
      return { ok: false, errors: [{ path: 'workflow.options', message: (err as Error).message.replace(/^run config: field "workflow.options" /, '') }], config: null, diff: [] };
    }
    // Path fields (policies.init) exist and are checkpoint folders, and the cross-field rules hold
    // (heads divide the width, overrides agree with the init checkpoint), before any run is created.
    const pathErrors = crossFieldProblems(resolved);
    if (preset && presetNeedsModelFolder(preset) && !resolved.policies.init) {
      pathErrors.push({ path: 'policies.init', message: `preset "${preset}" trains a Hugging Face model: name its folder (config.json, tokenizer.json and the safetensors weights)` });
    }
    if (pathErrors.length) return { ok: false, errors: pathErrors, config: null, diff: [] };
    const diff = preset ? configDiff(presetConfig(preset), resolved) : [];
    return { ok: true, errors: [], config: resolved as unknown as Record<string, unknown>, diff };
  }

  private createRun(preset: string | null, config: Record<string, unknown>, start: boolean): { runId: number } {
    const v = this.validate(preset, config);
    if (!v.ok) throw new LabApiError('invalid_input', `run config: ${v.errors.map((e) => `${e.path || '(config)'}: ${e.message}`).join('; ')}`, v.errors);
    const runId = createRun(this.store, { config: v.config as unknown as RunConfig, preset });
    this.push({ type: 'runs' });
    if (start) this.launch(runId, 'start');
    return { runId };
  }

  private resumeRun(runId: number, force: boolean): { ok: true } {
    const run = this.runOrThrow(runId);
    if (this.queue.some((q) => q.runId === runId)) throw new LabApiError('conflict', `run ${runId} is already queued`);
    const a = this.active.get(runId);
    if (a) {
      if (!a.paused) throw new LabApiError('conflict', `run ${runId} is already running`);
      a.resume();
      a.paused = false;
      return { ok: true };
    }
    // A changed dataset or corpus file is refused here, before an engine starts (not by it, after).
    try {
      assertRunDataUnchanged(run.config as RunConfig);
    } catch (err) {
      throw new LabApiError('conflict', (err as Error).message);
    }
    this.launch(runId, 'resume', force);
    return { ok: true };
  }

  private control(runId: number, what: 'pause' | 'stop'): { ok: true } {
    this.runOrThrow(runId);
    // Stopping a queued run takes it out of the queue: it never started, nothing to stop.
    if (what === 'stop' && this.dequeue(runId)) return { ok: true };
    const a = this.active.get(runId);
    if (!a) throw new LabApiError('conflict', `run ${runId} has no engine running in this lab`);
    if (what === 'pause') {
      a.pause();
      a.paused = true;
    } else a.stop();
    return { ok: true };
  }

  /** Starts the run now if an engine slot is free, else queues it (its lease taken as `queued`). */
  private launch(runId: number, mode: EngineMode, force = false): void {
    const run = this.runOrThrow(runId);
    if (this.store.readonly) throw new LabApiError('conflict', `${this.options.dbPath} is open read-only (the file or its folder is read-only): runs can be read, not started`);
    if (this.active.has(runId)) throw new LabApiError('conflict', `run ${runId} is already running`);
    if (this.queue.some((q) => q.runId === runId)) throw new LabApiError('conflict', `run ${runId} is already queued`);
    if (this.active.size < this.maxEngines) return this.startEngine({ runId, mode, force });
    try {
      checkRunnable(this.store, run, mode, force, this.holder);
      acquireLease(this.store.db, runId, this.holder, 'queued');
    } catch (err) {
      throw new LabApiError('conflict', (err as Error).message);
    }
    this.queue.push({ runId, mode, force });
    this.syncQueueHeartbeat();
    this.push({ type: 'status', runId, status: 'queued', error: null });
    this.push({ type: 'log', runId, level: 'info', line: `queued: ${this.active.size} of ${this.maxEngines} engines busy, ${this.queue.length - 1} run(s) ahead` });
  }

  private startEngine({ runId, mode, force }: QueuedLaunch): void {
    let active: ActiveRun;
    try {
      active = launchRun(
        runId,
        mode,
        { store: this.store, dbPath: this.options.dbPath, launcher: this.options.launcher, holder: this.holder, onMessage: (m) => this.relay(runId, m) },
        force,
      );
    } catch (err) {
      throw new LabApiError('conflict', (err as Error).message);
    }
    this.active.set(runId, Object.assign(active, { paused: false }));
    this.push({ type: 'status', runId, status: 'running', error: null });
    void active.done.then((outcome) => {
      this.active.delete(runId);
      this.push({ type: 'status', runId, status: outcome.status, error: outcome.error });
      this.startQueued();
    });
  }

  /** Starts queued runs, oldest first, while slots are free. One that can no longer start is dropped with a log line saying why. */
  private startQueued(): void {
    while (this.active.size < this.maxEngines && this.queue.length > 0) {
      const next = this.queue.shift()!;
      try {
        this.startEngine(next);
      } catch (err) {
        releaseLease(this.store.db, next.runId, this.holder);
        const run = this.store.getRun(next.runId);
        this.push({ type: 'log', runId: next.runId, level: 'error', line: `queued run could not start: ${(err as Error).message}` });
        if (run) this.push({ type: 'status', runId: next.runId, status: run.status, error: run.error });
      }
    }
    this.syncQueueHeartbeat();
  }

  /** Takes a run out of the queue (its lease released, its stored status pushed); false if it was not queued. */
  private dequeue(runId: number): boolean {
    const i = this.queue.findIndex((q) => q.runId === runId);
    if (i < 0) return false;
    this.queue.splice(i, 1);
    releaseLease(this.store.db, runId, this.holder);
    this.syncQueueHeartbeat();
    const run = this.store.getRun(runId);
    if (run) this.push({ type: 'status', runId, status: run.status, error: run.error });
    return true;
  }

  /** A heartbeat for the queued leases while there are any. A refused one (taken over) leaves the queue. */
  private syncQueueHeartbeat(): void {
    if (this.queue.length > 0 && !this.queueHeartbeat) {
      this.queueHeartbeat = setInterval(() => {
        for (const q of [...this.queue]) {
          if (heartbeatLease(this.store.db, q.runId, this.holder)) continue;
          this.queue.splice(this.queue.indexOf(q), 1);
          this.push({ type: 'log', runId: q.runId, level: 'warn', line: `run ${q.runId} left the queue: its lease was taken over` });
        }
      }, HEARTBEAT_EVERY_MS);
      this.queueHeartbeat.unref();
    } else if (this.queue.length === 0 && this.queueHeartbeat) {
      clearInterval(this.queueHeartbeat);
      this.queueHeartbeat = null;
    }
  }

  /** Every metric point of one step, read back from the store, as one 'points' push. */
  private pushStepPoints(runId: number, step: number): void {
    const points: Record<string, SeriesPoint> = {};
    try {
      for (const k of this.store.metricKeys(runId)) {
        const p = this.store.metricSeries(runId, k, { fromStep: step, toStep: step })[0];
        if (p) points[k] = point(p);
      }
    } catch {
      // A read failing under a busy writer only delays the curve; the next fetch catches up.
    }
    this.push({ type: 'points', runId, step, points });
  }

  /** Engine message -> pushes. A step's every metric point is read back from the store (committed before the message). */
  private relay(runId: number, m: EngineMessage): void {
    switch (m.type) {
      case 'step': {
        const metrics: Record<string, number | null> = {};
        for (const [k, v] of Object.entries(m.metrics)) metrics[k] = num(v);
        this.push({ type: 'progress', runId, step: m.step, totalSteps: m.totalSteps, final: m.final, wallMs: num(m.wallMs), metrics });
        this.pushStepPoints(runId, m.step);
        break;
      }
      case 'evaluation':
        // The step's evaluation, committed before the step: its points only (no progress, the step is not done).
        this.pushStepPoints(runId, m.step);
        break;
      case 'status': {
        const a = this.active.get(runId);
        if (a) a.paused = m.status === 'paused';
        this.push({ type: 'status', runId, status: m.status, error: m.error ?? null });
        break;
      }
      case 'log':
        this.push({ type: 'log', runId, level: m.level, line: m.line });
        break;
      case 'ready':
        this.push({ type: 'log', runId, level: 'info', line: `engine ready: backend ${m.backend.name}, steps ${m.startStep}..${m.totalSteps}` });
        break;
    }
  }

  private suiteOrThrow(suiteId: number, baseline?: string): SuiteDetail {
    let d: SuiteDetail | null;
    try {
      d = suiteDetail(this.store, suiteId, { baseline, queued: this.queuedRunIds() });
    } catch (err) {
      throw new LabApiError('invalid_input', (err as Error).message);
    }
    if (!d) throw new LabApiError('not_found', `no suite with id ${suiteId}`);
    return d;
  }

  /** Stores a suite (every run config validated first) and creates its runs; `start` queues them. */
  private createSuite(raw: Record<string, unknown>, start: boolean): { suiteId: number } {
    if (this.store.readonly) throw new LabApiError('conflict', `${this.options.dbPath} is open read-only: suites can be read, not created`);
    let cells;
    let spec;
    try {
      spec = resolveSuiteSpec(raw);
      cells = expandSuite(spec);
    } catch (err) {
      throw new LabApiError('invalid_input', (err as Error).message);
    }
    const suiteId = storeSuite(this.store.db, { name: spec.name || 'suite', spec, cells: cells.map((c) => ({ label: c.label, seed: c.seed })) });
    materialiseSuite(this.store, suiteId);
    this.push({ type: 'runs' });
    if (start) this.startSuite(suiteId);
    return { suiteId };
  }

  /** Queues (or starts, while engine slots are free) every run of the suite not completed, running or queued. */
  private startSuite(suiteId: number): { queued: number } {
    this.suiteOrThrow(suiteId);
    materialiseSuite(this.store, suiteId);
    let queued = 0;
    for (const e of this.suiteOrThrow(suiteId).entries) {
      if (e.runId === null || e.status === 'completed' || e.status === 'queued' || this.active.has(e.runId) || this.queue.some((q) => q.runId === e.runId)) continue;
      // running/paused without an engine here: its host died with it (the lease check still refuses a live one).
      const force = e.status === 'running' || e.status === 'paused';
      try {
        this.launch(e.runId, e.status === 'created' ? 'start' : 'resume', force);
        queued++;
      } catch (err) {
        this.push({ type: 'log', runId: e.runId, level: 'warn', line: `suite ${suiteId}: run ${e.runId} not queued: ${(err as Error).message}` });
      }
    }
    this.push({ type: 'runs' });
    return { queued };
  }

  private reportData(runIds: number[]): ReportData {
    return {
      generatedAt: Date.now(),
      runs: runIds.map((id) => {
        const run = this.detail(this.runOrThrow(id));
        const keys = new Set(this.store.metricKeys(id));
        const series: SeriesMap = {};
        for (const k of REPORT_CHART_KEYS) if (keys.has(k)) series[k] = this.store.metricSeries(id, k, { maxPoints: 400 }).map(point);
        return { run, series, evaluations: this.store.evaluations(id) };
      }),
    };
  }

  private async exportReport(ids: number[], format: ApiParsedInput<'exportReport'>['format'], suiteId?: number, baseline?: string): Promise<ReportFile> {
    // A suite's report: its completed runs, its tables first.
    const suite = suiteId !== undefined ? this.suiteOrThrow(suiteId, baseline) : undefined;
    const runIds = suite ? suite.entries.filter((e) => e.status === 'completed' && e.runId !== null).map((e) => e.runId!) : ids;
    if (suite && !runIds.length && format !== 'csv-table') throw new LabApiError('conflict', `suite ${suiteId} has no completed run to report yet`);
    for (const id of runIds) this.runOrThrow(id);
    const base = suite ? `srpo-suite-${suite.id}` : runIds.length === 1 ? `srpo-run-${runIds[0]}` : `srpo-runs-${runIds.join('-')}`;
    const withSuite = (d: ReportData): ReportData => (suite ? { ...d, suite } : d);
    switch (format) {
      case 'csv-table': {
        // Without a suite: the given runs, one row per run name without its -sN seed suffix.
        const table = suite
          ? suite.table
          : buildSuiteTable(
              runIds.map((id) => {
                const r = this.runOrThrow(id);
                return { label: r.name.replace(/-s\d+$/, ''), seed: r.seed, runId: id, evaluations: this.store.evaluations(id), gradNorm: this.store.metricSeries(id, 'grad/norm').map((p) => p.value) };
              }),
              [],
              baseline,
            );
        return { filename: `${base}-table.csv`, mime: 'text/csv', encoding: 'utf8', content: suiteTableCsv(table) };
      }
      case 'html':
        return { filename: `${base}.html`, mime: 'text/html', encoding: 'utf8', content: htmlReport(withSuite(this.reportData(runIds))) };
      case 'markdown':
        return { filename: `${base}.md`, mime: 'text/markdown', encoding: 'utf8', content: markdownReport(withSuite(this.reportData(runIds))) };
      case 'csv-metrics': {
        const rows = runIds.flatMap((runId) =>
          this.store
            .metricKeys(runId)
            .flatMap((key) => this.store.metricSeries(runId, key).map((p) => ({ runId, key, step: p.step, value: num(p.value), wallTime: p.wallTime }))),
        );
        return { filename: `${base}-metrics.csv`, mime: 'text/csv', encoding: 'utf8', content: metricsCsv(rows) };
      }
      case 'csv-events': {
        const events: EventSummary[] = [];
        for (const runId of runIds) {
          let after: { step: number; id: number } | null = null;
          do {
            const page = this.store.listEvents(runId, {}, { limit: 1000, after });
            events.push(...page.events);
            after = page.next;
          } while (after);
        }
        return { filename: `${base}-events.csv`, mime: 'text/csv', encoding: 'utf8', content: eventsCsv(events) };
      }
      case 'pdf': {
        if (!this.options.printPdf) throw new LabApiError('unsupported', 'PDF export needs a browser to print with (web mode with Chromium, or the desktop app)');
        const bytes = await this.options.printPdf(htmlReport(withSuite(this.reportData(runIds))));
        return { filename: `${base}.pdf`, mime: 'application/pdf', encoding: 'base64', content: Buffer.from(bytes).toString('base64') };
      }
    }
  }
}

/** The member with its output tokens as text pieces (the char tokenizer's; an unknown id as `<id>`). */
function withTokenText(m: StoredMember): StoredMember<TokensWithText> {
  const t = m.tokens;
  return { ...m, tokens: t ? { ...t, outputText: Array.from(t.outputTokens, (id) => TOKEN_TEXT[id] ?? `<${id}>`) } : null };
}

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  description?: string;
  additionalProperties?: unknown;
};

let fieldsCache: ConfigField[] | null = null;

/** The run config's editable leaves, from its JSON schema (zod's toJSONSchema of runConfigSchema). */
export function configFields(): ConfigField[] {
  if (fieldsCache) return fieldsCache;
  const root = z.toJSONSchema(runConfigSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const out: ConfigField[] = [];
  const walk = (s: JsonSchema, path: string) => {
    let nullable = false;
    if (s.anyOf) {
      nullable = s.anyOf.some((a) => a.type === 'null');
      s = s.anyOf.find((a) => a.type !== 'null') ?? {};
    }
    let type = s.type;
    if (Array.isArray(type)) {
      nullable = nullable || type.includes('null');
      type = type.find((t) => t !== 'null');
    }
    const base = { path, ...(nullable ? { nullable } : {}), ...(s.description ? { description: s.description } : {}) };
    if (type === 'object' && s.properties) {
      for (const [k, v] of Object.entries(s.properties)) walk(v, path ? `${path}.${k}` : k);
    } else if (type === 'object') out.push({ ...base, kind: 'json' });
    else if (s.enum) out.push({ ...base, kind: 'enum', options: s.enum.map(String) });
    else if (type === 'array') out.push({ ...base, kind: 'list', ...(s.items?.enum ? { options: s.items.enum.map(String) } : {}) });
    else if (type === 'integer' || type === 'number') {
      out.push({
        ...base,
        kind: type,
        ...(s.minimum !== undefined ? { min: s.minimum } : s.exclusiveMinimum !== undefined ? { min: s.exclusiveMinimum, exclusiveMin: true } : {}),
        ...(s.maximum !== undefined ? { max: s.maximum } : s.exclusiveMaximum !== undefined ? { max: s.exclusiveMaximum, exclusiveMax: true } : {}),
      });
    } else if (type === 'boolean') out.push({ ...base, kind: 'boolean' });
    else if (type === 'string') out.push({ ...base, kind: 'string' });
    else out.push({ ...base, kind: 'json' });
  };
  walk(root, '');
  fieldsCache = out;
  return out;
}

