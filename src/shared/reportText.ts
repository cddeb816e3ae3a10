/**
 * The text primitives of the reports (report.ts, reportSuite.ts, reportCsv.ts): user text escaped
 * for HTML and Markdown (no raw HTML, links or table cells can be injected), Markdown code spans,
 * significant-digit numbers, and CSV lines (RFC 4180 quoting, non-finite numbers as NaN, formula
 * cells neutralised). csvCell is the one CSV cell writer of the lab: the metrics and events CSVs
 * (reportCsv.ts: UI downloads, the API's exportReport, `srpo-lab export --format csv`, a chart
 * panel's CSV) and the suite tables (reportSuite.ts: `csv-table`, `suite show --format csv`) all
 * go through csvLines. Pure, browser-safe. Tested by test/shared/reportEscape.test.ts and
 * test/shared/csvFormula.test.ts, and through the reports' tests.
 */

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** User text as Markdown inline text: no raw HTML, no Markdown syntax, no line breaks, no cell breaks. */
export function escapeMarkdown(s: string): string {
  return s
    .replace(/\s*[\r\n]+\s*/g, ' ')
    .replace(/[\\`*_[\]()#!|~]/g, (c) => `\\${c}`)
    .replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!);
}

/** User text as a Markdown code span (literal, HTML not interpreted), safe inside a table cell. */
export function markdownCode(s: string): string {
  const one = s.replace(/[\r\n]+/g, ' ');
  const longest = Math.max(0, ...(one.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = one.startsWith('`') || one.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${one}${pad}${fence}`.replace(/\|/g, '\\|');
}

/** A number to `digits` significant digits; `–` for null, undefined and non-finite values. */
export const fmt = (v: number | null | undefined, digits = 4): string =>
  v === null || v === undefined || !Number.isFinite(v) ? '–' : Number(v.toPrecision(digits)).toString();

/** A string a spreadsheet reads as a number (kept as is: `-0.5` must stay a number, not text). */
const PLAIN_NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
/** What makes a spreadsheet read a cell as a formula (OWASP "CSV injection"): = + - @ tab, CR. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV cell. RFC 4180 quoting (a cell holding `"`, `,`, LF or CR is quoted, its quotes
 * doubled); numbers as written (non-finite as NaN); text that a spreadsheet would evaluate as a
 * formula (it starts with = + - @, a tab or a carriage return, and is not a plain number) gets a
 * leading single quote and is always quoted, as OWASP's CSV injection page advises, so a row label
 * `=HYPERLINK(...)` opens as the text it is.
 */
export function csvCell(v: unknown): string {
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'NaN';
  const s = v === null || v === undefined ? '' : String(v);
  if (FORMULA_START.test(s) && !PLAIN_NUMBER.test(s)) return `"'${s.replace(/"/g, '""')}"`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** CSV text: a header line, then one line per row, each cell through csvCell; ends with a newline. */
export function csvLines(head: string[], rows: unknown[][]): string {
  return `${[head, ...rows].map((r) => r.map(csvCell).join(',')).join('\n')}\n`;
}
