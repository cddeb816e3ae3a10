/**
 * Run reports from the API's records: a self-contained HTML page (inline CSS, charts as inline SVG, no
 * script, nothing fetched), Markdown, and CSV of metrics and of events. PDF is this HTML printed
 * by a browser (the web server's headless Chromium). Pure string building, browser-safe, so the
 * host (LabService.exportReport) and, if wanted, the renderer can both build reports.
 *
 * Text from users (run names, config values) is escaped for its format: HTML entities in the HTML
 * report; in Markdown, HTML entities plus backslash-escaped Markdown syntax, one line per cell,
 * and config values in code spans whose fence is longer than any backtick run inside, so no
 * name can inject raw HTML, links or table cells into a report opened elsewhere.
 *
 * Not here: reading the store (host/runReports.ts); the text primitives (reportText.ts), CSV
 * (reportCsv.ts) and suite tables (reportSuite.ts), re-exported here. Tested by test/server/server.test.ts (content),
 * test/shared/reportEscape.test.ts (escaping) and test/e2e/lab.test.ts (downloads from the UI).
 */
import { metricKind, metricTitle } from './metricCatalogue';
import { configsDiff, emaSmooth, evalTable, formatMeanStd } from './analysis';
import { figureSeries, figureSvg } from './reportChart';
import type { RunDetail, SeriesMap } from './api';
import type { StoredEvaluation } from './records';
import { stepsText } from './stepConvention';
import { endedBy } from './budget';
import { type SuiteDetail } from './suites';
import { escapeHtml, escapeMarkdown, fmt, markdownCode } from './reportText';
import { suiteSectionHtml, suiteSectionMarkdown } from './reportSuite';

export { csvLines, escapeHtml, escapeMarkdown, markdownCode } from './reportText';
export { EVENT_CSV_HEAD, eventsCsv, metricsCsv } from './reportCsv';
export { suiteSectionMarkdown, suiteTableCsv, suiteTableRows } from './reportSuite';

export interface ReportRun {
  run: RunDetail;
  /** The run's preset resolved with no change (the report shows the run's config as its difference from it); absent: a custom config. */
  presetConfig?: unknown;
  /** Downsampled series of the charted keys. */
  series: SeriesMap;
  evaluations: StoredEvaluation[];
}

export interface ReportData {
  generatedAt: number;
  runs: ReportRun[];
  /** When the report is of a suite: its tables (quality with paired differences, cost, dynamics) lead it. */
  suite?: SuiteDetail;
}

/** Metrics drawn in reports, in order (those a run lacks are skipped). */
export const REPORT_CHART_KEYS = [
  'reward/mean',
  'eval/macro/avg',
  'eval/macro/pass',
  'loss/total',
  'grad/norm',
  'clip/frac_low',
  'clip/frac_high',
  'ratio/mean',
  'entropy',
  'response/length_mean',
  'set/size_mean',
  'cost/tokens',
  // Cumulative rollout cost (matched budgets): also what "ended by" reads.
  'budget/team_tokens',
  'budget/tool_calls',
] as const;

/** What ended a run's training: the step count, or a budget of its config (src/shared/budget.ts). */
export function endedByLine(r: ReportRun): string {
  const budget = (r.run.config as { budget?: Record<string, number> } | null)?.budget;
  const last = Object.fromEntries(Object.entries(r.series).map(([k, pts]) => [k, pts.at(-1)?.value ?? null]));
  return `run ${r.run.id}: ${endedBy(budget, last).label}`;
}

/** A Markdown cell that is already Markdown (a code span), not text to escape. */
interface MdCell {
  md: string;
}

/** A line chart as standalone SVG (shared/reportChart figureSvg): one line per series, x by step. */
export function svgLineChart(title: string, lines: { name: string; points: [number, number | null][] }[], width = 520, height = 230): string {
  return figureSvg({
    title,
    yTitle: title,
    xTitle: 'step',
    series: lines.map((l) => ({ name: l.name, line: l.points, markers: l.points.length <= 40 })),
    width,
    height,
  });
}

