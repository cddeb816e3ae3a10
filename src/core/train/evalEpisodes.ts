/**
 * The store records (split 'eval') of evaluation episodes, so the trace viewer's eval split shows
 * what the policies did on the eval queries: each episode's events and members with prompts,
 * outputs, parse results, rewards and, when the runner sampled them, token ids and the sampler's
 * log-probs (at the eval temperature; the store writes those blobs only with eval.storeTokens, on
 * the steps that store token detail). Nothing of an update exists for them: advantage, ratio,
 * log-ratios, clip state and logpCur are null. An event is complete when it has its K members
 * (evaluation drops nothing; the wording of a short set follows srpo/batch.ts).
 *
 * Which episodes: the n samples of the first `eval.storeQueries` queries of each benchmark, or
 * none when `eval.storeEpisodes` is off (storedEvalQueries). Written with the evaluation's own
 * rows in one store transaction (store/steps.ts writeEvaluation, or the final step's writeStep).
 * Pure: no I/O. Not the training split's records (stepRecord.ts).
 *
 * Tests: test/core/train/evalEpisodes.test.ts (a short run's stored eval episodes against its
 * Avg@n, the API's split filter, a crash before the step commits redone once).
 */
import type { RunConfig } from '../config';
import { memberKey, type SampledMember } from '../rollout/orchestrator';
import type { EpisodeRecord, EventRecord, MemberRecord } from '../store/records';
import type { EpisodeResult } from '../workflows/types';
import { playedEvent, playedMember } from './stepRecord';

/** One played evaluation episode with what the record needs beside the workflow's result. */
export interface PlayedEvalEpisode {
  result: EpisodeResult;
  generatedTokens: number;
  latencyMs: number;
  /** Sampled detail per `${eventId}#${memberIndex}` (the rollout orchestrator's); absent for the gold runner. */
  sampled?: ReadonlyMap<string, SampledMember>;
}

/** Queries per benchmark whose episodes an evaluation stores (0: none). */
export function storedEvalQueries(config: RunConfig): number {
  return config.eval.storeEpisodes ? config.eval.storeQueries : 0;
}

function memberRecords(ev: EpisodeResult['events'][number], sampled: PlayedEvalEpisode['sampled']): MemberRecord[] {
  return ev.members.map((m) => {
    const s = sampled?.get(memberKey(ev.eventId, m.memberIndex));
    return {
      ...playedMember(m, s),
      logRatio: null,
      logpCur: null,
    };
  });
}

/**
 * Records of one query's n samples: `played[g]` is sample g (the record's rollout index) of the
 * query `taskId` of `benchmark`, as the evaluation's summary counted it.
 */
export function evalEpisodeRecords(played: readonly PlayedEvalEpisode[], taskId: string, benchmark: string): EpisodeRecord[] {
  return played.map((p, g) => {
    const r = p.result;
    const events: EventRecord[] = r.events.map((ev) => {
      const complete = ev.members.length === ev.expectedK;
      return {
        ...playedEvent(ev),
        complete,
        dropReason: complete ? null : `expected K=${ev.expectedK} members, found ${ev.members.length}`,
        advantage: null,
        logRatio: null,
        ratio: null,
        clipped: null,
        members: memberRecords(ev, p.sampled),
      };
    });
    return {
      key: r.episodeId,
      split: 'eval',
      taskId,
      benchmark,
      rollout: g,
      finalAnswer: r.finalAnswer,
      reward: r.teamReward,
      correct: r.correct,
      generatedTokens: p.generatedTokens,
      calls: r.calls,
      toolCalls: r.toolCalls,
      latencyMs: p.latencyMs,
      events,
    };
  });
}
