/**
 * The wire format of the external-agent endpoint (docs/EXTERNAL_AGENTS.md): the request bodies it
 * accepts, validated with zod (unknown fields pass, as OpenAI's own server ignores them for
 * clients that send extras), and the response objects it writes, in the shapes of OpenAI's API
 * so the official `openai` clients read them unchanged: `chat.completion`, `chat.completion.chunk`
 * (stream: true, server-sent events), `text_completion`, a model list, and the error envelope
 * `{ error: { message, type, param, code } }`.
 *
 * Log-probs are those of the un-tempered model (log-softmax of its logits over the whole head),
 * whatever the temperature and top_p, as the run records them; `top_logprobs` lists the N most
 * probable real tokens at each position in descending order (the sampled token only when it is
 * among them), computed on the device by the sampler (models/devicePick.ts).
 * Differs from OpenAI's API: `srpo_event` (body) names the active set a call belongs to;
 * `/reward` is ours; a token's `bytes` are the UTF-8 of its decoded text (a token that is part of
 * a multi-byte character decodes to U+FFFD).
 * Pure: no I/O. Tests: test/external/endpoint.test.ts, test/external/topLogprobs.test.ts.
 */
import { z } from 'zod';

/** Largest n (choices per call): one active set holds at most 16 members (workflows/config.ts). */
export const MAX_CHOICES = 16;

/** A tag names an active set; '#' is reserved for untagged calls' names (`solver#0`). */
export const EVENT_TAG = /^[A-Za-z0-9_.:-]{1,64}$/;

const tag = z.string().regex(EVENT_TAG, 'letters, digits and _ . : - only, 1 to 64 characters').describe('The active set this call joins.');

const stop = z
  .union([z.string().min(1), z.array(z.string().min(1)).max(4)])
  .nullish()
  .describe('Up to 4 stop strings.');

/** A message's content: text, or OpenAI's list of content parts of which only text parts are read. */
const content = z
  .union([z.string(), z.array(z.object({ type: z.string(), text: z.string().optional() }).passthrough()), z.null()])
  .optional()
  .describe('Text, or a list of content parts (text parts only).');

export const chatRequestSchema = z
  .object({
    model: z.string().min(1).describe('The role that answers.'),
    messages: z
      .array(z.object({ role: z.string().min(1), content, name: z.string().optional() }).passthrough())
      .min(1)
      .describe('The conversation, rendered by the role policy’s chat template.'),
    max_tokens: z.number().int().min(1).nullish(),
    max_completion_tokens: z.number().int().min(1).nullish(),
    stop,
    n: z.number().int().min(1).max(MAX_CHOICES).nullish(),
    logprobs: z.boolean().nullish(),
    top_logprobs: z.number().int().min(0).max(20).nullish(),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).passthrough().nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().gt(0).max(1).nullish(),
    tools: z.array(z.unknown()).nullish(),
    srpo_event: tag.optional(),
  })
  .passthrough();
export type ChatRequest = z.output<typeof chatRequestSchema>;

export const completionRequestSchema = z
  .object({
    model: z.string().min(1),
    prompt: z.union([z.string(), z.array(z.string()).length(1)]).describe('One prompt (a list of exactly one is accepted).'),
    max_tokens: z.number().int().min(1).nullish(),
    stop,
    n: z.number().int().min(1).max(MAX_CHOICES).nullish(),
    logprobs: z.number().int().min(0).max(5).nullish(),
    echo: z.literal(false).nullish().describe('echo is not supported.'),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).passthrough().nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().gt(0).max(1).nullish(),
    srpo_event: tag.optional(),
  })
  .passthrough();
export type CompletionRequest = z.output<typeof completionRequestSchema>;

/** Rewards are bounded so a typo (a percentage, a log-likelihood) cannot swamp an advantage. */
export const REWARD_LIMIT = 100;
const reward = z.number().min(-REWARD_LIMIT).max(REWARD_LIMIT);

export const rewardRequestSchema = z
  .object({
    reward: reward.optional().describe('The team reward of the episode, [-100, 100].'),
    events: z.record(z.string(), reward).optional().describe('Per-event rewards by tag or untagged name; replace the team reward for those events.'),
    answer: z.string().max(10_000).optional().describe('The final answer (evaluation: graded by the lab against the gold answers).'),
    correct: z.boolean().optional().describe('Whether the episode solved its task (default: reward >= 1).'),
  })
  .strict();
export type RewardRequest = z.output<typeof rewardRequestSchema>;

/** An error the endpoint answers with: HTTP status, OpenAI's error type and code. */
export class EndpointError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'EndpointError';
  }
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'invalid_request_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  500: 'server_error',
  503: 'server_error',
};

export function errorBody(err: EndpointError): { error: { message: string; type: string; param: string | null; code: string | null } } {
  return { error: { message: err.message, type: ERROR_TYPES[err.status] ?? 'server_error', param: err.param, code: err.code } };
}

/** The text of a message's content (text parts joined; other parts ignored). */
export function messageText(c: ChatRequest['messages'][number]['content']): string {
  if (typeof c === 'string') return c;
  if (!c) return '';
  return c
    .filter((p) => p.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text)
    .join('');
}

export type FinishReason = 'stop' | 'length';

