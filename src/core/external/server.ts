/**
 * The external-agent endpoint: an OpenAI-compatible HTTP server on 127.0.0.1 (plain node:http)
 * through which an agent program's calls reach the run's policies and are recorded as events
 * with their exact tokens (docs/EXTERNAL_AGENTS.md is the contract).
 *
 *   GET  /v1/models                                   the role names
 *   POST /episodes/<id>/v1/chat/completions           chat (stream: true as server-sent events)
 *   POST /episodes/<id>/v1/completions                plain completions
 *   POST /episodes/<id>/v1/reward                     {reward, events?, answer?, correct?}
 *   GET  /episodes/<id>/v1/models
 *   POST /v1/chat/completions, /v1/completions        serve-model only (nothing recorded)
 *
 * Every request needs `Authorization: Bearer <key>` (401). `model` names a role; the role's
 * policy answers. In training and evaluation the run's sampling settings are used and a request's
 * `temperature` / `top_p` are recorded, not obeyed (the response says so in the header
 * `X-SRPO-Sampling`); serve-model obeys them. At most `concurrency` requests are sampled at once,
 * the rest wait in arrival order; the sampling itself is batched across episodes (batcher.ts).
 *
 * Not here: the program and batch life cycle (rollout/external.ts), rendering (render.ts).
 * Tests: test/external/endpoint.test.ts, test/external/badInput.test.ts, test/external/topLogprobs.test.ts.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { z } from 'zod';
import type { Role } from '../models/vocab';
import type { Policies, SampledCompletion, SampledMember } from '../policies/types';
import { schemaError } from '../util/schemaError';
import type { PolicyRole } from '../workflows/types';
import { SampleBatcher, type BatcherOptions } from './batcher';
import type { EpisodeLog, EpisodeReward } from './episodeLog';
import {
  EVENT_TAG,
  EndpointError,
  chatCompletion,
  chatCompletionChunks,
  chatRequestSchema,
  completionRequestSchema,
  errorBody,
  messageText,
  modelList,
  rewardRequestSchema,
  textCompletion,
  textCompletionChunks,
  type ChoiceOut,
  type ResponseMeta,
} from './protocol';
import { rendererFor } from './render';

/** A role name a program may use as `model`, and the policy role that plays it. */
export interface EndpointRole {
  name: string;
  policyRole: PolicyRole;
}

/** How calls are sampled: the run's settings (training, evaluation) or the request's (serve-model). */
export interface SamplingSettings {
  obeyRequest: boolean;
  temperature: number;
  topP: number;
  /** New tokens per call at most (a request's max_tokens may ask for fewer). */
  maxNewTokens: number;
}

export interface EndpointOptions extends BatcherOptions {
  policies: Policies;
  roles: EndpointRole[];
  sampling: SamplingSettings;
  /** Requests sampled at once at most; the rest wait in arrival order. */
  concurrency: number;
  /** Largest request body in bytes (default 4 MiB). */
  bodyLimitBytes?: number;
  /** serve-model: the root /v1 URLs answer without an episode (nothing is recorded). */
  open?: boolean;
  /** The API key (default: 32 random bytes, hex). */
  key?: string;
  /** Port (default: any free one). */
  port?: number;
  /** A chat model's thinking switch (workflow.enableThinking). */
  enableThinking?: boolean;
}

export const DEFAULT_BODY_LIMIT = 4 * 1024 * 1024;

/** How long an idle keep-alive connection stays open (ms). */
export const KEEP_ALIVE_MS = 15 * 60_000;

/** Request statistics since the last `takeStats()`. */
export interface EndpointStats {
  requests: number;
  /** Wall time of each answered sampling request (ms). */
  latencyMs: number[];
  /** Most requests sampled at once. */
  maxActive: number;
}

/** A counting semaphore whose waiters are served in arrival order. */
class Slots {
  private active = 0;
  maxActive = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}
  async acquire(): Promise<void> {
    if (this.active >= this.limit) await new Promise<void>((r) => this.waiting.push(r));
    else this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
  }
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }
}

const now = (): number => Math.floor(Date.now() / 1000);

