/**
 * The endpoint tests' episode: a fresh EpisodeLog opened on the endpoint (a one-question task)
 * and the official `openai` client pointed at its base URL, retries off so a refusal shows.
 */
import OpenAI from 'openai';
import { EpisodeLog } from '../../src/core/external/episodeLog';
import type { ExternalEndpoint } from '../../src/core/external/server';

export function openEpisode(ep: ExternalEndpoint, n: number): { log: EpisodeLog; client: OpenAI } {
  const log = new EpisodeLog(`s0/t${n}/g0`, `ep${n}`, { id: 'task-1', question: '1+1', answers: ['2'] }, 0);
  ep.open([log]);
  return { log, client: new OpenAI({ baseURL: ep.episodeUrl(log), apiKey: ep.key, maxRetries: 0 }) };
}
