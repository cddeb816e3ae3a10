/**
 * `srpo-lab report RUN [RUN ...] | --suite ID  --format html|md|pdf|csv --out FILE`: the UI's
 * report documents from the command line, for a headless GPU box with nothing to click. The same
 * builder as the Reports view (core/host/runReports.ts over shared/report.ts), so a file from
 * either is the same document; PDF is that HTML printed by headless Chromium (CHROMIUM_PATH,
 * default /usr/bin/chromium), refused in words where there is none. csv is the runs' (or the
 * suite's) table; csv-metrics and csv-events are the other two CSVs of the Reports view.
 * Written like `export --out`: never over an existing file without --force, never through a
 * symbolic link, whole or not at all (core/util/writeNewFile.ts). Reads the database only.
 * Tests: test/cli/report.test.ts.
 */
import { exportReport, type ReportFormat } from '../core/host/runReports';
import { MetricSeriesCache } from '../core/store/series';
import { writeNewFile } from '../core/util/writeNewFile';
import { chromiumPdfPrinter, CHROMIUM_PATH } from '../server/pdf';
import type { ParsedArgs } from './args';
import { getRunOrThrow, labCommand, openLabForReading } from './lab';

/** The command's format names and the report format each one is. */
const FORMATS: Record<string, ReportFormat> = {
  html: 'html',
  md: 'markdown',
  markdown: 'markdown',
  pdf: 'pdf',
  csv: 'csv-table',
  'csv-metrics': 'csv-metrics',
  'csv-events': 'csv-events',
};

export const REPORT_OPTIONS = ['db', 'format', 'out', 'suite', 'baseline'];
export const REPORT_FLAGS = ['force'];

function idArg(value: string, what: string): number {
  const id = Number(value);
  if (!Number.isInteger(id) || id < 1) throw new Error(`report: ${what} must be a positive whole number, got "${value}"`);
  return id;
}

export async function reportCommand(args: ParsedArgs, out: (line: string) => void): Promise<void> {
  const formatName = args.options.format;
  if (!formatName) throw new Error(`report needs --format (${Object.keys(FORMATS).join(', ')})`);
  const format = FORMATS[formatName];
  if (!format) throw new Error(`report: --format "${formatName}" is not a format; valid: ${Object.keys(FORMATS).join(', ')}`);
  const dest = args.options.out;
  if (!dest)
    throw new Error(`report needs --out FILE (e.g. ${labCommand()} report 1 --format ${formatName} --out run-1.${formatName === 'md' ? 'md' : formatName})`);
  const suiteId = args.options.suite !== undefined ? idArg(args.options.suite, '--suite') : undefined;
  const runIds = args.positionals.map((p) => idArg(p, 'a run id'));
  if (suiteId === undefined && !runIds.length) throw new Error(`report expects run ids or --suite ID (see: ${labCommand()} runs, ${labCommand()} suite list)`);
  if (suiteId !== undefined && runIds.length) throw new Error('report takes run ids or --suite ID, not both');

  const printer = format === 'pdf' ? chromiumPdfPrinter() : null;
  if (format === 'pdf' && !printer)
    throw new Error(
      `report --format pdf prints with headless Chromium, and there is none at ${CHROMIUM_PATH} (install chromium, or set CHROMIUM_PATH); --format html makes the same document`,
    );
  const { store, dbPath } = openLabForReading(args);
  try {
    for (const id of runIds) getRunOrThrow(store, id, dbPath);
    const ctx = { store, dbPath, seriesCache: new MetricSeriesCache(store.db), push: () => undefined, isActive: () => false };
    const file = await exportReport(
      ctx,
      { runIds: suiteId === undefined ? runIds : undefined, suiteId, baseline: args.options.baseline, format },
      printer ?? undefined,
    );
    const content = file.encoding === 'base64' ? Buffer.from(file.content, 'base64') : file.content;
    const written = writeNewFile(dest, content, { force: args.flags.has('force') });
    out(
      `wrote the ${formatName} report of ${suiteId !== undefined ? `suite ${suiteId}` : `run${runIds.length > 1 ? 's' : ''} ${runIds.join(', ')}`} to ${written}`,
    );
  } finally {
    store.close();
    await printer?.close();
  }
}
