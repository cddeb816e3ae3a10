/**
 * Every configuration field carries its description through zod (`.describe`), so the new-run
 * form (fed by `configFields()`, which walks `z.toJSONSchema(runConfigSchema)`) shows help text
 * for each one. The workflow option schemas are checked the same way on their JSON schemas.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { configFields } from '../../../src/core/host/labService';
import { objectiveConfigSchema } from '../../../src/core/srpo/config';
import { mathConfigSchema } from '../../../src/core/workflows/math';
import { searchConfigSchema } from '../../../src/core/workflows/search';
import { singleConfigSchema } from '../../../src/core/workflows/single';

interface Json {
  description?: string;
  properties?: Record<string, Json>;
  anyOf?: Json[];
  oneOf?: Json[];
  type?: string | string[];
}

/** Paths of the object properties (at any depth, through unions) that have no description. */
function undescribed(schema: z.ZodType): string[] {
  const root = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  const missing: string[] = [];
  const visit = (s: Json, path: string) => {
    for (const [k, v] of Object.entries(s.properties ?? {})) {
      const p = path ? `${path}.${k}` : k;
      const branches = v.anyOf ?? v.oneOf ?? [];
      const described = !!v.description?.trim() || branches.some((b) => b.type !== 'null' && !!b.description?.trim());
      if (!described) missing.push(p);
      visit(v, p);
      branches.forEach((b, i) => visit(b, `${p}[${i}]`));
    }
  };
  visit(root, '');
  return missing;
}

describe('config field descriptions', () => {
  const fields = configFields();
  const byPath = new Map(fields.map((f) => [f.path, f]));

  it('gives every field of the new-run form a non-empty description', () => {
    expect(fields.length).toBeGreaterThan(30);
    const missing = fields.filter((f) => !f.description?.trim()).map((f) => f.path);
    expect(missing).toEqual([]);
  });

  it('carries the text of known fields, nullable and nested ones included', () => {
    expect(byPath.get('rollout.groupSize')?.description).toMatch(/group/i);
    expect(byPath.get('rollout.groupSize')?.description).toMatch(/2\.\.64/);
    expect(byPath.get('optimizer.lr')?.description).toMatch(/learning rate/i);
    expect(byPath.get('objective.clipHigh')?.description).toMatch(/eps_high/);
    const init = byPath.get('policies.init');
    expect(init?.nullable).toBe(true);
    expect(init?.description).toMatch(/checkpoint/i);
    const dualClip = byPath.get('objective.dualClip');
    expect(dualClip?.nullable).toBe(true);
    expect(dualClip?.description).toMatch(/dual clip/i);
    expect(byPath.get('policies.modelOverrides.nHeads')?.description).toMatch(/heads/i);
    // workflow.options is no raw box: one field per option, each with its own help (issue 30, point 9).
    expect(byPath.has('workflow.options')).toBe(false);
    expect(byPath.get('workflow.options.solvers.k')?.description).toMatch(/set size K/);
  });

  it('shows the task lists and the workflow options as editable fields (issue 30, point 9)', () => {
    for (const list of ['tasks.train', 'tasks.eval']) {
      const f = byPath.get(list);
      expect(f?.kind).toBe('tasks');
      expect(f?.options).toContain('arith-chain');
      expect(f?.entryFields?.map((e) => e.path)).toEqual(['dataset', 'format', 'name', 'limit', 'split']); // sha256 is filled, never typed
    }
    // The chosen workflow's options, a K mode's own fields while it is chosen.
    expect(byPath.get('workflow.options.solvers.mode')).toMatchObject({
      kind: 'enum',
      options: ['fixed', 'mixed', 'router'],
      when: [{ path: 'workflow.name', in: ['math'] }],
    });
    expect(byPath.get('workflow.options.solvers.maxK')?.when).toEqual([
      { path: 'workflow.name', in: ['math'] },
      { path: 'workflow.options.solvers.mode', in: ['router'] },
    ]);
    expect(byPath.get('workflow.options.invalidPenalty')?.when).toEqual([{ path: 'workflow.name', in: ['math', 'search', 'single'] }]);
    expect(byPath.get('workflow.options.topK')?.when).toEqual([{ path: 'workflow.name', in: ['search'] }]);
    expect(byPath.has('workflow.options.corpusSha256')).toBe(false);
    // LoRA: its kind is the switch ("none": policies.adapter null), its fields show while it is on.
    expect(byPath.get('policies.adapter.kind')).toMatchObject({ kind: 'enum', options: ['lora'], nullable: true, noneNulls: 'policies.adapter' });
    expect(byPath.get('policies.adapter.r')?.when).toEqual([{ path: 'policies.adapter.kind', in: ['lora'] }]);
    expect(byPath.get('policies.adapter.targetModules')?.kind).toBe('lines');
  });

  it('describes every objective field', () => {
    expect(undescribed(objectiveConfigSchema)).toEqual([]);
  });

  it('describes every workflow option, the cardinality variants included', () => {
    expect(undescribed(mathConfigSchema)).toEqual([]);
    expect(undescribed(searchConfigSchema)).toEqual([]);
    expect(undescribed(singleConfigSchema)).toEqual([]);
    const math = z.toJSONSchema(mathConfigSchema, { io: 'input' }) as Json;
    expect(math.properties?.invalidPenalty?.description).toMatch(/penalty/i);
    expect(math.properties?.solvers?.description).toMatch(/solvers/i);
  });
});
