/**
 * `__proto__`, `constructor` and `prototype` are refused as keys wherever input becomes objects
 * (issue: `--set __proto__.x=1` mutated Object.prototype in the CLI): `--set` paths and JSON
 * values (parseArgs), setPath, config merges (mergeConfig, a `--config` file), each with an error
 * naming the key, and Object.prototype untouched afterwards. Ordinary keys that merely contain
 * those words still work.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/cli/args';
import { configFromArgs } from '../../src/cli/train';
import { mergeConfig, presetInput, setPath } from '../../src/core/config';

const SPEC = { options: ['preset', 'config', 'db'], flags: [] as string[] };
const proto = Object.prototype as Record<string, unknown>;

/** Runs `train`'s config building on argv; returns the error message, or null. */
function trainConfigError(argv: string[]): string | null {
  try {
    configFromArgs(parseArgs(['train', '--preset', 'math-quick', ...argv], SPEC));
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

afterEach(() => {
  // Should the guard fail, do not let the pollution leak into the next test.
  delete proto.x;
  delete proto.polluted;
});

describe('prototype keys are refused', () => {
  it('--set __proto__.x=1 is an error naming "__proto__"; Object.prototype stays clean', () => {
    const message = trainConfigError(['--set', '__proto__.x=1']);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(Object.hasOwn(Object.prototype, 'x')).toBe(false);
    expect(message).toMatch(/"__proto__" is not allowed/);
    expect(message).toContain('--set __proto__.x');
  });

  it('refuses constructor and prototype anywhere in a --set path', () => {
    for (const path of ['constructor.prototype.x', 'policies.constructor.x', 'optimizer.prototype', 'a.__proto__']) {
      const bad = path.split('.').find((k) => ['__proto__', 'constructor', 'prototype'].includes(k))!;
      expect(trainConfigError(['--set', `${path}=1`]), path).toContain(`"${bad}" is not allowed`);
    }
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('refuses the keys inside a --set JSON value', () => {
    const message = trainConfigError(['--set', 'optimizer={"__proto__":{"polluted":1}}']);
    expect(message).toMatch(/"__proto__" is not allowed/);
    expect(message).toContain('optimizer');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('setPath refuses them even when called directly (no parseArgs in front)', () => {
    expect(() => setPath({}, '__proto__.x', 1)).toThrow(/"__proto__" is not allowed/);
    expect(() => setPath({}, 'a.b', JSON.parse('{"constructor":{"prototype":{"x":1}}}'))).toThrow(/"constructor" is not allowed/);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('mergeConfig refuses a patch holding them at any depth, naming the path', () => {
    const base = presetInput('math-quick');
    expect(() => mergeConfig(base, JSON.parse('{"__proto__":{"polluted":1}}'))).toThrow(/"__proto__" is not allowed/);
    expect(() => mergeConfig(base, JSON.parse('{"policies":{"modelOverrides":{"constructor":{"x":1}}}}'))).toThrow(/policies\.modelOverrides\.constructor/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses them in a --config file', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'srpo-proto-')), 'run.json');
    writeFileSync(file, '{"optimizer":{"__proto__":{"lr":5}}}');
    const message = trainConfigError(['--config', file]);
    expect(message).toMatch(/"__proto__" is not allowed/);
    expect(message).toContain('optimizer.__proto__');
  });

  it('still accepts ordinary keys and values that merely mention those words', () => {
    const { config } = configFromArgs(
      parseArgs(['train', '--preset', 'math-quick', '--set', 'name=constructor-prototype', '--set', 'optimizer.lr=0.001'], SPEC),
    );
    expect(config.name).toBe('constructor-prototype');
    expect(config.optimizer.lr).toBe(0.001);
  });
});
