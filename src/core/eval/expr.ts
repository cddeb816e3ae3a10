/**
 * A small evaluator for normalised LaTeX answer expressions (`3\sqrt{13}`, `\frac{11+9a}{20}`,
 * `x^5-x^4+x^3`, `2\pi`, `6-5i`): enough to decide numeric and cheap symbolic equality by
 * evaluating both sides at the same seeded random points.
 *
 * Not a computer algebra system: no simplification, no `\pm`, no subscripts, no factorials;
 * anything it does not understand makes `compileExpression` return null (never throws), and
 * the grader then falls back to text comparison. `i` and `e` are plain variables, so complex
 * numbers compare as polynomials in `i` (fine for answers written `a+bi`). Words of three or
 * more letters are refused, so `\text{Evelyn}` never equals a permutation of its letters.
 * Tested through test/core/eval/grade.test.ts and gradeBudget.test.ts.
 */
import { mulberry32 } from '../util/random';

/** Most tokens an expression may have before we refuse to evaluate it (time bound). */
export const MAX_EXPR_TOKENS = 400;
const MAX_DEPTH = 60;

type Tok = { t: 'num'; v: number } | { t: 'var'; name: string } | { t: 'cmd'; name: string } | { t: 'op'; v: string };

export type Evaluate = (env: Readonly<Record<string, number>>) => number;

export interface CompiledExpression {
  evaluate: Evaluate;
  /** Single-letter variables the expression mentions, sorted. */
  vars: string[];
  /** Tokens: the cost of one `evaluate`, in the grader's operation count. */
  size: number;
}

const FUNCTIONS: Record<string, (x: number) => number> = {
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  cot: (x) => 1 / Math.tan(x),
  sec: (x) => 1 / Math.cos(x),
  csc: (x) => 1 / Math.sin(x),
  arcsin: Math.asin,
  arccos: Math.acos,
  arctan: Math.atan,
  ln: Math.log,
  log: Math.log, // the base only matters if one side writes log and the other ln: consistent here
  exp: Math.exp,
};

const CONSTANTS: Record<string, number> = { pi: Math.PI };
const MUL_CMDS = new Set(['cdot', 'times']);

function tokenize(s: string): Tok[] | null {
  const toks: Tok[] = [];
  let i = 0;
  while (i < s.length) {
    if (toks.length > MAX_EXPR_TOKENS) return null;
    const ch = s[i];
    if (ch === ' ') {
      i++;
      continue;
    }
    if (/[0-9.]/.test(ch)) {
      const m = /^(\d+\.?\d*|\.\d+)/.exec(s.slice(i));
      if (!m) return null;
      toks.push({ t: 'num', v: Number(m[0]) });
      i += m[0].length;
      continue;
    }
    if (ch === '\\') {
      const m = /^\\([a-zA-Z]+)/.exec(s.slice(i));
      if (!m) return null;
      toks.push({ t: 'cmd', name: m[1] });
      i += m[0].length;
      continue;
    }
    if (/[a-zA-Z]/.test(ch)) {
      const m = /^[a-zA-Z]+/.exec(s.slice(i))!;
      if (m[0].length >= 3) return null; // a word, not a product of variables
      for (const c of m[0]) toks.push({ t: 'var', name: c });
      i += m[0].length;
      continue;
    }
    if ('+-*/^(){}'.includes(ch)) {
      toks.push({ t: 'op', v: ch });
      i++;
      continue;
    }
    return null;
  }
  return toks;
}

class Parser {
  private pos = 0;
  private depth = 0;
  readonly vars = new Set<string>();
  constructor(private readonly toks: Tok[]) {}

  parseAll(): Evaluate {
    const e = this.expr();
    if (this.pos !== this.toks.length) throw new Error('trailing tokens');
    return e;
  }

  private peek(): Tok | undefined {
    return this.toks[this.pos];
  }
  private isOp(v: string): boolean {
    const t = this.peek();
    return t !== undefined && t.t === 'op' && t.v === v;
  }
  private expectOp(v: string): void {
    if (!this.isOp(v)) throw new Error(`expected ${v}`);
    this.pos++;
  }
  private enter(): void {
    if (++this.depth > MAX_DEPTH) throw new Error('too deep');
  }

