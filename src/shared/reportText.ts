/**
 * The text primitives of the reports (report.ts, reportSuite.ts, reportCsv.ts): user text escaped
 * for HTML and Markdown (no raw HTML, links or table cells can be injected), Markdown code spans,
 * significant-digit numbers, and CSV lines (RFC 4180 quoting, non-finite numbers as NaN). Pure,
 * browser-safe. Tested by test/shared/reportEscape.test.ts and through the reports' tests.
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

function csvCell(v: unknown): string {
  const s = v === null || v === undefined ? '' : typeof v === 'number' && !Number.isFinite(v) ? 'NaN' : String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvLines(head: string[], rows: unknown[][]): string {
  return `${[head, ...rows].map((r) => r.map(csvCell).join(',')).join('\n')}\n`;
}
