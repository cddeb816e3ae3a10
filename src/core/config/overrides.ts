/**
 * `--set key=value` overrides applied to a run config input (preset, then config file, then each
 * --set). Unlike a deep merge, an override replaces:
 *
 *   - an object value replaces the sub-object at its path (`--set objective={"algorithm":"drmas"}`
 *     drops the preset's other objective keys, which then take their defaults);
 *   - a switch drops the keys that belonged to the old choice (registry below): a new workflow
 *     name starts that workflow's options afresh, a new K mode (`solvers.mode`, `searchers.mode`)
 *     drops the old mode's fields (`k`, `ks`, `maxK`). The new keys come from the other --sets of
 *     the same command and are validated by resolveRunConfig, like any input.
 *
 * Switches are applied before the other keys, so `--set solvers.k=1 --set solvers.mode=fixed`
 * keeps the k whichever order it was typed in. Keys that reach the prototype chain are refused
 * (setPath). Not here: parsing the command line (src/cli/args.ts), validation (runConfig.ts).
 * Tests: test/core/config/overrides.test.ts (every preset: K mode, workflow, objective).
 */
import { setPath } from './runConfig';

/** A choice whose change invalidates the keys that came with the old value. */
interface SwitchRule {
  /** Whether a --set of this path (split into keys) is this switch. */
  matches: (keys: readonly string[]) => boolean;
  /** The object emptied when the value changes (a path of keys). */
  resets: (keys: readonly string[]) => string[];
}

const SWITCHES = {
  workflow: {
    matches: (keys) => keys.length === 2 && keys[0] === 'workflow' && keys[1] === 'name',
    resets: () => ['workflow', 'options'],
  },
  kMode: {
    matches: (keys) => keys.length >= 4 && keys[0] === 'workflow' && keys[1] === 'options' && keys[keys.length - 1] === 'mode',
    resets: (keys) => keys.slice(0, -1),
  },
} satisfies Record<string, SwitchRule>;

const rules: SwitchRule[] = Object.values(SWITCHES);
const switchRank = (path: string) => {
  const keys = path.split('.');
  const i = rules.findIndex((r) => r.matches(keys));
  return i < 0 ? rules.length : i; // workflow name first, then K modes, then the rest
};

function getPath(target: unknown, keys: readonly string[]): unknown {
  let cur = target;
  for (const k of keys) {
    if (!cur || typeof cur !== 'object' || !Object.hasOwn(cur, k)) return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

/** Returns a copy of `input` with every override applied (input is not modified). */
export function applySets(input: Record<string, unknown>, sets: Record<string, unknown>): Record<string, unknown> {
  const out = structuredClone(input);
  const ordered = Object.entries(sets)
    .map(([path, value], i) => ({ path, value, i, rank: switchRank(path) }))
    .sort((a, b) => a.rank - b.rank || a.i - b.i);
  for (const { path, value } of ordered) {
    const keys = path.split('.');
    const rule = rules.find((r) => r.matches(keys));
    if (rule && getPath(out, keys) !== value) setPath(out, rule.resets(keys).join('.'), {});
    setPath(out, path, value && typeof value === 'object' ? structuredClone(value) : value);
  }
  return out;
}