  private expr(): Evaluate {
    this.enter();
    let left = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const op = (this.toks[this.pos++] as { v: string }).v;
      const a = left;
      const b = this.term();
      left = op === '+' ? (env) => a(env) + b(env) : (env) => a(env) - b(env);
    }
    this.depth--;
    return left;
  }

  private startsAtom(): boolean {
    const t = this.peek();
    if (!t) return false;
    if (t.t === 'num' || t.t === 'var') return true;
    if (t.t === 'op') return t.v === '(' || t.v === '{';
    return !MUL_CMDS.has(t.name) && t.name !== 'div';
  }

  private term(): Evaluate {
    let left = this.unary();
    for (;;) {
      const t = this.peek();
      let op: '*' | '/' | null = null;
      if (t?.t === 'op' && (t.v === '*' || t.v === '/')) op = t.v;
      else if (t?.t === 'cmd' && MUL_CMDS.has(t.name)) op = '*';
      else if (t?.t === 'cmd' && t.name === 'div') op = '/';
      if (op) this.pos++;
      else if (this.startsAtom()) op = '*';
      else break;
      const a = left;
      const b = this.unary();
      left = op === '*' ? (env) => a(env) * b(env) : (env) => a(env) / b(env);
    }
    return left;
  }

  private unary(): Evaluate {
    if (this.isOp('-')) {
      this.pos++;
      const a = this.unary();
      return (env) => -a(env);
    }
    if (this.isOp('+')) {
      this.pos++;
      return this.unary();
    }
    return this.power();
  }

  private power(): Evaluate {
    const base = this.atom();
    if (!this.isOp('^')) return base;
    this.pos++;
    const exp = this.powerArg();
    return (env) => Math.pow(base(env), exp(env));
  }

  /** The exponent: a brace group, or one atom (with an optional sign), right-associative. */
  private powerArg(): Evaluate {
    if (this.isOp('-')) {
      this.pos++;
      const a = this.powerArg();
      return (env) => -a(env);
    }
    const t = this.peek();
    if (t?.t === 'num' && Number.isInteger(t.v) && t.v >= 10) {
      // `x^23` in LaTeX is x^2 * 3; keep only the first digit as the exponent.
      this.pos++;
      const s = String(t.v);
      const head = Number(s[0]);
      const tail = Number(s.slice(1));
      this.toks.splice(this.pos, 0, { t: 'num', v: tail });
      return () => head;
    }
    return this.power();
  }

  private group(): Evaluate {
    this.enter();
    this.expectOp('{');
    const e = this.expr();
    this.expectOp('}');
    this.depth--;
    return e;
  }

  private atom(): Evaluate {
    const t = this.peek();
    if (!t) throw new Error('unexpected end');
    this.pos++;
    if (t.t === 'num') {
      const v = t.v;
      return () => v;
    }
    if (t.t === 'var') {
      const name = t.name;
      this.vars.add(name);
      return (env) => env[name] ?? NaN;
    }
    if (t.t === 'op') {
      if (t.v === '(' || t.v === '{') {
        this.enter();
        const e = this.expr();
        this.expectOp(t.v === '(' ? ')' : '}');
        this.depth--;
        return e;
      }
      throw new Error(`unexpected ${t.v}`);
    }
    const name = t.name;
    if (name === 'frac') {
      const a = this.group();
      const b = this.group();
      return (env) => a(env) / b(env);
    }
    if (name === 'sqrt') {
      const a = this.group();
      return (env) => Math.sqrt(a(env));
    }
    if (Object.hasOwn(CONSTANTS, name)) {
      const v = CONSTANTS[name];
      return () => v;
    }
    if (Object.hasOwn(FUNCTIONS, name)) {
      const f = FUNCTIONS[name];
      let p: Evaluate | null = null;
      if (this.isOp('^')) {
        this.pos++;
        p = this.powerArg();
      }
      const a = this.power();
      return p ? (env) => Math.pow(f(a(env)), p(env)) : (env) => f(a(env));
    }
    throw new Error(`unknown command \\${name}`);
  }
}

/** Compile a normalised answer into an evaluator, or null if it is not a plain expression. */
export function compileExpression(s: string): CompiledExpression | null {
  if (s.length === 0 || s.length > 1_000) return null;
  const toks = tokenize(s);
  if (!toks || toks.length === 0 || toks.length > MAX_EXPR_TOKENS) return null;
  try {
    const p = new Parser(toks);
    const evaluate = p.parseAll();
    return { evaluate, vars: [...p.vars].sort(), size: toks.length };
  } catch {
    return null;
  }
}

/** Numbers equal within a relative tolerance (absolute 1e-12 near zero). */
export function closeEnough(a: number, b: number, relTol = 1e-6): boolean {
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  // Relative, with an absolute floor only at float-residue scale: 0.0000672 != 0.0000673.
  return Math.abs(a - b) <= Math.max(relTol * Math.max(Math.abs(a), Math.abs(b)), 1e-12);
}

/**
 * Numbers equal as answers: two safe integers exactly (a relative 1e-6 would take 3986730 for
 * 3986729), anything else within `relTol` (closeEnough). An integer that came out of float
 * arithmetic inexactly (`(\sqrt{2})^2` = 2.0000000000000004) is not an integer here, so it still
 * gets the tolerance.
 */
export function numbersEqual(a: number, b: number, relTol = 1e-6): boolean {
  if (Number.isSafeInteger(a) && Number.isSafeInteger(b)) return a === b;
  return closeEnough(a, b, relTol);
}

/** Deterministic sample points in [0.3, 2.7] for symbolic comparison (no Math.random). */
export function samplePoints(vars: readonly string[], count: number, seed = 12345): Record<string, number>[] {
  const next = mulberry32(seed);
  const points: Record<string, number>[] = [];
  for (let i = 0; i < count; i++) {
    const env: Record<string, number> = {};
    for (const v of vars) env[v] = 0.3 + 2.4 * next();
    points.push(env);
  }
  return points;
}
