/**
 * Answer graders: `gradeMath` (last boxed answer against a gold answer: exact after
 * normalisation, numeric with tolerance, structural for tuples / intervals / sets / matrices,
 * symbolic by evaluation at seeded points) and `gradeQA` (last `<answer>` tag against gold
 * aliases: SQuAD exact match and token F1).
 *
 * Not here: how an answer is normalised (latex.ts) or evaluated (expr.ts); rewards (the
 * workflows turn grades into team rewards). Every function here is total: no input makes it
 * throw, and each comparison stops after a count of operations (`maxOperations`: characters
 * scanned, structures compared, tokens evaluated at one point), counting as "not equal" when it
 * runs out. A count, not a clock: the same pair always gets the same grade however loaded the
 * machine is, so rewards (and exact resume) never depend on timing. Integers compare exactly
 * (3986730 is not 3986729); other numbers within a relative tolerance.
 * Tested by test/core/eval/grade.test.ts, including agreement on MATH500 (../shared/data), and
 * gradeBudget.test.ts (the same verdict under a jumping clock; exact integers).
 */
import { closeEnough, compileExpression, numbersEqual, samplePoints } from './expr';
import { MAX_ANSWER_CHARS, extractLastBoxed, goldAnswerText, matchBraces, normalizeMathAnswer } from './latex';

export interface MathGrade {
  /** The response's last boxed answer equals the gold answer. */
  correct: boolean;
  /** The last boxed answer as written (trimmed), or null when the response has none. */
  extracted: string | null;
}

export interface MathGradeOptions {
  /**
   * Work bound for one comparison, in operations (a character parsed, a structure compared, a
   * token evaluated at one sample point); running out counts as not equal. Default
   * DEFAULT_MAX_OPERATIONS.
   */
  maxOperations?: number;
  /** Relative tolerance of numeric comparison of non-integers. Default 1e-6. */
  relTol?: number;
}

/**
 * Default work bound of one comparison. Measured: the costliest MATH500 pair (solution box,
 * respelled answer or another row's answer against the gold) needs under 100 operations; a set
 * of 64 rational functions against its reversed respelling needs ~215k (~9 ms on one idle core,
 * ~24M operations/s), so 1M bounds a comparison at about 40 ms of one idle core, and a loaded
 * machine only takes longer, never grades differently.
 */
export const DEFAULT_MAX_OPERATIONS = 1_000_000;

/** Grade a math response: the last `\boxed{}` / `\fbox{}` / `\boxed X` against `gold`. */
export function gradeMath(response: string, gold: string | number, options: MathGradeOptions = {}): MathGrade {
  const extracted = typeof response === 'string' ? extractLastBoxed(response) : null;
  if (extracted === null) return { correct: false, extracted: null };
  return { correct: mathAnswersEqual(extracted, goldAnswerText(gold), options), extracted };
}

/** Whether two answer strings (not whole responses) are mathematically the same answer. */
export function mathAnswersEqual(answer: string, gold: string, options: MathGradeOptions = {}): boolean {
  const ctx: Ctx = { opsLeft: options.maxOperations ?? DEFAULT_MAX_OPERATIONS, relTol: options.relTol ?? 1e-6 };
  try {
    if (answer.trim() === gold.trim()) return true;
    const a = normalizeMathAnswer(answer);
    const b = normalizeMathAnswer(gold);
    if (a === '' || b === '') return false;
    return structuresEqual(a, b, ctx, 0);
  } catch {
    return false; // defensive: nothing above should throw, but a grader must never take a run down
  }
}

interface Ctx {
  /** Operations left before the comparison counts as not equal. */
  opsLeft: number;
  relTol: number;
}

/** Spends `n` operations; false once the budget is overdrawn (and on every later call). */
function spend(ctx: Ctx, n: number): boolean {
  ctx.opsLeft -= n;
  return ctx.opsLeft >= 0;
}

type Structure =
  | { kind: 'scalar'; text: string }
  | { kind: 'ordered'; open: string; close: string; items: string[] } // tuple, interval, matrix, union
  | { kind: 'unordered'; items: string[] }; // bare list, set, expanded \pm

/** Split at top-level occurrences of `sep` (outside (), [], {}). */
function splitTopLevel(s: string, sep: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    if (depth === 0 && s.startsWith(sep, i)) {
      parts.push(s.slice(start, i));
      start = i + sep.length;
      i += sep.length - 1;
      continue;
    }
    const ch = s[i];
    if (ch === '\\') {
      const next = s[i + 1];
      if (next === '{') depth++; // `\{` and `\}` are brackets too
      else if (next === '}') depth--;
      // skip the escaped character or the whole command name
      const m = /^\\[a-zA-Z]*/.exec(s.slice(i, i + 40));
      i += m && m[0].length > 1 ? m[0].length - 1 : 1;
      continue;
    }
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') depth--;
  }
  parts.push(s.slice(start));
  return parts;
}