export class ExternalEndpoint {
  readonly key: string;
  readonly batcher: SampleBatcher;
  sampling: SamplingSettings;
  /** The batch being played: in training a reward is required, in evaluation an answer alone will do. */
  mode: 'train' | 'eval' = 'train';
  private readonly byUrlId = new Map<string, EpisodeLog>();
  /** Episodes of earlier batches: their URLs answer 404 "finished", not "unknown". */
  private readonly finishedIds = new Set<string>();
  private readonly slots: Slots;
  private stats: EndpointStats = { requests: 0, latencyMs: [], maxActive: 0 };
  private counter = 0;
  private readonly roleByName: Map<string, EndpointRole>;

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly options: EndpointOptions,
  ) {
    this.key = options.key ?? randomBytes(32).toString('hex');
    this.batcher = new SampleBatcher(options.policies, options);
    this.sampling = options.sampling;
    this.slots = new Slots(options.concurrency);
    this.roleByName = new Map(options.roles.map((r) => [r.name, r]));
  }

  /** Starts listening on 127.0.0.1 (only). */
  static async start(options: EndpointOptions): Promise<ExternalEndpoint> {
    let endpoint: ExternalEndpoint | null = null;
    const server = createServer((req, res) => void endpoint!.handle(req, res));
    // A batched sampler call holds the event loop for seconds: an idle keep-alive socket whose
    // timer expired meanwhile would be closed just as its client reuses it (a connection error on
    // the client's side, an episode lost). Programs live for one batch; let their sockets live too.
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    server.headersTimeout = KEEP_ALIVE_MS + 60_000;
    server.requestTimeout = 0;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    endpoint = new ExternalEndpoint(server, (server.address() as AddressInfo).port, options);
    return endpoint;
  }

  /** OPENAI_BASE_URL: the endpoint's root. */
  get rootUrl(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  episodeUrl(log: EpisodeLog): string {
    return `http://127.0.0.1:${this.port}/episodes/${log.urlId}/v1`;
  }

  /** Makes a batch's episodes reachable. */
  open(logs: readonly EpisodeLog[]): void {
    for (const l of logs) {
      if (this.byUrlId.has(l.urlId)) throw new Error(`external endpoint: episode "${l.urlId}" is already open`);
      this.byUrlId.set(l.urlId, l);
    }
  }

  /** Ends a batch: its episodes take no more calls (404 "finished"). */
  close(logs: readonly EpisodeLog[]): void {
    for (const l of logs) {
      l.finished = true;
      this.byUrlId.delete(l.urlId);
      this.finishedIds.add(l.urlId);
    }
  }

  /** Statistics since the last call. */
  takeStats(): EndpointStats {
    const s = { ...this.stats, maxActive: this.slots.maxActive };
    this.stats = { requests: 0, latencyMs: [], maxActive: 0 };
    this.slots.maxActive = 0;
    return s;
  }

  /** Records an episode's reward (from /reward or a stdout line); throws EndpointError on bad input. */
  postReward(urlId: string, body: unknown): void {
    const log = this.episode(urlId);
    const parsed = rewardRequestSchema.safeParse(body);
    if (!parsed.success) throw new EndpointError(400, schemaError('reward', parsed.error, body).message, 'invalid_reward');
    const r = parsed.data;
    if (r.reward === undefined && (r.answer === undefined || this.sampling.obeyRequest || this.mode === 'train')) {
      throw new EndpointError(
        400,
        'reward: field "reward" is required (a number in [-100, 100]; in evaluation an "answer" alone will do)',
        'invalid_reward',
        'reward',
      );
    }
    const reward: EpisodeReward = { reward: r.reward ?? 0, rewardGiven: r.reward !== undefined, events: r.events, answer: r.answer, correct: r.correct };
    log.reward = reward;
    log.finished = true;
    log.latencyMs = performance.now() - log.openedAt;
  }

  async dispose(): Promise<void> {
    this.batcher.dispose();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private episode(urlId: string): EpisodeLog {
    const log = this.byUrlId.get(urlId);
    if (!log) {
      if (this.finishedIds.has(urlId)) throw new EndpointError(404, `episode "${urlId}" is finished (its batch ended)`, 'episode_finished');
      throw new EndpointError(404, `unknown episode "${urlId}"`, 'episode_not_found');
    }
    if (log.finished) throw new EndpointError(404, `episode "${urlId}" is finished (its reward is in)`, 'episode_finished');
    return log;
  }

  private authorized(req: IncomingMessage): boolean {
    const got = Buffer.from(String(req.headers.authorization ?? ''));
    const want = Buffer.from(`Bearer ${this.key}`);
    return got.length === want.length && timingSafeEqual(got, want);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      if (!this.authorized(req)) {
        await drain(req);
        throw new EndpointError(401, 'missing or wrong API key (send "Authorization: Bearer <OPENAI_API_KEY>")', 'invalid_api_key');
      }
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const m = /^(?:\/episodes\/([^/]+))?\/v1\/(models|chat\/completions|completions|reward)\/?$/.exec(url.pathname);
      if (!m) {
        await drain(req);
        throw new EndpointError(404, `no such endpoint: ${req.method} ${url.pathname}`, 'unknown_url');
      }
      const [, urlId, what] = m;
      if (what === 'models') {
        await drain(req);
        if (req.method !== 'GET') throw new EndpointError(405, `${url.pathname} takes GET`);
        if (urlId !== undefined) this.episode(decodeURIComponent(urlId));
        return sendJson(res, 200, modelList([...this.roleByName.keys()], now()));
      }
      if (req.method !== 'POST') {
        await drain(req);
        throw new EndpointError(405, `${url.pathname} takes POST`);
      }
      const body = await readJson(req, this.options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT);
      if (urlId === undefined && !this.options.open)
        throw new EndpointError(404, "this endpoint trains: call the episode's base_url (/episodes/<id>/v1)", 'episode_required');
      const log = urlId === undefined ? null : this.episode(decodeURIComponent(urlId));
      if (what === 'reward') {
        if (!log) throw new EndpointError(404, 'rewards go to an episode: POST /episodes/<id>/v1/reward', 'episode_required');
        this.postReward(log.urlId, body);
        return sendJson(res, 200, { ok: true });
      }
      const headerTag = req.headers['x-srpo-event'];
      await this.complete(what === 'chat/completions' ? 'chat' : 'text', body, typeof headerTag === 'string' ? headerTag : undefined, log, res);
    } catch (err) {
      const e = err instanceof EndpointError ? err : new EndpointError(500, `internal error: ${(err as Error).message}`);
      if (!res.headersSent) sendJson(res, e.status, errorBody(e));
      else res.end();
    }
  }

  private parse<S extends z.ZodType>(what: string, schema: S, body: unknown): z.output<S> {
    const parsed = schema.safeParse(body);
    if (!parsed.success) throw new EndpointError(400, schemaError(what, parsed.error, body).message);
    return parsed.data;
  }

  private async complete(kind: 'chat' | 'text', body: unknown, headerTag: string | undefined, log: EpisodeLog | null, res: ServerResponse): Promise<void> {
    const t0 = performance.now();
    const chat = kind === 'chat' ? this.parse('chat completion request', chatRequestSchema, body) : null;
    const text = kind === 'text' ? this.parse('completion request', completionRequestSchema, body) : null;
    const req = (chat ?? text)!;
    const role = this.roleByName.get(req.model);
    if (!role)
      throw new EndpointError(400, `unknown model "${req.model}"; the roles are: ${[...this.roleByName.keys()].join(', ')}`, 'model_not_found', 'model');
    const tag = req.srpo_event ?? headerTag ?? null;
    if (tag !== null && !EVENT_TAG.test(tag))
      throw new EndpointError(400, 'X-SRPO-Event: letters, digits and _ . : - only, 1 to 64 characters', null, 'srpo_event');
    const s = this.sampling;
    const policies = this.options.policies;
    const policy = policies.policyFor(role.policyRole as Role);
    const asked = (chat ? (chat.max_completion_tokens ?? chat.max_tokens) : text!.max_tokens) ?? s.maxNewTokens;
    const renderer = rendererFor(policies);
    const rendered = renderer.render(policies, {
      policyId: policy.id,
      role: role.policyRole as Role,
      messages: chat?.messages.map((m) => ({ role: m.role, content: messageText(m.content) })),
      prompt: text ? (typeof text.prompt === 'string' ? text.prompt : text.prompt[0]) : undefined,
      tools: chat?.tools ?? undefined,
      maxNewTokens: Math.min(asked, s.maxNewTokens),
      enableThinking: this.options.enableThinking,
    });
    const temperature = s.obeyRequest ? (req.temperature ?? s.temperature) : s.temperature;
    const topP = s.obeyRequest ? (req.top_p ?? s.topP) : s.topP;
    const n = req.n ?? 1;
    const stops = req.stop == null ? [] : typeof req.stop === 'string' ? [req.stop] : req.stop;
    const wantLogprobs = chat ? chat.logprobs === true : text!.logprobs != null;
    const topLogprobs = !wantLogprobs ? 0 : chat ? (chat.top_logprobs ?? 0) : (text!.logprobs ?? 0);

    await this.slots.acquire();
    let rows: SampledCompletion[];
    try {
      rows = await Promise.all(
        Array.from({ length: n }, () =>
          this.batcher.submit({ policyId: policy.id, prompt: rendered.ids, maxNewTokens: rendered.maxNewTokens, temperature, topP, topLogprobs }),
        ),
      );
    } finally {
      this.slots.release();
    }
    if (log?.finished) throw new EndpointError(404, `episode "${log.urlId}" is finished (its batch ended)`, 'episode_finished');

    const choices: ChoiceOut[] = [];
    const samples: SampledMember[] = [];
    for (const row of rows) {
      const cut = cutAtStop(row, stops, (ids) => policies.decode(ids));
      samples.push({
        policyId: policy.id,
        policyVersion: policy.version,
        promptTokens: rendered.ids,
        outputTokens: cut.ids,
        logp: cut.logp,
        stopReason: cut.stopReason,
      });
      choices.push({
        text: cut.text,
        finishReason: cut.stopReason === 'length' ? 'length' : 'stop',
        tokens: wantLogprobs
          ? cut.ids.map((id, i) => ({
              text: renderer.tokenText(policies, id),
              logprob: cut.logp[i],
              top: (cut.top?.[i] ?? []).map((a) => ({ text: renderer.tokenText(policies, a.id), logprob: a.logp })),
            }))
          : undefined,
      });
    }
    let eventName: string | null = null;
    if (log) {
      eventName = log.record({
        role: role.name,
        policyRole: role.policyRole,
        tag,
        prompt: rendered.text,
        requestedTemperature: req.temperature ?? null,
        choices: choices.map((c, i) => ({ output: c.text, sample: samples[i] })),
      });
    }
    const meta: ResponseMeta = {
      id: `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-srpo${++this.counter}`,
      model: req.model,
      created: now(),
      promptTokens: rendered.ids.length,
      completionTokens: samples.reduce((a, x) => a + x.outputTokens.length, 0),
    };
    const headers: Record<string, string> = {};
    if (eventName !== null) headers['X-SRPO-Event-Name'] = eventName;
    if (!s.obeyRequest)
      headers['X-SRPO-Sampling'] = `run settings: temperature ${s.temperature}, top_p ${s.topP} (a request's temperature and top_p are recorded, not obeyed)`;
    this.stats.requests++;
    this.stats.latencyMs.push(performance.now() - t0);
    const includeUsage = req.stream_options?.include_usage === true;
    if (req.stream) {
      const chunks = chat ? chatCompletionChunks(meta, choices, includeUsage) : textCompletionChunks(meta, choices, text!.logprobs ?? null, includeUsage);
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive', ...headers });
      for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
      res.end('data: [DONE]\n\n');
      return;
    }
    sendJson(res, 200, chat ? chatCompletion(meta, choices) : textCompletion(meta, choices, text!.logprobs ?? null), headers);
  }
}

