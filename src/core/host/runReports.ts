/**
 * The LabService's report export: what a report of some runs (or of a suite's completed runs,
 * its tables first) is made of, read from the store, and the file in the asked format, one entry
 * per format in a typed registry. The documents themselves are built by src/shared/report.ts;
 * PDF is the HTML report printed by the transport's printer (absent: 'unsupported').
 *
 * Not here: the report layout and charts (src/shared/report.ts, reportChart.ts), the suite tables
 * (src/shared/suites.ts). Tested by test/server/server.test.ts (content), test/server/pdf.test.ts,
 * test/core/host/suiteApi.test.ts (a suite's report).
 */
import { LabApiError, type ApiParsedInput, type ReportFile, type SeriesMap } from '../../shared/api';
import { eventsCsv, htmlReport, markdownReport, metricsCsv, REPORT_CHART_KEYS, suiteTableCsv, type ReportData } from '../../shared/report';
import { presetConfig } from '../config';
import { buildSuiteTable, type SuiteDetail } from '../../shared/suites';
import type { EventSummary } from '../store';
import type { LabContext } from './labContext';
import { stepOfRecord } from '../../shared/stepConvention';
import { finiteOrNull, runDetail, runOrThrow, seriesInStepsOf, seriesPoint } from './runQueries';
import { suiteOrThrow } from './suiteControl';

export type ReportFormat = ApiParsedInput<'exportReport'>['format'];
/** Prints an HTML report to PDF (web mode: headless Chromium; desktop: printToPDF). */
export type PdfPrinter = (html: string) => Promise<Uint8Array>;

/** What one export reads: the runs, the suite they came from (if any), and the report data, built on demand. */
interface ReportSource {
  ctx: LabContext;
  runIds: number[];
  suite: SuiteDetail | undefined;
  /** Filename stem: srpo-suite-N, srpo-run-N or srpo-runs-N-M. */
  base: string;
  baseline: string | undefined;
  printPdf: PdfPrinter | undefined;
  /** The runs' details, chart series and evaluations (with the suite, if any). */
  data(): ReportData;
}

const text = (filename: string, mime: string, content: string): ReportFile => ({ filename, mime, encoding: 'utf8', content });

const FORMATS = {
  'csv-table': (s) => {
    const table = s.suite ? s.suite.table : runsTable(s);
    return text(`${s.base}-table.csv`, 'text/csv', suiteTableCsv(table));
  },
  html: (s) => text(`${s.base}.html`, 'text/html', htmlReport(s.data())),
  markdown: (s) => text(`${s.base}.md`, 'text/markdown', markdownReport(s.data())),
  'csv-metrics': (s) => {
    const { store } = s.ctx;
    // Steps are updates done, as the charts draw them (src/shared/stepConvention.ts).
    const rows = s.runIds.flatMap((runId) => {
      const run = runOrThrow(store, runId);
      return store
        .metricKeys(runId)
        .flatMap((key) => seriesInStepsOf(store, run, key).map((p) => ({ runId, key, step: p.step, value: finiteOrNull(p.value), wallTime: p.wallTime })));
    });
    return text(`${s.base}-metrics.csv`, 'text/csv', metricsCsv(rows));
  },
  'csv-events': (s) => {
    const events: EventSummary[] = [];
    for (const runId of s.runIds) {
      let after: { step: number; id: number } | null = null;
      do {
        // The training trace (advantages, ratios); evaluation episodes have none of those columns.
        const page = s.ctx.store.listEvents(runId, { split: 'train' }, { limit: 1000, after });
        events.push(...page.events.map((e) => ({ ...e, step: stepOfRecord(e.step, 'train') }))); // the update it was sampled for
        after = page.next;
      } while (after);
    }
    return text(`${s.base}-events.csv`, 'text/csv', eventsCsv(events));
  },
  pdf: async (s) => {
    if (!s.printPdf) throw new LabApiError('unsupported', 'PDF export needs a browser to print with (web mode with Chromium, or the desktop app)');
    const bytes = await s.printPdf(htmlReport(s.data()));
    return { filename: `${s.base}.pdf`, mime: 'application/pdf', encoding: 'base64', content: Buffer.from(bytes).toString('base64') };
  },
} satisfies Record<ReportFormat, (s: ReportSource) => ReportFile | Promise<ReportFile>>;

/** The report of `runIds`, or of suite `suiteId`'s completed runs, as a file in `format`. */
export async function exportReport(ctx: LabContext, input: ApiParsedInput<'exportReport'>, printPdf?: PdfPrinter): Promise<ReportFile> {
  const { suiteId, baseline, format } = input;
  // A suite's report: its completed runs, its tables first.
  const suite = suiteId !== undefined ? suiteOrThrow(ctx, suiteId, baseline) : undefined;
  const runIds = suite ? suite.entries.filter((e) => e.status === 'completed' && e.runId !== null).map((e) => e.runId!) : (input.runIds ?? []);
  if (suite && !runIds.length && format !== 'csv-table') throw new LabApiError('conflict', `suite ${suiteId} has no completed run to report yet`);
  for (const id of runIds) runOrThrow(ctx.store, id);
  const base = suite ? `srpo-suite-${suite.id}` : runIds.length === 1 ? `srpo-run-${runIds[0]}` : `srpo-runs-${runIds.join('-')}`;
  const data = (): ReportData => {
    const d = reportData(ctx, runIds);
    return suite ? { ...d, suite } : d;
  };
  return FORMATS[format]({ ctx, runIds, suite, base, baseline, printPdf, data });
}

/** A table of the given runs (no suite): one row per run name without its -sN seed suffix. */
function runsTable({ ctx: { store }, runIds, baseline }: ReportSource): SuiteDetail['table'] {
  const rows = runIds.map((id) => {
    const r = runOrThrow(store, id);
    return {
      label: r.name.replace(/-s\d+$/, ''),
      seed: r.seed,
      runId: id,
      evaluations: store.evaluations(id),
      gradNorm: store.metricSeries(id, 'grad/norm').map((p) => p.value),
    };
  });
  return buildSuiteTable(rows, [], baseline);
}

/** The preset's own config, which a report shows the run's config against; undefined for a custom config or a preset this version lacks. */
function presetBaseline(preset: string | null): unknown {
  if (!preset) return undefined;
  try {
    return presetConfig(preset);
  } catch {
    return undefined;
  }
}

/** Each run's detail, the report's chart series (400 points at most) and its evaluations. */
function reportData(ctx: LabContext, runIds: number[]): ReportData {
  const { store } = ctx;
  return {
    generatedAt: Date.now(),
    runs: runIds.map((id) => {
      const run = runDetail(ctx, runOrThrow(store, id));
      const keys = new Set(store.metricKeys(id));
      const series: SeriesMap = {};
      const stored = runOrThrow(store, id);
      for (const k of REPORT_CHART_KEYS) if (keys.has(k)) series[k] = seriesInStepsOf(store, stored, k, { maxPoints: 400 }).map(seriesPoint); // x: updates done
      return { run, series, evaluations: store.evaluations(id), presetConfig: presetBaseline(run.preset) };
    }),
  };
}