/** True when the bracket opening at 0 closes exactly at the last character. */
function wrapsWhole(s: string): boolean {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') {
      depth--;
      if (depth === 0 && i < s.length - 1) return false;
    }
  }
  return depth === 0;
}

function expandPm(items: string[]): string[] {
  const out: string[] = [];
  for (const it of items) {
    const parts = splitTopLevel(it, '\\pm');
    if (parts.length === 2 && parts[0] !== '') out.push(`${parts[0]}+${parts[1]}`, `${parts[0]}-${parts[1]}`);
    else out.push(it);
  }
  return out;
}

function parseStructure(s: string): Structure {
  const matrix = /^\\begin\{([pbvB]?matrix|array)\}(?:\{[^}]*\})?(.*)\\end\{\1\}$/.exec(s);
  if (matrix) {
    const rows = matrix[2].split('\\\\').filter((r) => r !== '');
    const cells = rows.map((r) => r.split('&'));
    const shape = `${cells.length}x${cells[0]?.length ?? 0}`;
    return { kind: 'ordered', open: `matrix${shape}`, close: '', items: cells.flat() };
  }
  if (s.startsWith('\\{') && s.endsWith('\\}')) {
    const inner = s.slice(2, -2);
    return { kind: 'unordered', items: expandPm(splitTopLevel(inner, ',')) };
  }
  const union = splitTopLevel(s, '\\cup');
  if (union.length > 1) return { kind: 'ordered', open: 'union', close: '', items: union };
  if (/^[([]/.test(s) && /[)\]]$/.test(s) && wrapsWhole(s)) {
    const items = splitTopLevel(s.slice(1, -1), ',');
    if (items.length > 1) return { kind: 'ordered', open: s[0], close: s[s.length - 1], items };
  }
  const list = splitTopLevel(s, ',');
  if (list.length > 1) return { kind: 'unordered', items: expandPm(list) };
  const pm = expandPm([s]);
  if (pm.length > 1) return { kind: 'unordered', items: pm };
  return { kind: 'scalar', text: s };
}

function structuresEqual(a: string, b: string, ctx: Ctx, depth: number): boolean {
  if (a === b) return true;
  if (depth > 4 || !spend(ctx, 1 + a.length + b.length)) return false; // parseStructure scans both
  const sa = parseStructure(a);
  const sb = parseStructure(b);
  if (sa.kind === 'scalar' && sb.kind === 'scalar') return scalarsEqual(sa.text, sb.text, ctx);
  if (sa.kind === 'ordered' && sb.kind === 'ordered') {
    if (sa.open !== sb.open || sa.close !== sb.close || sa.items.length !== sb.items.length) return false;
    return sa.items.every((x, i) => structuresEqual(x, sb.items[i], ctx, depth + 1));
  }
  if (sa.kind === 'unordered' && sb.kind === 'unordered') {
    if (sa.items.length !== sb.items.length || sa.items.length > 64) return false;
    const used = new Array<boolean>(sb.items.length).fill(false);
    for (const x of sa.items) {
      const j = sb.items.findIndex((y, k) => !used[k] && structuresEqual(x, y, ctx, depth + 1));
      if (j < 0) return false;
      used[j] = true;
    }
    return true;
  }
  return false;
}

function scalarsEqual(a: string, b: string, ctx: Ctx): boolean {
  if (a === b) return true;
  if (/^[a-zA-Z ]+$/.test(a) && /^[a-zA-Z ]+$/.test(b) && /[a-zA-Z]{2}/.test(a)) {
    return a.toLowerCase() === b.toLowerCase();
  }
  if (a.length > MAX_ANSWER_CHARS || b.length > MAX_ANSWER_CHARS) return false;
  if (!spend(ctx, a.length + b.length)) return false; // compileExpression scans both
  const eqA = a.split('=');
  const eqB = b.split('=');
  if (eqA.length === 2 && eqB.length === 2) return equationsEqual(eqA, eqB, ctx);
  if (eqA.length !== 1 || eqB.length !== 1) return false;
  return expressionsEqual(a, b, ctx);
}

