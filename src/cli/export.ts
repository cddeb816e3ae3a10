/**
 * `srpo-lab export RUN --format json|csv [--out FILE]`: a run's record for other tools.
 * json: `{ run, metrics: { key: [{ step, value, wallTime }] }, evaluations }` (NaN as null);
 * csv: one row per (step, key, value), header `step,key,value`, ordered by key then step.
 * To stdout unless --out. Read only. Tests: test/cli/train.test.ts.
 */
import { writeFileSync } from 'node:fs';
import type { ParsedArgs } from './args';
import { getRunOrThrow, openLab, runArg } from './lab';

const FORMATS = ['json', 'csv'] as const;

function csvCell(s: string): string {
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export async function exportCommand(args: ParsedArgs, out: (line: string) => void): Promise<void> {
  const runId = runArg(args, 'export');
  const format = args.options.format ?? 'json';
  if (!(FORMATS as readonly string[]).includes(format)) throw new Error(`--format "${format}" is not a format; valid: ${FORMATS.join(', ')}`);
  const { store, dbPath } = openLab(args, false);
  let text: string;
  try {
    const run = getRunOrThrow(store, runId, dbPath);
    const keys = store.metricKeys(runId);
    if (format === 'json') {
      const metrics = Object.fromEntries(keys.map((k) => [k, store.metricSeries(runId, k)]));
      text = JSON.stringify({ run, metrics, evaluations: store.evaluations(runId) }, null, 2);
    } else {
      const lines = ['step,key,value'];
      for (const k of keys) for (const p of store.metricSeries(runId, k)) lines.push(`${p.step},${csvCell(k)},${p.value}`);
      text = lines.join('\n');
    }
  } finally {
    store.close();
  }
  if (args.options.out) {
    writeFileSync(args.options.out, `${text}\n`);
    out(`wrote run ${runId} as ${format} to ${args.options.out}`);
  } else out(text);
}