/** Values in percent: evaluation rates (Avg@n, Pass@n) of any benchmark. */
const isRateKey = (k: string) => /^eval\/.+\/(avg|pass)$/.test(k);
/** A fraction as a percent, one decimal: 0.388 -> "38.8". */
const pct = (v: number | null | undefined): string => (v === null || v === undefined || !Number.isFinite(v) ? '–' : (v * 100).toFixed(1));
/** EMA weight of the report's smoothed curves (the dashboard's default). */
const REPORT_SMOOTHING = 0.6;

/** A key some run has points of, not all of them zero (an all-zero figure says nothing a table would not). */
function chartedKeys(data: ReportData): string[] {
  return REPORT_CHART_KEYS.filter((k) => data.runs.some((r) => r.series[k]?.some((p) => p.value !== null && p.value !== 0)));
}

/** Smoothing of a key's figure: evaluations and running totals are drawn raw (a smoothed total ends below its value). */
const figureSmoothing = (k: string) => (k.startsWith('eval/') || metricKind(k) === 'cumulative' ? 0 : REPORT_SMOOTHING);

/** The report's figures: every charted key some run has, raw + EMA (evaluations and totals raw), seeds as mean ± std bands. */
function reportFigures(data: ReportData, n: number): string {
  return chartedKeys(data)
    .map((k) => {
      const runs = data.runs.map((r) => ({ id: r.run.id, name: r.run.name, config: r.run.config, points: r.series[k] ?? [] }));
      const title = nTitle(k, n);
      return figureSvg({ title, yTitle: k, xTitle: 'step', percent: isRateKey(k), series: figureSeries(runs, figureSmoothing(k)) });
    })
    .join('\n');
}

/** A key's catalogue title with the evaluations' n in place of "n" (Avg@4). */
const nTitle = (k: string, n: number | 'n') => metricTitle(k).replace('Avg@n', `Avg@${n}`).replace('Pass@n', `Pass@${n}`);

/** A last value as a table shows it: whole numbers whole (19318, not 19320), rates in percent, else 4 significant digits. */
function lastValue(k: string, v: number | null | undefined): string {
  if (isRateKey(k)) return pct(v);
  if (v !== null && v !== undefined && Number.isInteger(v)) return String(v);
  return fmt(v);
}

/** The config shown in a report: its difference from its preset, and a few fields that say what ran. */
function configSummary(r: ReportRun): { changes: { path: string; preset: string; run: string }[] | null; fields: [string, string][] } {
  const c = (r.run.config ?? {}) as Record<string, unknown>;
  const get = (path: string): unknown =>
    path.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), c);
  const show = (v: unknown) => (v === undefined ? '–' : typeof v === 'string' ? v : JSON.stringify(v));
  const fields: [string, string][] = (
    [
      ['workflow', 'workflow.name'],
      ['objective', 'objective.algorithm'],
      ['model', 'policies.model'],
      ['model folder', 'policies.init'],
      ['sharing', 'policies.sharing'],
      ['steps', 'steps'],
      ['tasks per step', 'rollout.tasksPerStep'],
      ['group size', 'rollout.groupSize'],
      ['learning rate', 'optimizer.lr'],
      ['train tasks', 'tasks.train'],
      ['eval tasks', 'tasks.eval'],
      ['seed', 'seed'],
    ] as const
  )
    .filter(([, p]) => get(p) !== undefined && get(p) !== null)
    .map(([label, p]) => [label, show(get(p))]);
  if (r.presetConfig === undefined) return { changes: null, fields };
  const changes = configsDiff([r.presetConfig, r.run.config])
    .filter((d) => d.path !== 'name' && d.path !== 'seed')
    .map((d) => ({ path: d.path, preset: show(d.values[0]), run: show(d.values[1]) }));
  return { changes, fields };
}