/** Evaluate both at the same seeded points; equal when every point where both are finite agrees. */
function expressionsEqual(a: string, b: string, ctx: Ctx): boolean {
  const ea = compileExpression(a);
  const eb = compileExpression(b);
  if (!ea || !eb) return false;
  if (ea.vars.join() !== eb.vars.join()) return false;
  if (ea.vars.length === 0) return numbersEqual(ea.evaluate({}), eb.evaluate({}), ctx.relTol);
  let valid = 0;
  for (const env of samplePoints(ea.vars, 8)) {
    if (!spend(ctx, ea.size + eb.size)) return false;
    const va = ea.evaluate(env);
    const vb = eb.evaluate(env);
    if (!Number.isFinite(va) && !Number.isFinite(vb)) continue;
    if (!closeEnough(va, vb, ctx.relTol)) return false;
    valid++;
  }
  return valid >= 3;
}

/** `lhs = rhs` equations are equal when (lhs - rhs) agree up to one non-zero constant factor. */
function equationsEqual(a: string[], b: string[], ctx: Ctx): boolean {
  const da = compileExpression(`(${a[0]})-(${a[1]})`);
  const db = compileExpression(`(${b[0]})-(${b[1]})`);
  if (!da || !db || da.vars.join() !== db.vars.join() || da.vars.length === 0) return false;
  let ratio: number | null = null;
  let valid = 0;
  for (const env of samplePoints(da.vars, 8)) {
    if (!spend(ctx, da.size + db.size)) return false;
    const va = da.evaluate(env);
    const vb = db.evaluate(env);
    if (!Number.isFinite(va) || !Number.isFinite(vb) || Math.abs(vb) < 1e-12) continue;
    const r = va / vb;
    if (ratio === null) ratio = r;
    else if (!closeEnough(r, ratio, ctx.relTol)) return false;
    valid++;
  }
  return valid >= 3 && ratio !== null && ratio !== 0;
}

// ---------------------------------------------------------------------------------------------
// Question answering

export interface QAGrade {
  /** 1 when the normalised answer equals a normalised alias, else 0. */
  em: number;
  /** Best token F1 over the aliases, in [0, 1]. */
  f1: number;
  /** Text of the last `<answer>...</answer>` tag (trimmed), or null when there is none. */
  extracted: string | null;
}

/**
 * Content of the last `<answer>` tag. If the last opening tag is never closed the answer is
 * malformed and the result is null (the last tag counts, even when broken).
 */
export function extractLastTag(text: string, tag: string): string | null {
  if (typeof text !== 'string') return null;
  const lower = text.toLowerCase();
  const open = `<${tag}>`;
  const close = `</${tag}>`;
  const at = lower.lastIndexOf(open);
  if (at < 0) return null;
  const end = lower.indexOf(close, at + open.length);
  if (end < 0) return null;
  return text.slice(at + open.length, end).trim();
}

/** SQuAD v1.1 normalisation: lowercase, drop punctuation, drop articles, squeeze whitespace. */
export function normalizeQA(s: string): string {
  return s
    .toLowerCase()
    .replace(/[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~\u2018\u2019\u201c\u201d]/g, '')
    .replace(/\b(a|an|the)\b/g, ' ')
    .split(/\s+/)
    .filter((w) => w !== '')
    .join(' ');
}

/** SQuAD token F1 between two strings (after normalisation). */
export function tokenF1(prediction: string, gold: string): number {
  const p = normalizeQA(prediction)
    .split(' ')
    .filter((w) => w !== '');
  const g = normalizeQA(gold)
    .split(' ')
    .filter((w) => w !== '');
  if (p.length === 0 || g.length === 0) return p.length === g.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const w of g) counts.set(w, (counts.get(w) ?? 0) + 1);
  let common = 0;
  for (const w of p) {
    const c = counts.get(w) ?? 0;
    if (c > 0) {
      common++;
      counts.set(w, c - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / p.length;
  const recall = common / g.length;
  return (2 * precision * recall) / (precision + recall);
}

/** Grade a QA response: the last `<answer>` tag against every alias; EM and F1 are maxima. */
export function gradeQA(response: string, golds: readonly string[] | string): QAGrade {
  const extracted = extractLastTag(response, 'answer');
  if (extracted === null) return { em: 0, f1: 0, extracted: null };
  return { ...scoreQAAnswer(extracted, golds), extracted };
}

/** EM / F1 of an already extracted answer against gold aliases. */
export function scoreQAAnswer(answer: string, golds: readonly string[] | string): { em: number; f1: number } {
  const list = typeof golds === 'string' ? [golds] : golds;
  const na = normalizeQA(answer);
  let em = 0;
  let f1 = 0;
  for (const g of list) {
    if (typeof g !== 'string') continue;
    if (na === normalizeQA(g)) em = 1;
    f1 = Math.max(f1, tokenF1(answer, g));
  }
  return { em, f1 };
}

export { extractLastBoxed, goldAnswerText, matchBraces, normalizeMathAnswer };
