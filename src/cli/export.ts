/**
 * `srpo-lab export RUN --format json|csv [--out FILE]`: a run's record for other tools.
 * json: `{ run, metrics: { key: [{ step, value, wallTime }] }, evaluations }` (NaN as null);
 * csv: the UI's metrics CSV exactly (src/shared/report.ts metricsCsv: `run,step,key,value,wall_time`,
 * ordered by key then step), so a file from either opens the same way. Both give `step` as the
 * charts draw it: updates done (src/shared/stepConvention.ts: a training metric of update N at N,
 * an evaluation after N updates at N).
 * Written to --out FILE; without it, to stdout when stdout is a pipe or a file, and refused on a
 * terminal (thousands of lines would flood it) with the two ways that work. --out never clobbers
 * by accident (core/util/writeNewFile.ts): an existing file is kept unless --force, a symbolic
 * link at FILE is refused even with --force, and the file appears whole or not at all (a
 * temporary name in the same folder, then moved into place).
 * Read only. Tests: test/cli/train.test.ts, test/cli/help.test.ts, test/cli/exportFiles.test.ts.
 */
import { seriesInStepsOf } from '../core/host/runQueries';
import { writeNewFile } from '../core/util/writeNewFile';
import { metricsCsv } from '../shared/report';
import type { ParsedArgs } from './args';
import type { CliIO } from './io';
import { getRunOrThrow, labCommand, openLabForReading, runArg } from './lab';

const FORMATS = ['json', 'csv'] as const;

export async function exportCommand(args: ParsedArgs, out: (line: string) => void, io?: Pick<CliIO, 'tty'>): Promise<void> {
  const runId = runArg(args, 'export');
  const format = args.options.format ?? 'json';
  if (!(FORMATS as readonly string[]).includes(format)) throw new Error(`--format "${format}" is not a format; valid: ${FORMATS.join(', ')}`);
  if (!args.options.out && io?.tty) {
    const db = args.options.db ? ` --db ${args.options.db}` : '';
    throw new Error(
      `not writing run ${runId}'s ${format} onto the terminal; write a file: ${labCommand()} export ${runId} --format ${format} --out run-${runId}.${format}${db} ` +
        `(or pipe it: … | less)`,
    );
  }
  const { store, dbPath } = openLabForReading(args);
  let text: string;
  try {
    const run = getRunOrThrow(store, runId, dbPath);
    const keys = store.metricKeys(runId);
    if (format === 'json') {
      // Steps are updates done, as the charts draw them (src/shared/stepConvention.ts).
      const metrics = Object.fromEntries(keys.map((k) => [k, seriesInStepsOf(store, run, k)]));
      text = `${JSON.stringify({ run, metrics, evaluations: store.evaluations(runId) }, null, 2)}\n`;
    } else {
      text = metricsCsv(
        keys.flatMap((key) => seriesInStepsOf(store, run, key).map((p) => ({ runId: run.id, key, step: p.step, value: p.value, wallTime: p.wallTime }))),
      );
    }
  } finally {
    store.close();
  }
  if (args.options.out) {
    const written = writeNewFile(args.options.out, text, { force: args.flags.has('force') });
    out(`wrote run ${runId} as ${format} to ${written}`);
  } else out(text.replace(/\n$/, ''));
}
