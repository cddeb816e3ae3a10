/**
 * Output parsers of every role (paper appendix B, "output validation"). Each is total: any
 * string (or even a non-string) gives a `ParseResult`, never an exception, and nothing is
 * repaired: a malformed output is recorded invalid with the reason.
 *
 * Rules: answers come from generated text only and the last answer tag (or box) counts; a
 * verifier must emit exactly one recognised verdict tag; a search router emits exactly one
 * `<route>` tag holding STOP or in-range searcher indices (deduplicated, order kept); a
 * searcher emits a closed think block and exactly one non-empty `<search>` tag; an answerer a
 * closed think block and at least one `<answer>` tag. Tested by
 * test/core/workflows/parsers.test.ts (cases and fuzzing).
 */
import { extractLastBoxed, extractLastTag } from '../eval';
import type { ParseResult } from './types';

const MAX_OUTPUT_CHARS = 100_000;

function ok<T>(value: T): ParseResult<T> {
  return { valid: true, value };
}
function fail<T>(error: string): ParseResult<T> {
  return { valid: false, error };
}
function guard(text: unknown): string | null {
  if (typeof text !== 'string') return null;
  return text.length > MAX_OUTPUT_CHARS ? text.slice(0, MAX_OUTPUT_CHARS) : text;
}

/** Contents of every closed `<tag>...</tag>` (case-insensitive), and whether an opening tag is left unclosed. */
export function tagContents(text: string, tag: string): { contents: string[]; unclosed: boolean } {
  const lower = text.toLowerCase();
  const open = `<${tag}>`;
  const close = `</${tag}>`;
  const contents: string[] = [];
  let i = 0;
  for (;;) {
    const at = lower.indexOf(open, i);
    if (at < 0) return { contents, unclosed: false };
    const end = lower.indexOf(close, at + open.length);
    if (end < 0) return { contents, unclosed: true };
    contents.push(text.slice(at + open.length, end).trim());
    i = end + close.length;
  }
}

/** Solver, reviser, aggregator, single (math): the last `\boxed{}` answer. */
export function parseBoxedAnswer(text: unknown): ParseResult<string> {
  const s = guard(text);
  if (s === null) return fail('output is not text');
  const boxed = extractLastBoxed(s);
  return boxed === null ? fail('no complete \\boxed{...} answer at the end') : ok(boxed);
}

/** Exactly one `<tag>` whose content is one of `allowed` (case-insensitive). */
function parseOneOf<T extends string>(text: unknown, tag: string, allowed: readonly T[]): ParseResult<T> {
  const s = guard(text);
  if (s === null) return fail('output is not text');
  const { contents, unclosed } = tagContents(s, tag);
  if (unclosed) return fail(`unclosed <${tag}> tag`);
  if (contents.length === 0) return fail(`no <${tag}> tag`);
  if (contents.length > 1) return fail(`${contents.length} <${tag}> tags; exactly one is allowed`);
  const v = contents[0].toLowerCase() as T;
  return allowed.includes(v) ? ok(v) : fail(`<${tag}> must be one of ${allowed.join(' / ')}, got "${contents[0].slice(0, 40)}"`);
}

export const MATH_VERDICTS = ['accept', 'revise'] as const;
export type MathVerdict = (typeof MATH_VERDICTS)[number];
/** Math verifier: exactly one `<verdict>accept|revise</verdict>`. */
export function parseMathVerdict(text: unknown): ParseResult<MathVerdict> {
  return parseOneOf(text, 'verdict', MATH_VERDICTS);
}

export const EVIDENCE_VERDICTS = ['sufficient', 'insufficient'] as const;
export type EvidenceVerdict = (typeof EVIDENCE_VERDICTS)[number];
/** Search verifier: exactly one `<verdict>sufficient|insufficient</verdict>`. */
export function parseEvidenceVerdict(text: unknown): ParseResult<EvidenceVerdict> {
  return parseOneOf(text, 'verdict', EVIDENCE_VERDICTS);
}