/** The evaluation table of the reports (each run's last evaluation, grouped over seeds): header and rows of plain text, and n. */
function evaluationTable(data: ReportData): { head: string[]; rows: string[][]; n: number | 'n' } {
  const et = evalTable(
    data.runs.map((r) => ({
      runId: r.run.id,
      name: r.run.name,
      seed: r.run.seed,
      config: r.run.config,
      evaluations: r.evaluations,
      steps: r.run.steps,
    })),
  );
  const n = et.rows[0]?.n || 'n';
  return {
    n,
    head: ['config', 'seeds', 'evaluated at', ...et.benchmarks.flatMap((b) => [`${b} Avg@${n}`, `${b} Pass@${n}`]), `macro Avg@${n}`, `macro Pass@${n}`],
    rows: et.rows.map((r) => [
      r.label,
      r.seeds.join(' '),
      evalAt(r),
      ...et.benchmarks.flatMap((b) => [formatMeanStd(r.cells[b]?.avg), formatMeanStd(r.cells[b]?.pass)]),
      formatMeanStd(r.macro.avg),
      formatMeanStd(r.macro.pass),
    ]),
  };
}

const runLine = (r: RunDetail) => [
  r.id,
  r.name,
  r.status,
  r.preset ?? 'custom',
  r.workflow,
  r.objective,
  r.backend ?? '–',
  r.seed,
  stepsText(r.lastStep, r.steps, r.status),
  r.bestEval ? pct(r.bestEval.value) : '–',
];
const RUN_HEAD = ['id', 'name', 'status', 'preset', 'workflow', 'objective', 'backend', 'seed', 'steps', 'best eval %'];

