/**
 * Reports escape what users typed (issue: the Markdown report inserted run names verbatim, so raw
 * HTML passed through to whatever renders the file). Run names carrying HTML, Markdown links,
 * table pipes, line breaks and backticks come out inert in Markdown (entities, backslash escapes,
 * code spans with a longer fence, one line per cell) and in HTML.
 */
import { describe, expect, it } from 'vitest';
import type { RunDetail } from '../../src/shared/api';
import { escapeMarkdown, htmlReport, markdownCode, markdownReport, type ReportData } from '../../src/shared/report';

const NASTY = '<img src=x onerror=alert(1)>|[click](javascript:alert(2))\n# owned `<b>x</b>`';

function run(id: number, name: string): RunDetail {
  return {
    id,
    name,
    preset: 'math-quick',
    status: 'completed',
    workflow: 'math',
    objective: 'srpo',
    backend: 'cpu',
    seed: id,
    steps: 4,
    lastStep: 3,
    createdAt: 0,
    startedAt: 0,
    endedAt: 1,
    error: null,
    bestEval: null,
    active: false,
    config: { name, seed: id, steps: 4 },
    checkpoints: [],
  };
}

const data: ReportData = {
  generatedAt: Date.UTC(2026, 0, 1),
  runs: [
    { run: run(1, NASTY), series: { 'reward/mean': [{ step: 1, value: 0.5, wallTime: 0 }] }, evaluations: [] },
    { run: run(2, 'plain-s2'), series: { 'reward/mean': [{ step: 1, value: 0.25, wallTime: 0 }] }, evaluations: [] },
  ],
};

/** The Markdown outside code blocks and code spans (where text is literal, never HTML or links). */
const prose = (md: string) => md.replace(/^(`{3,})json\n[\s\S]*?\n\1$/gm, '').replace(/(?<!\\)(`+)[\s\S]*?\1/g, '');

/** Cells of a Markdown table row: split on pipes not escaped with a backslash. */
const cells = (line: string) =>
  line
    .trim()
    .slice(1, -1)
    .split(/(?<!\\)\|/);

describe('Markdown report escaping', () => {
  const md = markdownReport(data);

  it('lets no raw HTML through', () => {
    expect(prose(md)).not.toMatch(/<img|<b>|<\/b>|<script/i);
    expect(prose(md).length).toBeGreaterThan(md.length / 3); // the check is not vacuous
    expect(md).toContain('&lt;img src=x onerror=alert\\(1\\)&gt;');
  });

  it('keeps each name on its line and in its cell', () => {
    // Only the report's own headings start a line with '#'.
    expect(
      md
        .split('\n')
        .filter((l) => l.startsWith('#'))
        .every((l) => /^#+ (SRPO Lab report|Runs|Evaluation|Last values|Smoothed|Config)/.test(l)),
    ).toBe(true);
    const runsTable = md
      .split('## Runs')[1]
      .split('## ')[0]
      .split('\n')
      .filter((l) => l.startsWith('|'));
    expect(runsTable).toHaveLength(4); // head, rule, two runs
    const width = cells(runsTable[0]).length;
    expect(width).toBe(10);
    for (const line of runsTable) expect(cells(line), line).toHaveLength(width);
  });

  it('makes no link out of a name', () => {
    expect(prose(md)).not.toMatch(/(?<!\\)\]\(/);
    expect(md).toContain('\\[click\\]\\(javascript:alert\\(2\\)\\)');
  });

  it('puts config values in code spans no backtick inside can close', () => {
    const diffRow = md
      .split('## Config differences')[1]
      .split('\n')
      .find((l) => l.startsWith('| name'))!;
    // JSON of the name has single backticks: the fence is two. Pipes inside stay escaped for the table.
    expect(cells(diffRow)[1].trim()).toBe('``"<img src=x onerror=alert(1)>\\|[click](javascript:alert(2))\\n# owned `<b>x</b>`"``');
    expect(cells(diffRow)).toHaveLength(3);
  });

  it('escapeMarkdown and markdownCode on their own', () => {
    expect(escapeMarkdown('a_b *c* <d> & e|f\r\ng')).toBe('a\\_b \\*c\\* &lt;d&gt; &amp; e\\|f g');
    expect(markdownCode('x')).toBe('`x`');
    expect(markdownCode('a``b')).toBe('```a``b```');
    expect(markdownCode('`edge`')).toBe('`` `edge` ``');
  });
});

describe('HTML report escaping', () => {
  it('renders the name as text', () => {
    const html = htmlReport(data);
    expect(html).not.toMatch(/<img|<b>x/);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });
});