/** Math router: exactly one `<solvers>N</solvers>` with an integer 1 <= N <= maxK. */
export function parseSolverCount(text: unknown, maxK: number): ParseResult<number> {
  const s = guard(text);
  if (s === null) return fail('output is not text');
  const { contents, unclosed } = tagContents(s, 'solvers');
  if (unclosed) return fail('unclosed <solvers> tag');
  if (contents.length !== 1) return fail(contents.length === 0 ? 'no <solvers> tag' : `${contents.length} <solvers> tags; exactly one is allowed`);
  if (!/^\d{1,4}$/.test(contents[0])) return fail(`<solvers> must hold an integer, got "${contents[0].slice(0, 40)}"`);
  const k = Number(contents[0]);
  return k >= 1 && k <= maxK ? ok(k) : fail(`solver count ${k} outside 1..${maxK}`);
}

export type RouteDecision = { stop: true } | { stop: false; agents: number[] };
/**
 * Search router: exactly one `<route>` tag holding STOP or a list of searcher indices in
 * 0..n-1 (separated by commas or spaces; duplicates dropped, first order kept). Anything else,
 * including an empty list, is invalid: never read as STOP, never as "all searchers".
 */
export function parseRoute(text: unknown, n: number): ParseResult<RouteDecision> {
  const s = guard(text);
  if (s === null) return fail('output is not text');
  const { contents, unclosed } = tagContents(s, 'route');
  if (unclosed) return fail('unclosed <route> tag');
  if (contents.length !== 1) return fail(contents.length === 0 ? 'no <route> tag' : `${contents.length} <route> tags; exactly one is allowed`);
  const body = contents[0];
  if (/^stop$/i.test(body)) return ok({ stop: true });
  const tokens = body.length > 400 ? [] : body.split(/\s*,\s*|\s+/);
  if (tokens.length === 0 || !tokens.every((t) => /^\d{1,3}$/.test(t))) {
    return fail(`<route> must be STOP or searcher indices, got "${body.slice(0, 40)}"`);
  }
  const agents: number[] = [];
  for (const tok of tokens) {
    const j = Number(tok);
    if (j >= n) return fail(`searcher index ${j} outside 0..${n - 1}`);
    if (!agents.includes(j)) agents.push(j);
  }
  return ok({ stop: false, agents });
}

function needThink(s: string): string | null {
  const { contents, unclosed } = tagContents(s, 'think');
  if (contents.length === 0) return unclosed ? 'unclosed <think> block' : 'no <think> block';
  return null;
}

/** Searcher: a closed think block and exactly one non-empty `<search>` query. */
export function parseSearchAction(text: unknown): ParseResult<string> {
  const s = guard(text);
  if (s === null) return fail('output is not text');
  const thinkError = needThink(s);
  if (thinkError) return fail(thinkError);
  const { contents, unclosed } = tagContents(s, 'search');
  if (unclosed) return fail('unclosed <search> tag');
  if (contents.length !== 1) return fail(contents.length === 0 ? 'no <search> tag' : `${contents.length} <search> tags; exactly one is allowed`);
  if (!/[\p{L}\p{N}]/u.test(contents[0])) return fail('empty search query');
  return ok(contents[0].slice(0, 500));
}

/** Answerer: a closed think block and an `<answer>` tag; the last answer tag counts. */
export function parseAnswerAction(text: unknown, requireThink = true): ParseResult<string> {
  const s = guard(text);
  if (s === null) return fail('output is not text');
  if (requireThink) {
    const thinkError = needThink(s);
    if (thinkError) return fail(thinkError);
  }
  const answer = extractLastTag(s, 'answer');
  if (answer === null) return fail(s.toLowerCase().includes('<answer>') ? 'the last <answer> tag is not closed' : 'no <answer> tag');
  if (answer === '') return fail('empty answer');
  return ok(answer);
}