/** The self-contained HTML report (charts inline SVG, no scripts, no external resources). */
export function htmlReport(data: ReportData): string {
  const title =
    data.runs.length === 1
      ? `SRPO Lab report: run ${data.runs[0].run.id} ${data.runs[0].run.name}`
      : `SRPO Lab report: runs ${data.runs.map((r) => r.run.id).join(', ')}`;
  const table = (head: string[], rows: (string | number)[][]) =>
    `<table><thead><tr>${head.map((h) => `<th>${escapeHtml(String(h))}</th>`).join('')}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(String(c))}</td>`).join('')}</tr>`).join('')}</tbody></table>`;
  const evalTab = evaluationTable(data);
  const charts = reportFigures(data, Number(evalTab.n) || 0);
  const diff = data.runs.length > 1 ? configsDiff(data.runs.map((r) => r.run.config)) : [];
  // Each run's config as what matters: a few fields, its changes from its preset; the whole JSON folded (not printed).
  const configs = data.runs
    .map((r) => {
      const { changes, fields } = configSummary(r);
      const changed =
        changes === null
          ? '<p><small>A custom config (no preset): every field is in the full config below.</small></p>'
          : changes.length
            ? table(
                ['field', `preset ${r.run.preset}`, `run ${r.run.id}`],
                changes.map((d) => [d.path, d.preset, d.run]),
              )
            : `<p><small>No change from preset ${escapeHtml(String(r.run.preset))}.</small></p>`;
      return `<h3>Config of run ${r.run.id}</h3><div class="config">${table(['field', 'value'], fields)}${changes === null ? '' : `<div><h4>Changes from preset ${escapeHtml(String(r.run.preset))}</h4>`}${changed}${changes === null ? '' : '</div>'}</div>
<details class="full-config"><summary>Full config of run ${r.run.id} (JSON)</summary><pre>${escapeHtml(JSON.stringify(r.run.config, null, 2))}</pre></details>`;
    })
    .join('\n');
  const evalDetail = data.runs
    .map(
      (r) =>
        `<h3>Evaluations of run ${r.run.id}</h3>${table(
          [
            'step',
            'benchmark',
            'n',
            'queries',
            `Avg@${r.evaluations[0]?.n ?? 'n'} %`,
            `Pass@${r.evaluations[0]?.n ?? 'n'} %`,
            'tokens/query',
            'calls/query',
            'p50 ms',
          ],
          r.evaluations.map((e) => [
            e.step,
            e.benchmark,
            e.n,
            e.queries,
            pct(e.avgAtN),
            pct(e.passAtN),
            fmt(e.tokensPerQuery),
            fmt(e.callsPerQuery),
            fmt(e.latencyP50Ms),
          ]),
        )}`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;margin:24px;color:#1d2330;max-width:1040px}table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}th,td{border:1px solid #ccd;padding:3px 8px;text-align:left}th{background:#eef1f6}.charts{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:8px}.charts svg{border:1px solid #e3e6ee;width:100%;height:auto}.config{display:flex;flex-wrap:wrap;gap:0 24px;align-items:flex-start}h4{margin:8px 0 0;font-size:13px}pre{background:#f6f7fa;padding:8px;font-size:12px;overflow:auto}small{color:#667}.nowrap td,.nowrap th{white-space:nowrap}td{overflow-wrap:anywhere}
@page{size:A4;margin:12mm 10mm}@media print{body{margin:0;max-width:none;font-size:11px}.full-config{display:none}table{font-size:9.5px}th,td{padding:2px 4px}.nowrap table{font-size:8.5px}.nowrap th,.nowrap td{padding:2px 3px}.charts svg{break-inside:avoid}h2{break-after:avoid}}</style>
</head><body>
<h1>${escapeHtml(title)}</h1>
<p><small>Generated ${new Date(data.generatedAt).toISOString()} by SRPO Lab.</small></p>
${data.suite ? suiteSectionHtml(data.suite) : ''}
<h2>Runs</h2>
<div class="nowrap">${table(
    RUN_HEAD,
    data.runs.map((r) => runLine(r.run)),
  )}</div>
<p><small>Training ended by: ${escapeHtml(data.runs.map(endedByLine).join('; '))}.</small></p>
<h2>Evaluation (each run's last: final unless marked, mean ± sample std over seeds, %)</h2>
<div class="nowrap">${table(evalTab.head, evalTab.rows)}</div>
<h2>Curves</h2>
<div class="charts">
${charts}
</div>
${
  diff.length
    ? `<h2>Config differences</h2>${table(
        ['field', ...data.runs.map((r) => `run ${r.run.id}`)],
        diff.map((d) => [d.path, ...d.values.map((v) => JSON.stringify(v) ?? '–')]),
      )}`
    : ''
}
${evalDetail}
<h2>Configs</h2>
${configs}
</body></html>
`;
}

/** Markdown: runs, evaluation table, last value of each charted metric, config diff. */
export function markdownReport(data: ReportData): string {
  const cell = (c: string | number | MdCell) => (typeof c === 'object' ? c.md : escapeMarkdown(String(c)));
  const row = (cells: (string | number | MdCell)[]) => `| ${cells.map(cell).join(' | ')} |`;
  const tableMd = (head: string[], rows: (string | number | MdCell)[][]) =>
    [row(head), `| ${head.map(() => '---').join(' | ')} |`, ...rows.map(row)].join('\n');
  const out: string[] = [
    `# SRPO Lab report: ${data.runs.map((r) => `run ${r.run.id} (${escapeMarkdown(r.run.name)})`).join(', ')}`,
    '',
    `Generated ${new Date(data.generatedAt).toISOString()}.`,
  ];
  if (data.suite) out.push('', suiteSectionMarkdown(data.suite));
  out.push(
    '',
    '## Runs',
    '',
    tableMd(
      RUN_HEAD,
      data.runs.map((r) => runLine(r.run)),
    ),
  );
  out.push('', `Training ended by: ${escapeMarkdown(data.runs.map(endedByLine).join('; '))}.`);
  out.push('', "## Evaluation (each run's last: final unless marked, %, mean ± sample std over seeds)", '');
  const evalTab = evaluationTable(data);
  out.push(tableMd(evalTab.head, evalTab.rows));
  out.push('', '## Last values', '');
  const keys = REPORT_CHART_KEYS.filter((k) => data.runs.some((r) => r.series[k]?.length));
  out.push(
    tableMd(
      ['metric', 'key', ...data.runs.map((r) => `run ${r.run.id}`)],
      // Titles are the catalogue's own text (no user input): written as they are, not escaped.
      keys.map((k) => [
        { md: isRateKey(k) ? `${nTitle(k, evalTab.n)}, %` : nTitle(k, evalTab.n) },
        { md: markdownCode(k) },
        ...data.runs.map((r) => lastValue(k, r.series[k]?.at(-1)?.value)),
      ]),
    ),
  );
  out.push('', '## Smoothed reward/mean (EMA 0.6)', '', smoothedRewardTable(data, tableMd));
  if (data.runs.length > 1) {
    const diff = configsDiff(data.runs.map((r) => r.run.config));
    out.push(
      '',
      '## Config differences',
      '',
      tableMd(
        ['field', ...data.runs.map((r) => `run ${r.run.id}`)],
        diff.map((d) => [d.path, ...d.values.map((v) => ({ md: markdownCode(JSON.stringify(v) ?? '–') }))]),
      ),
    );
  }
  for (const r of data.runs) {
    const { changes, fields } = configSummary(r);
    out.push(
      '',
      `## Config of run ${r.run.id}`,
      '',
      tableMd(
        ['field', 'value'],
        fields.map(([f, v]) => [f, { md: markdownCode(v) }]),
      ),
    );
    if (changes)
      out.push(
        '',
        changes.length ? `Changes from preset ${escapeMarkdown(String(r.run.preset))}:` : `No change from preset ${escapeMarkdown(String(r.run.preset))}.`,
        ...(changes.length
          ? [
              '',
              tableMd(
                ['field', 'preset', 'run'],
                changes.map((d) => [{ md: markdownCode(d.path) }, { md: markdownCode(d.preset) }, { md: markdownCode(d.run) }]),
              ),
            ]
          : []),
      );
    const json = JSON.stringify(r.run.config, null, 2);
    // A fence longer than any backtick run inside: no value can close it early.
    const fence = '`'.repeat(Math.max(3, ...(json.match(/`+/g) ?? []).map((run) => run.length + 1)));
    out.push('', `Full config of run ${r.run.id}:`, '', `${fence}json`, json, fence);
  }
  return `${out.join('\n')}\n`;
}

/** Where a table row's evaluations come from: "final", or the steps of earlier ones (a stopped run's). */
const evalAt = (r: { final: boolean; evalSteps: number[] }) => (r.final ? 'final' : `step ${r.evalSteps.join(' / ')} (not final)`);

/**
 * The smoothed reward as a small table, one row per run: the EMA at the first step, at a
 * quarter, half and three quarters of the run, at the last step, and its lowest and highest.
 */
function smoothedRewardTable(data: ReportData, tableMd: (head: string[], rows: (string | number)[][]) => string): string {
  const rows = data.runs.map((r) => {
    const pts = r.series['reward/mean'] ?? [];
    const ema = emaSmooth(
      pts.map((p) => p.value),
      REPORT_SMOOTHING,
    );
    if (!pts.length) return [`run ${r.run.id}`, '–', '–', '–', '–', '–', '–', '–'];
    const at = (q: number) => {
      const i = Math.round(q * (pts.length - 1));
      return `${fmt(ema[i], 3)} at step ${pts[i].step}`;
    };
    const finite = ema.filter((v): v is number => v !== null && Number.isFinite(v));
    return [`run ${r.run.id}`, at(0), at(0.25), at(0.5), at(0.75), at(1), fmt(Math.min(...finite), 3), fmt(Math.max(...finite), 3)];
  });
  return tableMd(['run', 'first', '¼', '½', '¾', 'last', 'min', 'max'], rows);
}
