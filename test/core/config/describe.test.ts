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
    expect(byPath.get('workflow.options')?.description).toMatch(/workflow/i);
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
