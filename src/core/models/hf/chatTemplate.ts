/**
 * A chat template rendered under limits, so a template that loops, or builds a huge string or
 * list, fails in seconds with an error naming its file instead of hanging the process or ending
 * it with a V8 out-of-memory abort. The template language is @huggingface/jinja's (its parser and
 * interpreter); this file only meters the interpreter, it is not a template engine.
 *
 * How it meters: `MeteredInterpreter` overrides the library's public `evaluate`, which the
 * interpreter calls for every node it evaluates, and charges a budget of steps:
 * - one step per node evaluated;
 * - a for-loop's iterations, charged when its iterable has been evaluated and before the loop
 *   runs (an empty loop body evaluates no node, so counting nodes alone would miss it), each
 *   `LOOP_ITERATION_STEPS` (the library builds a scope and a `loop` object per iteration: about
 *   eight nodes' work);
 * - the length of every list a node creates (concatenation, slices, filters, calls), so doubling
 *   a list in a loop runs out of steps, not memory;
 * - `range(n)` is the one global replaced: it charges its n items before the list is built
 *   (the library's own `range(1e9)` builds a billion-item list and aborts V8).
 * Characters are metered too: every string a node yields counts toward the characters the render
 * produces (text nested in blocks counts once per level, a conservative over-count) and no single
 * string may exceed the output limit. Every 1024 steps the clock is read against a deadline.
 * Limits, and why they are far above any real template's needs, are in `TEMPLATE_LIMITS`.
 *
 * Not bounded before the fact: one native string operation (a filter such as `center(n)`) may
 * build a string up to V8's own limit (~512 Mi characters, a clean RangeError past it) before the
 * check after that node refuses it.
 *
 * Everything else is the library's `Template.render`: the same globals (`raise_exception`,
 * `strftime_now`, `true`/`false`/`none` in both spellings), variables set the same way.
 * Tests: test/core/models/hf/chatTemplate.test.ts (loops, huge outputs, doubling lists, the
 * time limit; renderings equal to the library's).
 */
import { Environment, Interpreter, Template } from '@huggingface/jinja';

/** The limits of one render. Real chat templates (Qwen3, Llama 3.x with tools) need a few thousand steps and characters a few times their output. */
export interface TemplateLimits {
  /**
   * Nodes evaluated + loop iterations (8 each) + items of lists created. 1,000,000: Qwen3's
   * template with tools needs under 1,000, a 1,000-message conversation under 100,000.
   */
  maxSteps: number;
  /** Longest string a template may produce, the rendered prompt included. 8 Mi characters: far past any context window (~2M tokens). */
  maxOutputChars: number;
  /** Characters of every string all nodes yield together (nesting counted per level). 32 Mi characters. */
  maxProducedChars: number;
  /** Wall-clock limit of one render, milliseconds. 3000: a real render takes about a millisecond. */
  maxMillis: number;
}

export const TEMPLATE_LIMITS: Readonly<TemplateLimits> = Object.freeze({
  maxSteps: 1_000_000,
  maxOutputChars: 8 * 1024 * 1024,
  maxProducedChars: 32 * 1024 * 1024,
  maxMillis: 3000,
});

type Node = Parameters<Interpreter['evaluate']>[0];
type Value = ReturnType<Interpreter['evaluate']>;
type Program = Template['parsed'];

/** A limit of TemplateLimits was reached; the message says which. */
export class TemplateLimitError extends Error {}

/** Steps one for-loop iteration costs (file header). */
export const LOOP_ITERATION_STEPS = 8;

/** How often (in steps) the clock is read. */
const CLOCK_EVERY = 1024;

/** The nodes whose value a for-loop iterates (its iterable, or the list part of `for x in xs if ...`), found once per template. */
function loopIterables(program: Program): Set<unknown> {
  const found = new Set<unknown>();
  const seen = new Set<unknown>();
  const walk = (v: unknown): void => {
    if (v === null || typeof v !== 'object' || seen.has(v)) return;
    seen.add(v);
    if (Array.isArray(v)) {
      for (const x of v) walk(x);
      return;
    }
    const node = v as { type?: unknown; iterable?: { type?: unknown; lhs?: unknown } };
    if (node.type === 'For' && node.iterable) found.add(node.iterable.type === 'SelectExpression' ? node.iterable.lhs : node.iterable);
    for (const x of Object.values(v)) walk(x);
  };
  walk(program);
  return found;
}

/** One render's budget, shared by the interpreter and the metered `range`. */
class RenderBudget {
  steps = 0;
  produced = 0;
  private nextCheck = CLOCK_EVERY;
  private readonly deadline: number;

  constructor(private readonly limits: TemplateLimits) {
    this.deadline = performance.now() + limits.maxMillis;
  }

