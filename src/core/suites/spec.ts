/**
 * A suite spec: rows (a preset and `--set`-style overrides each) x seeds, with optional varied
 * keys whose values multiply the rows, and the baseline row the others are compared with. Typed
 * and validated (zod) like the run config; `expandSuite` turns it into the cells of the matrix,
 * each with its validated run config, in queue order (seed-major: every row at the first seed,
 * then every row at the second, so a suite stopped halfway has complete pairs to compare).
 *
 * A suite file is this spec as JSON, e.g.
 *   { "name": "table1", "seeds": [1, 2, 3], "baseline": "math-shared-grpo",
 *     "rows": [{ "preset": "math-shared-grpo" }, { "preset": "math-srpo", "sets": { "steps": 20 } }] }
 *
 * Not here: storing (store/suites.ts) or running (host/suiteRun.ts, host/suiteControl.ts). Tests: test/core/suites/suites.test.ts.
 */
import { z } from 'zod';
import { applySets, PRESET_NAMES, presetInput, resolveRunConfig, type RunConfig } from '../config';
import { formatSchemaError } from '../util/schemaError';

const rowSchema = z
  .object({
    label: z.string().min(1).max(120).describe('Row name in the tables; default: the preset and its overrides.').optional(),
    preset: z.enum(PRESET_NAMES).describe('Preset the row starts from; without one, the run-config defaults.').optional(),
    sets: z
      .record(z.string(), z.unknown())
      .describe('Overrides as `--set` applies them (dotted keys; an object value replaces; a workflow or K-mode switch drops the old keys).')
      .default({}),
  })
  .strict();

export const suiteSpecSchema = z
  .object({
    name: z.string().max(120).describe('Suite name; empty: "suite".').default(''),
    seeds: z.array(z.number().int().min(0).max(0xffffffff)).min(1).max(64).describe('Seeds every row runs with (the matrix is rows x seeds). 1..64 of them.'),
    rows: z.array(rowSchema).min(1).max(64).describe('The rows of the tables: a preset plus overrides each.'),
    vary: z
      .array(z.object({ key: z.string().min(1), values: z.array(z.unknown()).min(1).max(16) }).strict())
      .max(4)
      .describe('Keys varied over every row (`--vary key=v1,v2`): each row becomes one row per combination of values.')
      .default([]),
    sets: z.record(z.string(), z.unknown()).describe('Overrides applied to every row before its own.').default({}),
    baseline: z.string().describe('Label of the row the paired differences are taken against; null: the first row.').nullable().default(null),
  })
  .strict();

export type SuiteSpec = z.output<typeof suiteSpecSchema>;
export type SuiteSpecInput = z.input<typeof suiteSpecSchema>;

export interface SuiteCell {
  position: number;
  label: string;
  seed: number;
  preset: string | null;
  config: RunConfig;
}

/** Validates a spec; throws naming the field. Also checks labels are unique and the baseline exists. */
export function resolveSuiteSpec(input: unknown): SuiteSpec {
  const parsed = suiteSpecSchema.safeParse(input ?? {});
  if (!parsed.success) throw new Error(formatSchemaError('suite', parsed.error, input));
  const spec = parsed.data;
  const labels = suiteRows(spec).map((r) => r.label);
  const dup = labels.find((l, i) => labels.indexOf(l) !== i);
  if (dup !== undefined) throw new Error(`suite: two rows are labelled "${dup}"; give them distinct labels`);
  if (spec.baseline !== null && !labels.includes(spec.baseline)) throw new Error(`suite: baseline "${spec.baseline}" is not a row; rows: ${labels.join(', ')}`);
  if (new Set(spec.seeds).size !== spec.seeds.length) throw new Error(`suite: seeds repeat (${spec.seeds.join(', ')})`);
  return spec;
}

const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** The rows after `vary`, each with its label and overrides. */
export function suiteRows(spec: SuiteSpec): { label: string; preset: string | null; sets: Record<string, unknown> }[] {
  let rows = spec.rows.map((r) => ({
    label: r.label ?? [r.preset ?? 'defaults', ...Object.entries(r.sets).map(([k, v]) => `${k}=${show(v)}`)].join(' '),
    preset: r.preset ?? null,
    sets: { ...spec.sets, ...r.sets },
  }));
  for (const { key, values } of spec.vary) {
    rows = rows.flatMap((r) => values.map((v) => ({ label: `${r.label} ${key}=${show(v)}`, preset: r.preset, sets: { ...r.sets, [key]: v } })));
  }
  return rows;
}

/** Every cell of the matrix with its validated run config, seed-major. Throws naming the row. */
export function expandSuite(spec: SuiteSpec): SuiteCell[] {
  const name = spec.name || 'suite';
  const rows = suiteRows(spec);
  const cells: SuiteCell[] = [];
  for (const seed of spec.seeds) {
    for (const row of rows) {
      let config: RunConfig;
      try {
        const input = applySets(row.preset ? presetInput(row.preset) : {}, { ...row.sets, seed, name: `${name}/${row.label}/s${seed}`.slice(0, 200) });
        config = resolveRunConfig(input);
      } catch (err) {
        throw new Error(`suite row "${row.label}" (seed ${seed}): ${(err as Error).message}`);
      }
      cells.push({ position: cells.length, label: row.label, seed, preset: row.preset, config });
    }
  }
  return cells;
}
