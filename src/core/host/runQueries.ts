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

/** The asked keys' series, each downsampled as asked (cached between reads). */
export function metricSeries(ctx: LabContext, { runId, keys, fromStep, toStep, maxPoints }: ApiParsedInput<'metricSeries'>): SeriesMap {
  runOrThrow(ctx.store, runId);
  const out: SeriesMap = {};
  for (const k of keys) out[k] = ctx.seriesCache.series(runId, k, { fromStep, toStep, maxPoints }).map(seriesPoint);
  return out;
}

export function listEvents(store: LabStore, { runId, filter, limit, after }: ApiParsedInput<'listEvents'>): EventPage {
  runOrThrow(store, runId);
  return store.listEvents(runId, filter ?? {}, { limit, after: after ?? null });
}

/** One event with its members' output tokens decoded to text (the host knows the tokenizer). */
export function eventWithTokenText(store: LabStore, eventId: number): EventDetail<TokensWithText> {
  const e = store.getEvent(eventId);
  if (!e) throw new LabApiError('not_found', `no event with id ${eventId}`);
  const text = tokenTextFor(store.getRun(e.runId)?.config);
  return { ...e, members: e.members.map((m) => withTokenText(m, text)) };
}

/** One episode without its members (open an event with getEvent). */
export function episodeOrThrow(store: LabStore, episodeId: number): EpisodeDetail {
  const ep = store.getEpisode(episodeId, { members: false });
  if (!ep) throw new LabApiError('not_found', `no episode with id ${episodeId}`);
  return ep;
}

/** The member with its output tokens as text pieces (the run's tokenizer: tokenText.ts). */
function withTokenText(m: StoredMember, text: TokenText): StoredMember<TokensWithText> {
  const t = m.tokens;
  return { ...m, tokens: t ? { ...t, outputText: Array.from(t.outputTokens, text) } : null };
}
