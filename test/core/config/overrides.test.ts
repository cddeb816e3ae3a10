/**
 * `--set` overrides from every preset: switching the K mode, the workflow and the objective
 * gives a config that validates and holds exactly the new keys (the preset's old ones dropped),
 * object values replace, and the order the keys were typed in does not matter.
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../../src/cli/args';
import { configFromArgs } from '../../../src/cli/train';
import { applySets, PRESET_NAMES, presetConfig, presetInput, resolveRunConfig } from '../../../src/core/config';
import { ALGORITHMS } from '../../../src/core/srpo';

/** What resolves without files (the *-data presets need --set tasks.paths...; they get them here). */
function resolveFrom(preset: string, sets: Record<string, unknown>) {
  return resolveRunConfig(applySets(presetInput(preset), sets));
}
const kKey = (workflow: string) => ({ math: 'solvers', search: 'searchers' })[workflow];
const MODES = [
  { mode: 'fixed', k: 1 },
  { mode: 'mixed', ks: [1, 2] },
  { mode: 'router', maxK: 2 },
];
// The *-data presets hold dataset slots ($train ...) that only files fill: switch them to built-in tasks.
// Their corpus slot ($wiki) takes any existing file: resolving only hashes it.
const anyFile = resolve(__dirname, '../../fixtures/data/verl_qa_tiny.parquet');
const builtIn = (preset: string) =>
  preset.endsWith('-data') ? { 'tasks.train': ['arith-easy'], 'tasks.eval': ['arith-easy'], 'tasks.paths': { wiki: anyFile } } : {};

describe('--set switches from every preset', () => {
  for (const preset of PRESET_NAMES) {
    const workflow = (presetInput(preset).workflow as { name: string }).name;
    const key = kKey(workflow);
    if (key) {
      it(`${preset}: every K mode by scalar keys, the old mode's fields dropped`, () => {
        for (const target of MODES) {
          const sets: Record<string, unknown> = { ...builtIn(preset) };
          for (const [k, v] of Object.entries(target).reverse()) sets[`workflow.options.${key}.${k}`] = v; // mode typed last
          const c = resolveFrom(preset, sets);
          expect((c.workflow.options as Record<string, unknown>)[key]).toEqual(target);
        }
      });
      it(`${preset}: a K mode given as an object replaces the old one`, () => {
        const c = resolveFrom(preset, { ...builtIn(preset), [`workflow.options.${key}`]: { mode: 'router', maxK: 3 } });
        expect((c.workflow.options as Record<string, unknown>)[key]).toEqual({ mode: 'router', maxK: 3 });
      });
    }
    it(`${preset}: every other workflow starts its options afresh`, () => {
      for (const name of ['math', 'search', 'single'].filter((w) => w !== workflow)) {
        const c = resolveFrom(preset, {
          ...builtIn(preset),
          'workflow.name': name,
          ...(name === 'search' ? { 'tasks.train': ['kb-single'], 'tasks.eval': ['kb-single'] } : {}),
        });
        expect(c.workflow.name).toBe(name);
        const own = kKey(workflow);
        if (own && own !== kKey(name)) expect(c.workflow.options).not.toHaveProperty(own);
      }
    });
    it(`${preset}: every objective, by key (others kept) or by object (others default)`, () => {
      const before = resolveFrom(preset, builtIn(preset)).objective;
      for (const algorithm of ALGORITHMS) {
        const byKey = resolveFrom(preset, { ...builtIn(preset), 'objective.algorithm': algorithm }).objective;
        expect(byKey).toEqual({ ...before, algorithm });
        const byObject = resolveFrom(preset, { ...builtIn(preset), objective: { algorithm, grouping: 'agent' } }).objective;
        expect(byObject).toMatchObject({ algorithm, grouping: 'agent', setNorm: 'sqrt', reduction: 'event' });
      }
    });
  }

  it('keeps typed order for plain keys and never changes its input', () => {
    const input = presetInput('math-k3');
    const copy = structuredClone(input);
    const out = applySets(input, { 'workflow.options.solvers.k': 2, 'objective.setNorm': 'mean' });
    expect(input).toEqual(copy);
    expect(out.workflow).toMatchObject({ options: { solvers: { mode: 'fixed', k: 2 } } });
  });

  it('keeps the old mode fields when the mode is set to what it already was', () => {
    const out = applySets(presetInput('math-quick'), { 'workflow.options.solvers.mode': 'fixed' });
    expect(out.workflow).toMatchObject({ options: { solvers: { mode: 'fixed', k: 2 } } });
  });

  it("is what `train --set` uses: the issue's failing commands now resolve", () => {
    const args = (...sets: string[]) =>
      parseArgs(['train', '--preset', 'math-paper', ...sets.flatMap((s) => ['--set', s])], { options: ['preset', 'config'], flags: [] });
    expect(configFromArgs(args('workflow.options.solvers={"mode":"fixed","k":3}')).config.workflow.options).toMatchObject({ solvers: { mode: 'fixed', k: 3 } });
    expect(configFromArgs(args('workflow.name=single')).config.workflow.name).toBe('single');
  });

  it('refuses prototype keys', () => {
    expect(() => applySets({}, { '__proto__.x': 1 })).toThrow(/__proto__/);
  });
});

describe('preset chains switch K modes as a --set does', () => {
  it("math-ablation (mixed K over math-quick's fixed K) keeps no fixed-mode field; its ablations switch back", () => {
    expect(presetConfig('math-ablation').workflow.options).toMatchObject({ solvers: { mode: 'mixed', ks: [1, 2, 3] } });
    expect((presetConfig('math-ablation').workflow.options as { solvers: object }).solvers).not.toHaveProperty('k');
    for (const [name, k] of [
      ['math-k1', 1],
      ['math-k3', 3],
      ['math-setnorm-sum', 3],
    ] as const) {
      const solvers = (presetConfig(name).workflow.options as { solvers: object }).solvers;
      expect(solvers).toEqual({ mode: 'fixed', k });
      expect(presetConfig(name).policies.init).toBe('resources/warmstart/math-tiny-k123');
    }
  });

  it('never changes the preset constants it builds from', () => {
    presetConfig('math-k1');
    presetConfig('math-ablation');
    expect(presetConfig('math-quick').workflow.options).toMatchObject({ solvers: { mode: 'fixed', k: 2 } });
    expect(presetInput('math-quick')).toEqual(presetInput('math-quick'));
    expect((presetInput('math-ablation').workflow as { options: { solvers: object } }).options.solvers).toEqual({ mode: 'mixed', ks: [1, 2, 3] });
  });
});
