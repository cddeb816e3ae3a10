/**
 * The CLI argument parser (src/cli/args.ts, on node:util parseArgs): options, flags, repeatable
 * `--set` with JSON values, positionals (a single dash is one), and each error message the
 * commands rely on (unknown option with the valid ones, missing values, `--set` shape and the
 * prototype-chain key refusal).
 */
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/cli/args';

const spec = { options: ['db', 'name'], flags: ['json'] };

describe('parseArgs', () => {
  it('reads options, flags, positionals and repeated --set in order', () => {
    const a = parseArgs(
      ['train', 'file.json', '--db', 'x.db', '--json', '--set', 'a.b=1', '--set', 'c=[1,"x"]', '--set', 'a.b=2', '-', '-1.5', '--name=run'],
      spec,
    );
    expect(a.command).toBe('train');
    expect(a.options).toEqual({ db: 'x.db', name: 'run' });
    expect([...a.flags]).toEqual(['json']);
    expect({ ...a.sets }).toEqual({ 'a.b': 2, c: [1, 'x'] });
    expect(Object.getPrototypeOf(a.sets)).toBeNull();
    expect(a.positionals).toEqual(['file.json', '-', '-1.5']);
  });

  it('takes the next argument as an option value whatever it looks like', () => {
    expect(parseArgs(['x', '--name', '--json'], spec).options.name).toBe('--json');
    expect(parseArgs(['x', '--name', '-3'], spec).options.name).toBe('-3');
    expect(parseArgs(['x', '--set', 'k=--v'], spec).sets.k).toBe('--v');
  });

  it('names what is wrong', () => {
    expect(() => parseArgs(['runs', '--bogus'], spec)).toThrow('unknown option --bogus for "runs"; valid: --db, --name, --json, --set');
    expect(() => parseArgs(['runs', '--bogus=1'], spec)).toThrow('unknown option --bogus=1 for "runs"');
    expect(() => parseArgs(['runs', '--', 'a'], spec)).toThrow('unknown option -- for "runs"');
    expect(() => parseArgs(['runs', '--db'], spec)).toThrow('--db expects a value');
    expect(() => parseArgs(['runs', '--json=yes'], spec)).toThrow('--json takes no value, got --json=yes');
    expect(() => parseArgs(['runs', '--set'], spec)).toThrow('--set expects key=value, got nothing');
    expect(() => parseArgs(['runs', '--set', '=1'], spec)).toThrow('--set expects key=value, got =1');
    expect(() => parseArgs(['runs', '--set', 'k={x'], spec)).toThrow(/--set k: the value looks like JSON but does not parse/);
  });

  it('refuses keys that reach the prototype chain, in the key or inside the value', () => {
    for (const key of ['__proto__.x', 'a.constructor.b', 'prototype'])
      expect(() => parseArgs(['t', '--set', `${key}=1`], spec)).toThrow(/__proto__|constructor|prototype/);
    expect(() => parseArgs(['t', '--set', 'a={"__proto__":{"x":1}}'], spec)).toThrow(/__proto__/);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});
