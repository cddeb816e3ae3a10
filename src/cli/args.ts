/**
 * The argument parser of `srpo-lab`: `COMMAND [--opt VALUE] [--flag] [--set key=value ...]`, on
 * node:util's parseArgs (its tokens; `--opt=VALUE` works too). A single-dash argument (`-1`,
 * `-`) is a positional, as written.
 * `--set` values are parsed as JSON when they look like it (numbers, booleans, null, arrays,
 * objects, quoted strings), else kept as strings; a value that looks like JSON but does not parse
 * is an error. `--set` keys are kept as given (dotted paths; `train` applies them with setPath).
 * A key segment or a JSON value key that reaches the prototype chain (`__proto__`, `constructor`,
 * `prototype`: src/shared/inputGuards.ts) is an error naming it: `--set __proto__.x=1` would
 * otherwise write to Object.prototype. Unknown options are errors naming the option and the
 * command's valid ones; so is `--` (nothing here reads past it). An option given twice keeps its
 * last value in `options` and every value in `lists`.
 * Tests: test/cli/objective.test.ts, test/cli/train.test.ts, test/cli/protoKeys.test.ts.
 */
import { parseArgs as nodeParseArgs, type ParseArgsConfig } from 'node:util';
import { assertNoForbiddenKeys, forbiddenKeyMessage, isForbiddenKey } from '../shared/inputGuards';

export interface ParsedArgs {
  command: string | undefined;
  /** The last value of each option. */
  options: Record<string, string>;
  /** Every value of each option, in order (`serve --allow A --allow B`). */
  lists: Record<string, string[]>;
  flags: Set<string>;
  sets: Record<string, unknown> & { algorithm?: string };
  positionals: string[];
}

export function parseArgs(argv: string[], spec: { options: string[]; flags: string[] }): ParsedArgs {
  const [command, ...rest] = argv;
  // `sets` has no prototype to reach, whatever a key is (the keys are also checked below).
  const parsed: ParsedArgs = { command, options: {}, lists: {}, flags: new Set(), sets: Object.create(null) as ParsedArgs['sets'], positionals: [] };
  const options = Object.fromEntries([
    ...spec.options.map((o) => [o, { type: 'string' }] as const),
    ...spec.flags.map((f) => [f, { type: 'boolean' }] as const),
    ['set', { type: 'string', multiple: true }] as const,
  ]) as ParseArgsConfig['options'];
  // Not strict: an option's value is the next argument whatever it looks like (`--name -x`), and
  // the unknown-option and missing-value errors below name the command's valid options.
  const { tokens } = nodeParseArgs({ args: rest, options, allowPositionals: true, strict: false, tokens: true });
  const shortAt = new Set<number>();
  for (const t of tokens) {
    if (t.kind === 'positional') parsed.positionals.push(t.value);
    else if (t.kind === 'option-terminator') throw unknownOption(rest[t.index], command, spec);
    else if (!t.rawName.startsWith('--')) {
      // A single dash is no option here: `-1`, `-abc` are positionals, as written.
      if (!shortAt.has(t.index)) parsed.positionals.push(rest[t.index]);
      shortAt.add(t.index);
    } else if (t.name === 'set') addSet(parsed.sets, t.value);
    else if (spec.flags.includes(t.name)) {
      if (t.value !== undefined) throw new Error(`--${t.name} takes no value, got ${rest[t.index]}`);
      parsed.flags.add(t.name);
    } else if (spec.options.includes(t.name)) {
      if (t.value === undefined) throw new Error(`--${t.name} expects a value`);
      parsed.options[t.name] = t.value;
      (parsed.lists[t.name] ??= []).push(t.value);
    } else throw unknownOption(rest[t.index], command, spec);
  }
  return parsed;
}

/** One `--set key=value`: the key's segments and the value's keys checked against the prototype chain. */
function addSet(sets: ParsedArgs['sets'], kv: string | undefined): void {
  const eq = kv?.indexOf('=') ?? -1;
  if (!kv || eq <= 0) throw new Error(`--set expects key=value, got ${kv ?? 'nothing'}`);
  const key = kv.slice(0, eq);
  const bad = key.split('.').find(isForbiddenKey);
  if (bad !== undefined) throw new Error(forbiddenKeyMessage(bad, `--set ${key}`));
  const value = parseValue(key, kv.slice(eq + 1));
  assertNoForbiddenKeys(value, `--set ${key}`);
  sets[key] = value;
}

function unknownOption(arg: string, command: string | undefined, spec: { options: string[]; flags: string[] }): Error {
  const valid = [...spec.options, ...spec.flags, 'set'].map((o) => `--${o}`).join(', ');
  return new Error(`unknown option ${arg} for "${command}"; valid: ${valid}`);
}

export function parseValue(key: string, v: string): unknown {
  if (/^(-?\d+(\.\d+)?(e[-+]?\d+)?|true|false|null)$/i.test(v)) return JSON.parse(v.toLowerCase());
  if (/^\s*[[{"]/.test(v)) {
    try {
      return JSON.parse(v);
    } catch (err) {
      throw new Error(`--set ${key}: the value looks like JSON but does not parse (${(err as Error).message}): ${v}`);
    }
  }
  return v;
}
