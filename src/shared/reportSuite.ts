/**
 * Suite tables (src/shared/suites.ts) in the report formats: the paper's Tables 1-3 (quality per
 * benchmark with paired differences, cost, training dynamics from the grad-norm curve) as plain
 * rows, HTML, Markdown (what `srpo-lab suite show` prints) and CSV. Pure, browser-safe.
 * Tested by test/core/suites/suiteTable.test.ts and test/shared/suiteTable.test.ts.
 */
import { formatMeanStd } from './analysis';
import { escapeHtml, escapeMarkdown, fmt, csvLines } from './reportText';
import { COST_COLUMNS, COST_LABELS, formatDifference, formatPlain, type SuiteDetail, type SuiteTable } from './suites';

/** The three suite tables as header + rows of plain strings (escaped by each format). */
export function suiteTableRows(t: SuiteTable): { title: string; head: string[]; rows: string[][] }[] {
  const quality = {
    title: `Quality (final evaluation, %, mean ± sample std over seeds; Δ: paired difference vs "${t.baseline}" in points, [95% t interval], (seeds won/pairs))`,
    head: ['row', 'seeds', ...t.benchmarks.flatMap((b) => [`${b} Avg@n`, `${b} Pass@n`]), 'macro Avg@n', 'macro Pass@n', 'Δ macro Avg@n', 'Δ macro Pass@n'],
    rows: t.rows.map((r) => [
      r.label,
      r.seeds.join(' ') || '–',
      ...t.benchmarks.flatMap((b) => [formatMeanStd(r.cells[b]?.avg), formatMeanStd(r.cells[b]?.pass)]),
      formatMeanStd(r.macro.avg),
      formatMeanStd(r.macro.pass),
      r.label === t.baseline ? 'baseline' : formatDifference(r.diff?.avg),
      r.label === t.baseline ? 'baseline' : formatDifference(r.diff?.pass),
    ]),
  };
  const cost = {
    title: 'Cost (final evaluation, per query, mean over benchmarks; U_tok: correct answers per million generated tokens)',
    head: ['row', ...COST_COLUMNS.map((c) => COST_LABELS[c])],
    rows: t.rows.map((r) => [r.label, ...COST_COLUMNS.map((c) => formatPlain(r.cost[c]))]),
  };
  const dynamics = {
    title: 'Training dynamics (grad/norm over the run: mean, coefficient of variation, range over all seeds)',
    head: ['row', 'grad-norm mean', 'CV', 'range'],
    rows: t.rows.map((r) => [
      r.label,
      formatPlain(r.dynamics.gradMean),
      formatPlain(r.dynamics.gradCv),
      r.dynamics.gradMin === null ? '–' : `[${fmt(r.dynamics.gradMin)}, ${fmt(r.dynamics.gradMax)}]`,
    ]),
  };
  return [quality, cost, dynamics];
}

function suiteHeading(s: SuiteDetail): string {
  return `Suite ${s.id} "${s.name}": ${s.rows.length} rows x ${s.seeds.length} seeds (${s.counts.completed ?? 0} of ${s.total} runs completed)`;
}

export function suiteSectionHtml(s: SuiteDetail): string {
  const table = (head: string[], rows: string[][]) =>
    `<table><thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`).join('')}</tbody></table>`;
  return `<h2>${escapeHtml(suiteHeading(s))}</h2>\n${suiteTableRows(s.table)
    .map((t) => `<h3>${escapeHtml(t.title)}</h3>${table(t.head, t.rows)}`)
    .join('\n')}`;
}

/** The suite's tables in Markdown (also what `srpo-lab suite show` prints). */
export function suiteSectionMarkdown(s: SuiteDetail): string {
  const row = (cells: string[]) => `| ${cells.map(escapeMarkdown).join(' | ')} |`;
  const parts = [`## ${escapeMarkdown(suiteHeading(s))}`];
  for (const t of suiteTableRows(s.table))
    parts.push('', `### ${escapeMarkdown(t.title)}`, '', row(t.head), `| ${t.head.map(() => '---').join(' | ')} |`, ...t.rows.map(row));
  return parts.join('\n');
}

/** One CSV line per row: every figure of the three tables as numbers (fractions, not %). */
export function suiteTableCsv(t: SuiteTable): string {
  const head = ['row', 'seeds', 'n'];
  for (const b of t.benchmarks) head.push(`${b}_avg_mean`, `${b}_avg_std`, `${b}_pass_mean`, `${b}_pass_std`);
  head.push('macro_avg_mean', 'macro_avg_std', 'macro_pass_mean', 'macro_pass_std');
  for (const k of ['avg', 'pass']) head.push(`diff_${k}_mean`, `diff_${k}_lo95`, `diff_${k}_hi95`, `diff_${k}_wins`, `diff_${k}_pairs`);
  for (const c of COST_COLUMNS) head.push(`${c}_mean`, `${c}_std`);
  head.push('grad_mean_mean', 'grad_mean_std', 'grad_cv_mean', 'grad_cv_std', 'grad_min', 'grad_max');
  const rows = t.rows.map((r) => {
    const line: unknown[] = [r.label, r.seeds.join(' '), r.n];
    for (const b of t.benchmarks) line.push(r.cells[b]?.avg.mean, r.cells[b]?.avg.std, r.cells[b]?.pass.mean, r.cells[b]?.pass.std);
    line.push(r.macro.avg.mean, r.macro.avg.std, r.macro.pass.mean, r.macro.pass.std);
    for (const d of [r.diff?.avg, r.diff?.pass]) line.push(d?.mean, d?.lo, d?.hi, d?.wins, d?.n);
    for (const c of COST_COLUMNS) line.push(r.cost[c].mean, r.cost[c].std);
    line.push(r.dynamics.gradMean.mean, r.dynamics.gradMean.std, r.dynamics.gradCv.mean, r.dynamics.gradCv.std, r.dynamics.gradMin, r.dynamics.gradMax);
    return line;
  });
  return csvLines(head, rows);
}
