/**
 * A small argument parser for `srpo-lab`: `COMMAND [--opt VALUE] [--flag] [--set key=value ...]`.
 * `--set` values are parsed as JSON when they look like it (numbers, booleans, null, arrays,
 * objects, quoted strings), else kept as strings; a value that looks like JSON but does not parse
 * is an error. `--set` keys are kept as given (dotted paths; `train` applies them with setPath).
 * Unknown options are errors naming the option and the command's valid ones.
 * Tests: test/cli/objective.test.ts, test/cli/train.test.ts.
 */
export interface ParsedArgs {
  command: string | undefined;
  options: Record<string, string>;
  flags: Set<string>;
  sets: Record<string, unknown> & { algorithm?: string };
  positionals: string[];
}

export function parseArgs(argv: string[], spec: { options: string[]; flags: string[] }): ParsedArgs {
  const [command, ...rest] = argv;
  const parsed: ParsedArgs = { command, options: {}, flags: new Set(), sets: {}, positionals: [] };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (!arg.startsWith('--')) {
      parsed.positionals.push(arg);
      continue;
    }
    const name = arg.slice(2);
    if (name === 'set') {
      const kv = rest[++i];
      const eq = kv?.indexOf('=') ?? -1;
      if (!kv || eq <= 0) throw new Error(`--set expects key=value, got ${kv ?? 'nothing'}`);
      parsed.sets[kv.slice(0, eq)] = parseValue(kv.slice(0, eq), kv.slice(eq + 1));
    } else if (spec.flags.includes(name)) {
      parsed.flags.add(name);
    } else if (spec.options.includes(name)) {
      const value = rest[++i];
      if (value === undefined) throw new Error(`--${name} expects a value`);
      parsed.options[name] = value;
    } else {
      const valid = [...spec.options, ...spec.flags, 'set'].map((o) => `--${o}`).join(', ');
      throw new Error(`unknown option ${arg} for "${command}"; valid: ${valid}`);
    }
  }
  return parsed;
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
