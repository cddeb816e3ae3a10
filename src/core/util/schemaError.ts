/**
 * Turns a zod error into readable text naming, for each problem, the field path, the value that
 * was given and what is allowed, in plain words rather than zod's (`field "seed" = "abc": must be
 * a whole number from 0 to 4294967295`, not `Invalid input: expected number, received string`).
 * One problem per field: zod can report one field twice (a union's branches), a person fixes it
 * once. Shared by every schema boundary of the core and the API's validateConfig; `schemaError`
 * throws both at once (FieldProblemsError: the text, and the problems as data).
 *
 * Not here: cross-field rules (src/core/config/validateRunConfig.ts).
 * Tests: test/core/config/crossField.test.ts ("human error text").
 */
import type { z } from 'zod';

type Issue = z.core.$ZodIssue;

const KIND_WORDS: Record<string, string> = { string: 'text', object: 'an object', boolean: 'true or false', number: 'a number' };
const kindOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'a list' : (KIND_WORDS[typeof v] ?? typeof v));
/** zod's `expected` type names in words. */
const EXPECTED_WORDS: Record<string, string> = {
  int: 'a whole number',
  number: 'a number',
  string: 'text',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
};
const num = (x: unknown): string => (typeof x === 'bigint' ? x.toString() : String(x));

/** What the field must be, from one issue's code (a registry keyed by zod's issue codes). */
const SAYS: { [C in Issue['code']]?: (issue: Extract<Issue, { code: C }>, value: unknown) => string } = {
  invalid_type: (i, v) => {
    const expected = EXPECTED_WORDS[String(i.expected)] ?? String(i.expected);
    if (v === undefined) return `is required (${expected})`;
    if (typeof v === 'number' && i.expected === 'int') return `must be a whole number (got ${v})`;
    return `must be ${expected}, not ${kindOf(v)}`;
  },
  too_small: (i) => {
    if (i.origin === 'array' || i.origin === 'set') return `needs at least ${num(i.minimum)} entr${Number(i.minimum) === 1 ? 'y' : 'ies'}`;
    if (i.origin === 'string') return Number(i.minimum) === 1 ? 'must not be empty' : `must be at least ${num(i.minimum)} characters`;
    return i.inclusive ? `must be at least ${num(i.minimum)}` : `must be greater than ${num(i.minimum)}`;
  },
  too_big: (i) => {
    if (i.origin === 'array' || i.origin === 'set') return `allows at most ${num(i.maximum)} entries`;
    if (i.origin === 'string') return `must be at most ${num(i.maximum)} characters`;
    return i.inclusive ? `must be at most ${num(i.maximum)}` : `must be less than ${num(i.maximum)}`;
  },
  invalid_value: (i) => `must be one of ${i.values.map((x) => JSON.stringify(x)).join(', ')}`,
  not_multiple_of: (i) => `must be a multiple of ${num(i.divisor)}`,
  invalid_union: () => 'is none of the accepted forms',
  invalid_format: (i) => `is not a valid ${i.format}`,
};

/** One issue as `must be ...` text (zod's own message where no plain wording is known, e.g. custom checks). */
export function issueText(issue: Issue, value: unknown): string {
  const say = SAYS[issue.code] as ((i: Issue, v: unknown) => string) | undefined;
  return say ? say(issue, value) : issue.message;
}

/** A field's problems, one per field path (the first issue of a path wins), in plain words. */
export function schemaProblems(error: z.ZodError, input: unknown): { path: string; message: string; value: unknown; unknown?: true }[] {
  const out: { path: string; message: string; value: unknown; unknown?: true }[] = [];
  const seen = new Set<string>();
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) {
        const p = [...issue.path.map(String), k].join('.');
        if (!seen.has(p)) out.push({ path: p, message: 'is not a field of this config (a typo?)', value: undefined, unknown: true });
        seen.add(p);
      }
      continue;
    }
    const p = issue.path.map(String).join('.');
    if (seen.has(p)) continue;
    seen.add(p);
    const value = valueAt(input, issue.path);
    out.push({ path: p, message: issueText(issue, value), value });
  }
  return out;
}

/** One refused field: its dotted path and what is wrong, in words (the path is not repeated in the sentence). */
export interface FieldProblem {
  path: string;
  message: string;
}

/**
 * An input refused field by field. `message` is the one-line text a log or the CLI prints;
 * `problems` carries the same refusals as data, so a form (the API's validateConfig) never parses
 * the text back. The class name is left as Error's: printed errors read as before.
 */
export class FieldProblemsError extends Error {
  constructor(
    message: string,
    readonly problems: readonly FieldProblem[],
  ) {
    super(message);
  }
}

/** formatSchemaError's text, with schemaProblems' paths and sentences attached. */
export function schemaError(what: string, error: z.ZodError, input: unknown): FieldProblemsError {
  return new FieldProblemsError(
    formatSchemaError(what, error, input),
    schemaProblems(error, input).map(({ path, message }) => ({ path, message })),
  );
}

export function formatSchemaError(what: string, error: z.ZodError, input: unknown): string {
  const lines = schemaProblems(error, input).map(({ path, message, value, unknown }) => {
    if (unknown) return `unknown field "${path}"`;
    const shown = value === undefined ? 'missing' : JSON.stringify(value);
    return `field "${path || '(root)'}" = ${shown}: ${message}`;
  });
  return `${what}: ${lines.join('; ')}`;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = input;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}
