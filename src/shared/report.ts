/**
 * Run reports from API DTOs: a self-contained HTML page (inline CSS, charts as inline SVG, no
 * script, nothing fetched), Markdown, and CSV of metrics and of events. PDF is this HTML printed
 * by a browser (the web server's headless Chromium). Pure string building, browser-safe, so the
 * host (LabService.exportReport) and, if wanted, the renderer can both build reports.
 *
 * Not here: reading the store (labService.ts). Tested by test/server/api.test.ts (content) and
 * test/e2e/lab.test.ts (downloads from the UI).
 */
import { configsDiff, emaSmooth, evalTable, formatMeanStd } from './analysis';
import type { EvaluationDto, EventSummaryDto, RunDetail, SeriesMap } from './api';

export interface ReportRun {
  run: RunDetail;
  /** Downsampled series of the charted keys. */
  series: SeriesMap;
  evaluations: EvaluationDto[];
}

export interface ReportData {
  generatedAt: number;
  runs: ReportRun[];
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
] as const;

const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7'];

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const fmt = (v: number | null | undefined, digits = 4): string => (v === null || v === undefined || !Number.isFinite(v) ? '–' : Number(v.toPrecision(digits)).toString());

/** A small line chart as standalone SVG: one line per series, axes with min/max labels. */
export function svgLineChart(title: string, lines: { name: string; points: [number, number | null][] }[], width = 460, height = 190): string {
  const pad = { l: 48, r: 10, t: 22, b: 22 };
  const all = lines.flatMap((l) => l.points).filter((p): p is [number, number] => p[1] !== null && Number.isFinite(p[1]));
  const head = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeHtml(title)}"><rect width="100%" height="100%" fill="#fff"/><text x="${pad.l}" y="14" font-size="12" font-family="sans-serif" fill="#222">${escapeHtml(title)}</text>`;
  if (!all.length) return `${head}<text x="${width / 2}" y="${height / 2}" font-size="11" text-anchor="middle" fill="#888">no data</text></svg>`;
  let [x0, x1, y0, y1] = [Math.min(...all.map((p) => p[0])), Math.max(...all.map((p) => p[0])), Math.min(...all.map((p) => p[1])), Math.max(...all.map((p) => p[1]))];
  if (x1 === x0) x1 = x0 + 1;
  if (y1 === y0) [y0, y1] = [y0 - 0.5, y1 + 0.5];
  const sx = (x: number) => pad.l + ((x - x0) / (x1 - x0)) * (width - pad.l - pad.r);
  const sy = (y: number) => height - pad.b - ((y - y0) / (y1 - y0)) * (height - pad.t - pad.b);
  const axes =
    `<line x1="${pad.l}" y1="${height - pad.b}" x2="${width - pad.r}" y2="${height - pad.b}" stroke="#999"/>` +
    `<line x1="${pad.l}" y1="${pad.t}" x2="${pad.l}" y2="${height - pad.b}" stroke="#999"/>` +
    `<text x="${pad.l - 4}" y="${pad.t + 8}" font-size="10" text-anchor="end" font-family="sans-serif">${fmt(y1, 3)}</text>` +
    `<text x="${pad.l - 4}" y="${height - pad.b}" font-size="10" text-anchor="end" font-family="sans-serif">${fmt(y0, 3)}</text>` +
    `<text x="${pad.l}" y="${height - 6}" font-size="10" font-family="sans-serif">step ${fmt(x0)}</text>` +
    `<text x="${width - pad.r}" y="${height - 6}" font-size="10" text-anchor="end" font-family="sans-serif">${fmt(x1)}</text>`;
  const paths = lines
    .map((l, i) => {
      const segs: string[] = [];
      let pen = false;
      for (const [x, y] of l.points) {
        if (y === null || !Number.isFinite(y)) {
          pen = false;
          continue;
        }
        segs.push(`${pen ? 'L' : 'M'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`);
        pen = true;
      }
      const color = PALETTE[i % PALETTE.length];
      const dots = l.points.length <= 40 ? l.points.filter((p) => p[1] !== null).map(([x, y]) => `<circle cx="${sx(x).toFixed(1)}" cy="${sy(y!).toFixed(1)}" r="2" fill="${color}"/>`).join('') : '';
      return `<path d="${segs.join('')}" fill="none" stroke="${color}" stroke-width="1.5"><title>${escapeHtml(l.name)}</title></path>${dots}`;
    })
    .join('');
  const legend = lines.length > 1 ? lines.map((l, i) => `<text x="${width - pad.r}" y="${14 + i * 11}" font-size="10" text-anchor="end" fill="${PALETTE[i % PALETTE.length]}" font-family="sans-serif">${escapeHtml(l.name)}</text>`).join('') : '';
  return `${head}${axes}${paths}${legend}</svg>`;
}