  /** Adds `n` steps; throws when the steps or the time run out. */
  charge(n: number): void {
    this.steps += n;
    if (this.steps >= this.nextCheck) this.check();
  }

  private check(): void {
    const { maxSteps, maxMillis } = this.limits;
    if (this.steps > maxSteps) {
      throw new TemplateLimitError(
        `the template ran past its limit of ${maxSteps.toLocaleString('en-US')} steps (a loop too long for a prompt, or one that does not end)`,
      );
    }
    if (performance.now() > this.deadline) throw new TemplateLimitError(`the template ran past its time limit of ${maxMillis} ms`);
    this.nextCheck = this.steps + CLOCK_EVERY;
  }

  /** Meters a string a node yielded. */
  chars(n: number): void {
    const { maxOutputChars, maxProducedChars } = this.limits;
    if (n > maxOutputChars) {
      throw new TemplateLimitError(
        `the template built a string of ${n.toLocaleString('en-US')} characters, over its output limit of ${maxOutputChars.toLocaleString('en-US')}`,
      );
    }
    this.produced += n;
    if (this.produced > maxProducedChars) {
      throw new TemplateLimitError(`the template produced more than its limit of ${maxProducedChars.toLocaleString('en-US')} characters in all`);
    }
  }
}

/** The library's interpreter with every evaluated node metered (file header). */
class MeteredInterpreter extends Interpreter {
  constructor(
    env: Environment,
    private readonly budget: RenderBudget,
    private readonly iterables: Set<unknown>,
  ) {
    super(env);
  }

  override evaluate(statement: Node, environment: Environment): Value {
    const budget = this.budget;
    budget.charge(1);
    const value = super.evaluate(statement, environment);
    const v: unknown = value.value;
    if (typeof v === 'string') budget.chars(v.length);
    else if (Array.isArray(v)) {
      // Lists a node looks up (a variable, an attribute) already exist; lists it makes are charged.
      const type = statement?.type;
      if (type !== 'Identifier' && type !== 'MemberExpression') budget.charge(v.length);
    }
    if (this.iterables.has(statement)) budget.charge(LOOP_ITERATION_STEPS * (Array.isArray(v) ? v.length : v instanceof Map ? v.size : 0));
    return value;
  }
}

/** Python's range(start, stop, step) over integers, its items charged before the list is built. */
function meteredRange(budget: RenderBudget): (...args: unknown[]) => number[] {
  return (...args) => {
    if (args.length < 1 || args.length > 3 || !args.every((a) => typeof a === 'number' && Number.isFinite(a))) {
      throw new Error('range() takes 1 to 3 finite numbers');
    }
    const [start, stop, step] = (args.length === 1 ? [0, args[0], 1] : [args[0], args[1], args[2] ?? 1]) as [number, number, number];
    if (step === 0) throw new Error('range() step must not be zero');
    const count = Math.max(0, Math.ceil((stop - start) / step));
    budget.charge(count);
    const out = new Array<number>(count);
    for (let i = 0; i < count; i++) out[i] = start + i * step;
    return out;
  };
}

/** The library's `strftime_now`, called through a template of its own (no loops: nothing to meter). */
const LIBRARY_STRFTIME = new Template('{{ strftime_now(f) }}');
const strftimeNow = (format: unknown): string => LIBRARY_STRFTIME.render({ f: format });

/** A parsed chat template and the file it came from; `render` applies the limits. */
export class ChatTemplate {
  private readonly program: Program;
  private readonly iterables: Set<unknown>;

  constructor(
    readonly source: string,
    /** The file the template came from, named in every error. */
    readonly file: string,
    private readonly limits: TemplateLimits = TEMPLATE_LIMITS,
  ) {
    try {
      this.program = new Template(source).parsed;
    } catch (err) {
      throw new Error(`${file}: the chat template does not parse: ${(err as Error).message}`);
    }
    this.iterables = loopIterables(this.program);
  }

  /** Renders with `vars` as the template's variables; any failure (a limit included) is an error naming the file. */
  render(vars: Record<string, unknown>): string {
    const budget = new RenderBudget(this.limits);
    const env = new Environment();
    const globals: Record<string, unknown> = {
      false: false,
      true: true,
      none: null,
      False: false,
      True: true,
      None: null,
      raise_exception: (message: unknown) => {
        throw new Error(String(message));
      },
      range: meteredRange(budget),
      strftime_now: strftimeNow,
    };
    try {
      for (const [k, v] of Object.entries(globals)) env.set(k, v);
      for (const [k, v] of Object.entries(vars)) env.set(k, v);
      const out = new MeteredInterpreter(env, budget, this.iterables).run(this.program).value;
      if (typeof out !== 'string') throw new Error(`the template yielded ${typeof out}, not text`);
      return out;
    } catch (err) {
      throw new Error(`${this.file}: rendering the chat template failed: ${(err as Error).message}`, { cause: err });
    }
  }
}
