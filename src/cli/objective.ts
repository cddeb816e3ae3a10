/**
 * `srpo-lab objective`: computes the objective of a plain-data batch (JSON of
 * `{ events, members }`, see src/core/srpo/types.ts) for one variant or for every variant side
 * by side, through the same tfjs code as training. Without `--batch` it uses the embedded example
 * `resources/examples/objective-batch.json`. Prints a table, or JSON with `--json`.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { initBackend } from '../core/models/backend';
import { ALGORITHMS, computeObjective, type ObjectiveBatch, type ObjectiveReport } from '../core/srpo';
import type { ParsedArgs } from './args';

export const EXAMPLE_BATCH = resolve(__dirname, '../../resources/examples/objective-batch.json');

export function readBatch(path: string): ObjectiveBatch {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read batch file ${path}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text) as ObjectiveBatch;
  } catch (err) {
    throw new Error(`batch file ${path} is not valid JSON: ${(err as Error).message}`);
  }
}

export async function objectiveCommand(args: ParsedArgs, out: (line: string) => void): Promise<void> {
  const backend = await initBackend({ requested: args.options.backend as never });
  const path = args.options.batch ?? EXAMPLE_BATCH;
  const batch = readBatch(path);
  const algorithms = args.flags.has('all') ? [...ALGORITHMS] : [args.sets.algorithm ?? 'srpo'];
  const reports: Record<string, ObjectiveReport> = {};
  for (const algorithm of algorithms) {
    try {
      reports[algorithm] = await computeObjective(batch, { ...args.sets, algorithm });
    } catch (err) {
      throw new Error(`${path}: ${(err as Error).message}`);
    }
  }
  if (args.flags.has('json')) {
    out(JSON.stringify({ batch: path, backend: backend.name, reports }, null, 2));
    return;
  }
  out(`batch: ${path}   backend: ${backend.name}`);
  for (const [algorithm, r] of Object.entries(reports)) {
    const m = r.metrics;
    out(
      `\n${algorithm} (grouping ${r.grouping}): loss ${fmt(r.loss)}  events ${r.completeEvents} complete, ${r.droppedEvents} dropped` +
        `  clip low/high ${fmt(m['clip/frac_low'])}/${fmt(m['clip/frac_high'])}  ratio mean ${fmt(m['ratio/mean'])}  kl ${fmt(m['kl/approx'])}`,
    );
    if (r.events.some((e) => e.ratio !== undefined)) {
      out('  event                 A        L_set     rho      clipped');
      for (const e of r.events) {
        out(`  ${e.id.padEnd(20)} ${fmt(e.advantage).padStart(8)} ${fmt(e.logRatio!).padStart(9)} ${fmt(e.ratio!).padStart(8)}  ${e.clipped || '-'}`);
      }
    }
  }
}

function fmt(x: number | undefined): string {
  return x === undefined ? '-' : x.toFixed(4);
}