/**
 * A sampled row cut at the first stop string: the shortest prefix of its ids whose text contains
 * one (those ids are what is recorded; a prefix of a sample is a sample), its text up to the stop.
 * The alternatives (`top`) are cut with the ids.
 */
export function cutAtStop(row: SampledCompletion, stops: readonly string[], decode: (ids: number[]) => string): SampledCompletion & { text: string } {
  const full = decode(row.ids);
  const first = (t: string): number => Math.min(...stops.map((s) => t.indexOf(s)).filter((i) => i >= 0), Infinity);
  const prefix = (k: number, text: string): SampledCompletion & { text: string } => ({
    ids: row.ids.slice(0, k),
    logp: row.logp.slice(0, k),
    ...(row.top ? { top: row.top.slice(0, k) } : {}),
    text,
    stopReason: 'stop',
  });
  if (stops.length === 0 || first(full) === Infinity) return { ...row, text: full };
  for (let k = 1; k <= row.ids.length; k++) {
    const t = decode(row.ids.slice(0, k));
    const at = first(t);
    if (at !== Infinity) return prefix(k, t.slice(0, at));
  }
  return prefix(row.ids.length, full.slice(0, first(full)));
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Reads (and discards) a body nobody needs, so the answer is not cut off mid-upload. */
function drain(req: IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    req.on('data', () => {});
    req.on('end', resolve);
    req.on('error', () => resolve());
    req.on('close', () => resolve());
  });
}

/** The body as JSON: 400 past `limit` bytes or when it does not parse. */
function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) over = true;
      else parts.push(chunk);
    });
    req.on('error', (err) => reject(new EndpointError(400, `could not read the request body: ${err.message}`)));
    req.on('end', () => {
      if (over) return reject(new EndpointError(400, `the request body is ${size} bytes, over the limit of ${limit} bytes`, 'body_too_large'));
      try {
        resolve(JSON.parse(Buffer.concat(parts).toString('utf8')));
      } catch {
        reject(new EndpointError(400, 'the request body is not valid JSON', 'malformed_json'));
      }
    });
  });
}