function evalTableRows(data: ReportData) {
  return evalTable(data.runs.map((r) => ({ runId: r.run.id, name: r.run.name, seed: r.run.seed, config: r.run.config, evaluations: r.evaluations })));
}

const runLine = (r: RunDetail) => [r.id, r.name, r.status, r.preset ?? 'custom', r.workflow, r.objective, r.backend ?? '–', r.seed, `${Math.max(0, r.lastStep + 1)}/${r.steps}`, r.bestEval ? fmt(r.bestEval.value) : '–'];
const RUN_HEAD = ['id', 'name', 'status', 'preset', 'workflow', 'objective', 'backend', 'seed', 'steps', 'best eval'];

/** The self-contained HTML report (charts inline SVG, no scripts, no external resources). */
export function htmlReport(data: ReportData): string {
  const title = data.runs.length === 1 ? `SRPO Lab report: run ${data.runs[0].run.id} ${data.runs[0].run.name}` : `SRPO Lab report: runs ${data.runs.map((r) => r.run.id).join(', ')}`;
  const table = (head: string[], rows: (string | number)[][]) =>
    `<table><thead><tr>${head.map((h) => `<th>${escapeHtml(String(h))}</th>`).join('')}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(String(c))}</td>`).join('')}</tr>`).join('')}</tbody></table>`;
  const et = evalTableRows(data);
  const evalHead = ['config', 'seeds', ...et.benchmarks.flatMap((b) => [`${b} Avg@n`, `${b} Pass@n`]), 'macro Avg', 'macro Pass'];
  const evalRows = et.rows.map((r) => [r.label, r.seeds.join(' '), ...et.benchmarks.flatMap((b) => [formatMeanStd(r.cells[b]?.avg), formatMeanStd(r.cells[b]?.pass)]), formatMeanStd(r.macro.avg), formatMeanStd(r.macro.pass)]);
  const charts = REPORT_CHART_KEYS.filter((k) => data.runs.some((r) => r.series[k]?.length))
    .map((k) =>
      svgLineChart(
        k,
        data.runs.map((r) => ({ name: `${r.run.id} ${r.run.name}`, points: (r.series[k] ?? []).map((p) => [p.step, p.value] as [number, number | null]) })),
      ),
    )
    .join('\n');
  const diff = data.runs.length > 1 ? configsDiff(data.runs.map((r) => r.run.config)) : [];
  const configs = data.runs
    .map((r) => `<details${data.runs.length === 1 ? ' open' : ''}><summary>Config of run ${r.run.id}</summary><pre>${escapeHtml(JSON.stringify(r.run.config, null, 2))}</pre></details>`)
    .join('\n');
  const evalDetail = data.runs
    .map((r) => `<h3>Evaluations of run ${r.run.id}</h3>${table(['step', 'benchmark', 'n', 'queries', 'Avg@n', 'Pass@n', 'tokens/query', 'calls/query', 'p50 ms'], r.evaluations.map((e) => [e.step, e.benchmark, e.n, e.queries, fmt(e.avgAtN), fmt(e.passAtN), fmt(e.tokensPerQuery), fmt(e.callsPerQuery), fmt(e.latencyP50Ms)]))}`)
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;margin:24px;color:#1d2330;max-width:1040px}table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}th,td{border:1px solid #ccd;padding:3px 8px;text-align:left}th{background:#eef1f6}.charts{display:flex;flex-wrap:wrap;gap:8px}.charts svg{border:1px solid #e3e6ee}pre{background:#f6f7fa;padding:8px;font-size:12px;overflow:auto}small{color:#667}</style>
</head><body>
<h1>${escapeHtml(title)}</h1>
<p><small>Generated ${new Date(data.generatedAt).toISOString()} by SRPO Lab.</small></p>
<h2>Runs</h2>
${table(RUN_HEAD, data.runs.map((r) => runLine(r.run)))}
<h2>Evaluation (final, mean ± sample std over seeds, %)</h2>
${table(evalHead, evalRows)}
<h2>Curves</h2>
<div class="charts">
${charts}
</div>
${diff.length ? `<h2>Config differences</h2>${table(['field', ...data.runs.map((r) => `run ${r.run.id}`)], diff.map((d) => [d.path, ...d.values.map((v) => JSON.stringify(v) ?? '–')]))}` : ''}
${evalDetail}
<h2>Configs</h2>
${configs}
</body></html>
`;
}

/** Markdown: runs, evaluation table, last value of each charted metric, config diff. */
export function markdownReport(data: ReportData): string {
  const row = (cells: (string | number)[]) => `| ${cells.map((c) => String(c).replace(/\|/g, '\\|')).join(' | ')} |`;
  const tableMd = (head: string[], rows: (string | number)[][]) => [row(head), row(head.map(() => '---')), ...rows.map(row)].join('\n');
  const et = evalTableRows(data);
  const out: string[] = [`# SRPO Lab report: ${data.runs.map((r) => `run ${r.run.id} (${r.run.name})`).join(', ')}`, '', `Generated ${new Date(data.generatedAt).toISOString()}.`, '', '## Runs', '', tableMd(RUN_HEAD, data.runs.map((r) => runLine(r.run)))];
  out.push('', '## Evaluation (final, %, mean ± sample std over seeds)', '');
  out.push(
    tableMd(
      ['config', 'seeds', ...et.benchmarks.flatMap((b) => [`${b} Avg@n`, `${b} Pass@n`]), 'macro Avg', 'macro Pass'],
      et.rows.map((r) => [r.label, r.seeds.join(' '), ...et.benchmarks.flatMap((b) => [formatMeanStd(r.cells[b]?.avg), formatMeanStd(r.cells[b]?.pass)]), formatMeanStd(r.macro.avg), formatMeanStd(r.macro.pass)]),
    ),
  );
  out.push('', '## Last values', '');
  const keys = REPORT_CHART_KEYS.filter((k) => data.runs.some((r) => r.series[k]?.length));
  out.push(tableMd(['metric', ...data.runs.map((r) => `run ${r.run.id}`)], keys.map((k) => [k, ...data.runs.map((r) => fmt(r.series[k]?.at(-1)?.value))])));
  out.push('', '## Smoothed reward/mean (EMA 0.6)', '');
  for (const r of data.runs) {
    const s = r.series['reward/mean'] ?? [];
    out.push(`- run ${r.run.id}: ${emaSmooth(s.map((p) => p.value), 0.6).map((v) => fmt(v, 3)).join(', ') || '–'}`);
  }
  if (data.runs.length > 1) {
    const diff = configsDiff(data.runs.map((r) => r.run.config));
    out.push('', '## Config differences', '', tableMd(['field', ...data.runs.map((r) => `run ${r.run.id}`)], diff.map((d) => [d.path, ...d.values.map((v) => `\`${JSON.stringify(v) ?? '–'}\``)])));
  }
  for (const r of data.runs) out.push('', `## Config of run ${r.run.id}`, '', '```json', JSON.stringify(r.run.config, null, 2), '```');
  return `${out.join('\n')}\n`;
}

