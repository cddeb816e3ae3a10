/**
 * LabService: the LabApi implementation (src/shared/api.ts) over one lab database. It reads the
 * store, creates runs from presets and configs, owns the engines it launches (host/runs.ts,
 * through the EngineLauncher it is given) and turns their messages into pushes for its
 * subscribers. Both transports wrap one instance: `srpo-lab serve` (src/server) and the Electron
 * main process (src/main). `call(method, raw)` validates the raw input with the contract's
 * schema, so a transport only has to hand over what arrived.
 *
 * Not here: transports, auth, the training loop (src/engine). Outputs are JSON-safe DTOs (NaN as
 * null, typed arrays as number arrays). Tested by test/server/*.test.ts and test/e2e/lab.test.ts
 * (real engines through NodeForkLauncher).
 */
import { rmSync } from 'node:fs';
import { z } from 'zod';
import {
  fieldErrors,
  LabApiError,
  parseApiInput,
  type ApiMethod,
  type ApiOutputs,
  type ApiParsedInput,
  type ConfigField,
  type ConfigValidation,
  type EpisodeDto,
  type EventDetailDto,
  type EventSummaryDto,
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
import { eventsCsv, htmlReport, markdownReport, metricsCsv, REPORT_CHART_KEYS, type ReportData } from '../../shared/report';
import { mergeConfig, PRESET_NAMES, PRESETS, presetConfig, presetInput, resolveRunConfig, runConfigSchema, type RunConfig } from '../config';
import { CHARACTERS, SPECIAL_TOKENS } from '../models/tokenizer';
import { LabStore, type EventSummary, type MetricPoint, type RunRecord, type StoredMember } from '../store';
import { MetricSeriesCache } from '../store/series';
import type { EngineLauncher, EngineMode } from './launcher';
import type { EngineMessage } from './messages';
import { runDirFor } from './paths';
import { createRun, launchRun, type ActiveRun } from './runs';

export interface LabServiceOptions {
  /** The lab database (created and migrated if missing). */
  dbPath: string;
  launcher: EngineLauncher;
  /** Prints an HTML report to PDF (web mode: headless Chromium; desktop: printToPDF). Absent: pdf is 'unsupported'. */
  printPdf?: (html: string) => Promise<Uint8Array>;
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
  readonly handlers: LabApiHandlers;

  constructor(private readonly options: LabServiceOptions) {
    this.store = LabStore.open(options.dbPath);
    this.seriesCache = new MetricSeriesCache(this.store.db);
    this.handlers = {
      listRuns: () => this.store.listRuns().map((r) => this.summary(r)),
      getRun: ({ runId }) => this.detail(this.runOrThrow(runId)),
      deleteRun: ({ runId }) => this.deleteRun(runId),
      presets: () => PRESET_NAMES.map((name): PresetInfo => {
        const p = PRESETS[name] as { description: string; base?: string };
        return { name, description: p.description, base: p.base ?? null, input: presetInput(name), config: presetConfig(name) as unknown as Record<string, unknown> };
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
        const page = this.store.listEvents(runId, filter ?? {}, { limit, after: after ?? null });
        return { events: page.events.map(eventSummary), next: page.next };
      },
      getEvent: ({ eventId }) => {
        const e = this.store.getEvent(eventId);
        if (!e) throw new LabApiError('not_found', `no event with id ${eventId}`);
        return { ...eventSummary(e), members: e.members.map(memberDto) } satisfies EventDetailDto;
      },
      getEpisode: ({ episodeId }) => {
        const ep = this.store.getEpisode(episodeId, { members: false });
        if (!ep) throw new LabApiError('not_found', `no episode with id ${episodeId}`);
        const { events, ...rest } = ep;
        return { ...rest, reward: ep.reward, events: events.map(eventSummary) } satisfies EpisodeDto;
      },
      exportReport: ({ runIds, format }) => this.exportReport(runIds, format),
    };
  }

  /** Validates `raw` against the method's schema and runs it. Throws LabApiError. */
  async call<M extends ApiMethod>(method: M, raw: unknown): Promise<ApiOutputs[M]>;
  async call(method: string, raw: unknown): Promise<unknown>;
  async call(method: string, raw: unknown): Promise<unknown> {
    const input = parseApiInput(method, raw) as ApiParsedInput<ApiMethod>;
    const handler = this.handlers[method as ApiMethod] as (i: unknown) => unknown;
    try {
      return await handler(input);
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

  /** Stops every engine it started (waiting up to `timeoutMs` each, then kills) and closes the store. */
  async close(timeoutMs = 10_000): Promise<void> {
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

  private summary(r: RunRecord): RunSummary {
    const config = r.config as Partial<RunConfig>;
    const evals = this.store.metricSeries(r.id, 'eval/macro/avg');
    let best: RunSummary['bestEval'] = null;
    for (const p of evals) if (Number.isFinite(p.value) && (!best || p.value > best.value)) best = { step: p.step, value: p.value };
    return {
      id: r.id,
      name: r.name,
      preset: r.preset,
      status: r.status,
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
    return { ...this.summary(r), config: r.config as Record<string, unknown>, checkpoints: this.store.checkpoints(r.id).map((c) => ({ step: c.step, path: c.path, wallTime: c.wallTime })) };
  }

  private deleteRun(runId: number): { deleted: boolean } {
    this.runOrThrow(runId);
    if (this.active.has(runId)) throw new LabApiError('conflict', `run ${runId} is running; stop it before deleting it`);
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
    return preset ? mergeConfig(presetInput(preset), config) : config;
  }

  private validate(preset: string | null, config: Record<string, unknown>): ConfigValidation {
    const input = this.mergedInput(preset, config);
    const parsed = runConfigSchema.safeParse(input);
    if (!parsed.success) return { ok: false, errors: fieldErrors(parsed.error), config: null, diff: [] };
    let resolved: RunConfig;
    try {
      resolved = resolveRunConfig(input);
    } catch (err) {
      return { ok: false, errors: [{ path: 'workflow.options', message: (err as Error).message.replace(/^run config: field "workflow.options" /, '') }], config: null, diff: [] };
    }
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
    const a = this.active.get(runId);
    if (a) {
      if (!a.paused) throw new LabApiError('conflict', `run ${runId} is already running`);
      a.resume();
      a.paused = false;
      return { ok: true };
    }
    this.launch(runId, 'resume', force);
    return { ok: true };
  }

  private control(runId: number, what: 'pause' | 'stop'): { ok: true } {
    this.runOrThrow(runId);
    const a = this.active.get(runId);
    if (!a) throw new LabApiError('conflict', `run ${runId} has no engine running in this lab`);
    if (what === 'pause') {
      a.pause();
      a.paused = true;
    } else a.stop();
    return { ok: true };
  }

  private launch(runId: number, mode: EngineMode, force = false): void {
    this.runOrThrow(runId);
    if (this.active.has(runId)) throw new LabApiError('conflict', `run ${runId} is already running`);
    let active: ActiveRun;
    try {
      active = launchRun(runId, mode, { store: this.store, dbPath: this.options.dbPath, launcher: this.options.launcher, onMessage: (m) => this.relay(runId, m) }, force);
    } catch (err) {
      throw new LabApiError('conflict', (err as Error).message);
    }
    this.active.set(runId, Object.assign(active, { paused: false }));
    this.push({ type: 'status', runId, status: 'running', error: null });
    void active.done.then((outcome) => {
      this.active.delete(runId);
      this.push({ type: 'status', runId, status: outcome.status, error: outcome.error });
    });
  }

  /** Engine message -> pushes. A step's every metric point is read back from the store (committed before the message). */
  private relay(runId: number, m: EngineMessage): void {
    switch (m.type) {
      case 'step': {
        const metrics: Record<string, number | null> = {};
        for (const [k, v] of Object.entries(m.metrics)) metrics[k] = num(v);
        this.push({ type: 'progress', runId, step: m.step, totalSteps: m.totalSteps, final: m.final, wallMs: num(m.wallMs), metrics });
        const points: Record<string, SeriesPoint> = {};
        try {
          for (const k of this.store.metricKeys(runId)) {
            const p = this.store.metricSeries(runId, k, { fromStep: m.step, toStep: m.step })[0];
            if (p) points[k] = point(p);
          }
        } catch {
          // A read failing under a busy writer only delays the curve; the next fetch catches up.
        }
        this.push({ type: 'points', runId, step: m.step, points });
        break;
      }
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

  private async exportReport(runIds: number[], format: ApiParsedInput<'exportReport'>['format']): Promise<ReportFile> {
    for (const id of runIds) this.runOrThrow(id);
    const base = runIds.length === 1 ? `srpo-run-${runIds[0]}` : `srpo-runs-${runIds.join('-')}`;
    switch (format) {
      case 'html':
        return { filename: `${base}.html`, mime: 'text/html', encoding: 'utf8', content: htmlReport(this.reportData(runIds)) };
      case 'markdown':
        return { filename: `${base}.md`, mime: 'text/markdown', encoding: 'utf8', content: markdownReport(this.reportData(runIds)) };
      case 'csv-metrics': {
        const rows = runIds.flatMap((runId) => this.store.metricKeys(runId).flatMap((key) => this.store.metricSeries(runId, key).map((p) => ({ runId, key, step: p.step, value: num(p.value), wallTime: p.wallTime }))));
        return { filename: `${base}-metrics.csv`, mime: 'text/csv', encoding: 'utf8', content: metricsCsv(rows) };
      }
      case 'csv-events': {
        const events: EventSummaryDto[] = [];
        for (const runId of runIds) {
          let after: { step: number; id: number } | null = null;
          do {
            const page = this.store.listEvents(runId, {}, { limit: 1000, after });
            events.push(...page.events.map(eventSummary));
            after = page.next;
          } while (after);
        }
        return { filename: `${base}-events.csv`, mime: 'text/csv', encoding: 'utf8', content: eventsCsv(events) };
      }
      case 'pdf': {
        if (!this.options.printPdf) throw new LabApiError('unsupported', 'PDF export needs a browser to print with (web mode with Chromium, or the desktop app)');
        const bytes = await this.options.printPdf(htmlReport(this.reportData(runIds)));
        return { filename: `${base}.pdf`, mime: 'application/pdf', encoding: 'base64', content: Buffer.from(bytes).toString('base64') };
      }
    }
  }
}

function eventSummary(e: EventSummary): EventSummaryDto {
  return {
    id: e.id,
    runId: e.runId,
    step: e.step,
    episodeId: e.episodeId,
    key: e.key,
    seq: e.seq,
    kind: e.kind,
    stateId: e.stateId,
    group: e.group,
    expectedK: e.expectedK,
    memberCount: e.memberCount,
    invalidMembers: e.invalidMembers,
    complete: e.complete,
    dropReason: e.dropReason,
    reward: e.reward,
    advantage: e.advantage === null ? null : num(e.advantage),
    logRatio: e.logRatio === null ? null : num(e.logRatio),
    ratio: e.ratio === null ? null : num(e.ratio),
    clipped: e.clipped,
  };
}

function memberDto(m: StoredMember): EventDetailDto['members'][number] {
  const t = m.tokens;
  return {
    id: m.id,
    memberIndex: m.memberIndex,
    role: m.role,
    policyId: m.policyId,
    policyVersion: m.policyVersion,
    prompt: m.prompt,
    output: m.output,
    valid: m.valid,
    parseError: m.parseError,
    logRatio: m.logRatio === null ? null : num(m.logRatio),
    promptLength: m.promptLength,
    outputLength: m.outputLength,
    tokens: t
      ? {
          outputTokens: Array.from(t.outputTokens),
          outputText: Array.from(t.outputTokens, (id) => TOKEN_TEXT[id] ?? `<${id}>`),
          logpOld: Array.from(t.logpOld, (v) => (Number.isFinite(v) ? v : 0)),
          mask: Array.from(t.mask),
          logpCur: t.logpCur ? Array.from(t.logpCur, (v) => (Number.isFinite(v) ? v : null)) : null,
          promptLength: t.promptTokens.length,
        }
      : null,
  };
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