/** One sampled choice as the response builders see it. */
export interface ChoiceOut {
  text: string;
  finishReason: FinishReason;
  /**
   * Per generated token: its text, log-prob (nats) and the most probable alternatives at its
   * position (descending; as many as the request's top_logprobs / logprobs, [] for none);
   * present when the request asked for log-probs.
   */
  tokens?: { text: string; logprob: number; top: { text: string; logprob: number }[] }[];
}

export interface ResponseMeta {
  id: string;
  model: string;
  /** Unix seconds. */
  created: number;
  promptTokens: number;
  completionTokens: number;
}

const usage = (m: ResponseMeta) => ({
  prompt_tokens: m.promptTokens,
  completion_tokens: m.completionTokens,
  total_tokens: m.promptTokens + m.completionTokens,
});

const bytesOf = (s: string): number[] => [...Buffer.from(s, 'utf8')];

function chatLogprobs(c: ChoiceOut) {
  if (!c.tokens) return null;
  return {
    content: c.tokens.map((t) => ({
      token: t.text,
      logprob: t.logprob,
      bytes: bytesOf(t.text),
      top_logprobs: t.top.map((a) => ({ token: a.text, logprob: a.logprob, bytes: bytesOf(a.text) })),
    })),
    refusal: null,
  };
}

/** The `chat.completion` object. */
export function chatCompletion(m: ResponseMeta, choices: ChoiceOut[]) {
  return {
    id: m.id,
    object: 'chat.completion' as const,
    created: m.created,
    model: m.model,
    system_fingerprint: null,
    choices: choices.map((c, index) => ({
      index,
      message: { role: 'assistant' as const, content: c.text, refusal: null },
      logprobs: chatLogprobs(c),
      finish_reason: c.finishReason,
    })),
    usage: usage(m),
  };
}

/**
 * The `chat.completion.chunk` events of a streamed answer: per choice the role, then its whole
 * text (the sampler finishes a row before the endpoint answers), then its finish reason; with
 * include_usage a last chunk with no choices and the usage.
 */
export function chatCompletionChunks(m: ResponseMeta, choices: ChoiceOut[], includeUsage: boolean): unknown[] {
  const base = { id: m.id, object: 'chat.completion.chunk' as const, created: m.created, model: m.model, system_fingerprint: null };
  const tail = includeUsage ? { usage: null } : {};
  const out: unknown[] = [];
  choices.forEach((c, index) => {
    out.push({ ...base, choices: [{ index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }], ...tail });
    out.push({ ...base, choices: [{ index, delta: { content: c.text }, logprobs: chatLogprobs(c), finish_reason: null }], ...tail });
    out.push({ ...base, choices: [{ index, delta: {}, logprobs: null, finish_reason: c.finishReason }], ...tail });
  });
  if (includeUsage) out.push({ ...base, choices: [], usage: usage(m) });
  return out;
}

/**
 * A position's alternatives as the legacy completions API writes them, one {token: logprob}
 * dict. Two alternatives that decode to the same text (e.g. two byte-level pieces both shown as
 * U+FFFD) cannot both be keys: the more probable one is kept, so a dict may hold fewer than N.
 */
function topDict(top: readonly { text: string; logprob: number }[]): Record<string, number> {
  const kept = new Map<string, number>();
  for (const a of top) if (!kept.has(a.text)) kept.set(a.text, a.logprob); // descending: the first is the higher
  return Object.fromEntries(kept); // own data properties, so a token named "__proto__" stays a key
}

function textLogprobs(c: ChoiceOut, top: number) {
  if (!c.tokens) return null;
  const offsets: number[] = [];
  let at = 0;
  for (const t of c.tokens) {
    offsets.push(at);
    at += t.text.length;
  }
  return {
    tokens: c.tokens.map((t) => t.text),
    token_logprobs: c.tokens.map((t) => t.logprob),
    top_logprobs: top > 0 ? c.tokens.map((t) => topDict(t.top)) : null,
    text_offset: offsets,
  };
}

/** The `text_completion` object (POST /completions). */
export function textCompletion(m: ResponseMeta, choices: ChoiceOut[], logprobs: number | null) {
  return {
    id: m.id,
    object: 'text_completion' as const,
    created: m.created,
    model: m.model,
    system_fingerprint: null,
    choices: choices.map((c, index) => ({
      text: c.text,
      index,
      logprobs: logprobs === null ? null : textLogprobs(c, logprobs),
      finish_reason: c.finishReason,
    })),
    usage: usage(m),
  };
}

/** Streamed completions: one event per choice with its text and finish reason, then the usage when asked. */
export function textCompletionChunks(m: ResponseMeta, choices: ChoiceOut[], logprobs: number | null, includeUsage: boolean): unknown[] {
  const base = { id: m.id, object: 'text_completion' as const, created: m.created, model: m.model, system_fingerprint: null };
  const out: unknown[] = choices.map((c, index) => ({
    ...base,
    choices: [{ text: c.text, index, logprobs: logprobs === null ? null : textLogprobs(c, logprobs), finish_reason: c.finishReason }],
  }));
  if (includeUsage) out.push({ ...base, choices: [], usage: usage(m) });
  return out;
}

/** GET /models: one entry per role name. */
export function modelList(roles: readonly string[], created: number) {
  return { object: 'list' as const, data: roles.map((id) => ({ id, object: 'model' as const, created, owned_by: 'srpo-lab' })) };
}
