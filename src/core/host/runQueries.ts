/**
 * The LabService's reads of runs: a run or a not_found error, its summary and detail (the store's
 * row plus what the host knows: `queued` from a live queued lease, `active` from its engines, the
 * best evaluation so far), chart series (through the MetricSeriesCache), event pages, one event
 * with its members' tokens as text, one episode. Nothing here writes or pushes.
 *
 * Not here: starting or stopping anything (runControl.ts), suites (suiteControl.ts), reports
 * (runReports.ts). Tested through the API: test/server/server.test.ts, test/server/bestEval.test.ts,
 * test/core/host/labWorker.test.ts (every read method), test/core/host/engineQueue.test.ts (queued).
 */
import { LabApiError, type ApiParsedInput, type RunDetail, type RunSummary, type SeriesMap, type SeriesPoint } from '../../shared/api';
import type { RunConfig } from '../config';
import type { EpisodeDetail, EventDetail, EventPage, LabStore, MetricPoint, RunRecord, StoredMember, TokensWithText } from '../store';
import { liveLeases } from '../store/leases';
import type { LabContext } from './labContext';
import { tokenTextFor, type TokenText } from './tokenText';
import { shownStatus } from '../../shared/records';
import { evalOnlyRecord, metricStepKind, recordOfStep, recordRange, seriesInSteps, stepOfRecord } from '../../shared/stepConvention';

/** A metric value as the wire carries it: NaN and +-Infinity as null. */
export const finiteOrNull = (v: number): number | null => (Number.isFinite(v) ? v : null);
export const seriesPoint = (p: MetricPoint): SeriesPoint => ({ step: p.step, value: finiteOrNull(p.value), wallTime: p.wallTime });

export function runOrThrow(store: LabStore, runId: number): RunRecord {
  const run = store.getRun(runId);
  if (!run) throw new LabApiError('not_found', `no run with id ${runId}`);
  return run;
}

/** Runs with a live `queued` lease: this host's queue and any other host's. */
export function queuedRunIds(store: LabStore): Set<number> {
  return new Set(
    liveLeases(store.db)
      .filter((l) => l.kind === 'queued')
      .map((l) => l.runId),
  );
}

/** One row of the runs table. `queued`: queuedRunIds, read once per list. */
export function runSummary(ctx: LabContext, r: RunRecord, queued: ReadonlySet<number> = queuedRunIds(ctx.store)): RunSummary {
  const config = r.config as Partial<RunConfig>;
  let best: RunSummary['bestEval'] = null;
  for (const p of ctx.store.metricSeries(r.id, 'eval/macro/avg'))
    if (Number.isFinite(p.value) && (!best || p.value > best.value)) best = { step: p.step, value: p.value };
  const active = ctx.isActive(r.id);
  return {
    id: r.id,
    name: r.name,
    preset: r.preset,
    status: shownStatus(r.status, queued.has(r.id), active),
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
    active,
  };
}

export function runDetail(ctx: LabContext, r: RunRecord): RunDetail {
  return { ...runSummary(ctx, r), config: r.config as Record<string, unknown>, checkpoints: ctx.store.checkpoints(r.id) };
}

export function listRuns(ctx: LabContext): RunSummary[] {
  const queued = queuedRunIds(ctx.store);
  return ctx.store.listRuns().map((r) => runSummary(ctx, r, queued));
}

/**
 * The store record range that holds steps fromStep..toStep of `key` (src/shared/stepConvention.ts),
 * a training key's ending before the eval-only final record (`final`, null: none).
 */
function storeRange(key: string, range: { fromStep?: number; toStep?: number }, final: number | null): { fromStep?: number; toStep?: number } {
  const r = recordRange(key, range);
  if (final !== null && metricStepKind(key) === 'train') r.toStep = Math.min(r.toStep ?? final - 1, final - 1);
  return r;
}