function csvCell(v: unknown): string {
  const s = v === null || v === undefined ? '' : typeof v === 'number' && !Number.isFinite(v) ? 'NaN' : String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvLines(head: string[], rows: unknown[][]): string {
  return `${[head, ...rows].map((r) => r.map(csvCell).join(',')).join('\n')}\n`;
}

/** Metrics CSV: run,step,key,value,wall_time (null values as NaN). */
export function metricsCsv(rows: { runId: number; key: string; step: number; value: number | null; wallTime: number }[]): string {
  return csvLines(['run', 'step', 'key', 'value', 'wall_time'], rows.map((r) => [r.runId, r.step, r.key, r.value ?? NaN, r.wallTime]));
}

export const EVENT_CSV_HEAD = ['run', 'step', 'event_id', 'episode_id', 'key', 'seq', 'kind', 'state', 'group', 'k', 'members', 'invalid_members', 'complete', 'drop_reason', 'reward', 'advantage', 'log_ratio', 'ratio', 'clipped'];

export function eventsCsv(events: EventSummaryDto[]): string {
  return csvLines(
    EVENT_CSV_HEAD,
    events.map((e) => [e.runId, e.step, e.id, e.episodeId, e.key, e.seq, e.kind, e.stateId, e.group, e.expectedK, e.memberCount, e.invalidMembers, e.complete, e.dropReason, e.reward, e.advantage, e.logRatio, e.ratio, e.clipped]),
  );
}