/**
 * One stored series in steps (updates done; src/shared/stepConvention.ts): `fromStep`/`toStep`
 * and each point's step are steps, a training key's point of record s at s + 1, an evaluation's
 * at s; the eval-only final record's training keys are left out. The charts, the reports, the
 * CSV exports and `show` read series through this (or metricSeries below), never the records.
 */
export function seriesInStepsOf(
  store: Pick<LabStore, 'metricSeries'>,
  run: RunRecord,
  key: string,
  options: { fromStep?: number; toStep?: number; maxPoints?: number } = {},
  read: (key: string, o: { fromStep?: number; toStep?: number; maxPoints?: number }) => MetricPoint[] = (k, o) => store.metricSeries(run.id, k, o),
): MetricPoint[] {
  const final = evalOnlyRecord(run);
  const range = storeRange(key, options, final);
  if (range.fromStep !== undefined && range.toStep !== undefined && range.toStep < range.fromStep) return [];
  return seriesInSteps(key, read(key, { ...range, maxPoints: options.maxPoints }), final);
}

/** The asked keys' series in steps (seriesInStepsOf), each downsampled as asked (cached between reads). */
export function metricSeries(ctx: LabContext, { runId, keys, fromStep, toStep, maxPoints }: ApiParsedInput<'metricSeries'>): SeriesMap {
  const run = runOrThrow(ctx.store, runId);
  const out: SeriesMap = {};
  for (const k of keys)
    out[k] = seriesInStepsOf(ctx.store, run, k, { fromStep, toStep, maxPoints }, (key, o) => ctx.seriesCache.series(runId, key, o)).map(seriesPoint);
  return out;
}

/**
 * A page of trace events in steps (src/shared/stepConvention.ts): the filter's step range, the
 * cursor and each event's step are steps of the filter's split (a training event of record s is
 * step s + 1, the update it was sampled for; an evaluation event's step is s). Without a split
 * (the viewer always sends one) the steps are read as training steps.
 */
export function listEvents(store: LabStore, { runId, filter, limit, after }: ApiParsedInput<'listEvents'>): EventPage {
  runOrThrow(store, runId);
  const kind = filter?.split ?? 'train';
  const f = { ...(filter ?? {}) };
  if (f.fromStep !== undefined) f.fromStep = recordOfStep(f.fromStep, kind);
  if (f.toStep !== undefined) f.toStep = recordOfStep(f.toStep, kind);
  const page = store.listEvents(runId, f, { limit, after: after ? { step: recordOfStep(after.step, kind), id: after.id } : null });
  return {
    events: page.events.map((e) => ({ ...e, step: stepOfRecord(e.step, kind) })),
    next: page.next && { step: stepOfRecord(page.next.step, kind), id: page.next.id },
  };
}

/** One event with its members' output tokens decoded to text (the host knows the tokenizer); its step in steps. */
export function eventWithTokenText(store: LabStore, eventId: number): EventDetail<TokensWithText> {
  const e = store.getEvent(eventId);
  if (!e) throw new LabApiError('not_found', `no event with id ${eventId}`);
  const text = tokenTextFor(store.getRun(e.runId)?.config);
  return { ...e, step: stepOfRecord(e.step, store.eventSplit(eventId) ?? 'train'), members: e.members.map((m) => withTokenText(m, text)) };
}

/** One episode without its members (open an event with getEvent); its and its events' steps in steps. */
export function episodeOrThrow(store: LabStore, episodeId: number): EpisodeDetail {
  const ep = store.getEpisode(episodeId, { members: false });
  if (!ep) throw new LabApiError('not_found', `no episode with id ${episodeId}`);
  const step = stepOfRecord(ep.step, ep.split);
  return { ...ep, step, events: ep.events.map((e) => ({ ...e, step })) };
}

/** The member with its output tokens as text pieces (the run's tokenizer: tokenText.ts). */
function withTokenText(m: StoredMember, text: TokenText): StoredMember<TokensWithText> {
  const t = m.tokens;
  return { ...m, tokens: t ? { ...t, outputText: Array.from(t.outputTokens, text) } : null };
}
