/**
 * CSV exports neutralise formulas (issue 26, point 7: suite row labels `=HYPERLINK(...)` and
 * `@SUM(1+1)*cmd|x` reached the `csv-table` export unchanged and a spreadsheet would evaluate
 * them). Every CSV of the lab goes through one cell writer (reportText.ts csvCell): the suite
 * tables, the metrics and events CSVs (UI downloads, `export --format csv`, a chart panel's CSV).
 * Text starting with = + - @, a tab or a carriage return opens as text (a leading single quote,
 * quoted); numbers, negative ones included, stay numbers. The CSV is read back with a small
 * RFC 4180 reader written here, not with the code under test.
 */
import { describe, expect, it } from 'vitest';
import type { EventSummary, StoredEvaluation } from '../../src/shared/records';
import { eventsCsv, metricsCsv, suiteTableCsv } from '../../src/shared/report';
import { csvCell } from '../../src/shared/reportText';
import { buildSuiteTable, type SuiteTableRun } from '../../src/shared/suites';

/** RFC 4180: cells split on commas outside quotes, `""` inside quotes is one quote. */
function readCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += ch;
  }
  if (cell !== '' || row.length) rows.push([...row, cell]);
  return rows;
}

/** What a spreadsheet evaluates: a cell whose text (after CSV unquoting) starts with one of these. */
const evaluated = (cell: string): boolean => /^[=+\-@\t\r]/.test(cell) && !/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(cell);

const HYPERLINK = '=HYPERLINK("http://x","y")';
const SUM = '@SUM(1+1)*cmd|x';

const ev = (benchmark: string, avgAtN: number): StoredEvaluation => ({
  step: 5,
  benchmark,
  n: 4,
  queries: 10,
  avgAtN,
  passAtN: 1,
  tokensPerQuery: 10,
  callsPerQuery: 3,
  toolCallsPerQuery: 0,
  successesPerMTok: 1000,
  latencyP50Ms: 10,
  latencyP95Ms: 20,
});

describe('CSV exports neutralise formulas', () => {
  it('suite table row labels =HYPERLINK(...) and @SUM(1+1)*cmd|x open as text', () => {
    const runs: SuiteTableRun[] = [
      { label: HYPERLINK, seed: 1, runId: 1, evaluations: [ev('x', 0.5)], gradNorm: [1, 2] },
      { label: SUM, seed: 1, runId: 2, evaluations: [ev('x', 0.25)], gradNorm: [1, 3] },
    ];
    const rows = readCsv(suiteTableCsv(buildSuiteTable(runs, [HYPERLINK, SUM], HYPERLINK)));
    expect(rows).toHaveLength(3);
    expect(rows[1][0]).toBe(`'${HYPERLINK}`);
    expect(rows[2][0]).toBe(`'${SUM}`);
    for (const r of rows) for (const cell of r) expect(evaluated(cell)).toBe(false);
    // The differences against the baseline are negative numbers and stay numbers.
    const diff = rows[2][rows[0].indexOf('diff_avg_mean')];
    expect(Number(diff)).toBeCloseTo(-0.25, 12);
  });

  it('metric keys and event keys starting with + - = @ tab or CR are neutralised; negative numbers stay numeric', () => {
    const keys = ['+cmd|calc', '-2+3', '=1+1', '@A1', '\tx', '\rx', 'plain'];
    const text = metricsCsv(keys.map((key, i) => ({ runId: 1, key, step: i, value: -0.5, wallTime: 1 })));
    const rows = readCsv(text).slice(1);
    expect(rows.map((r) => r[2])).toEqual(keys.map((k) => (k === 'plain' ? k : `'${k}`)));
    expect(rows.every((r) => r[3] === '-0.5')).toBe(true);
    expect(text).toContain(',-0.5,'); // written bare, not quoted text
    const events = readCsv(
      eventsCsv([
        {
          runId: 1,
          step: 0,
          id: 1,
          episodeId: 1,
          key: '=evil()',
          seq: 0,
          kind: 'call',
          stateId: 's',
          group: 'g',
          expectedK: 2,
          memberCount: 2,
          invalidMembers: 0,
          complete: true,
          dropReason: null,
          reward: -1,
          advantage: -0.25,
          logRatio: null,
          ratio: null,
          clipped: null,
        } as Partial<EventSummary> as EventSummary,
      ]),
    );
    expect(events[1][events[0].indexOf('key')]).toBe("'=evil()");
    expect(events[1][events[0].indexOf('advantage')]).toBe('-0.25');
  });

  it('numbers and numeric text are written as numbers; other text only quoted when it must be', () => {
    expect(csvCell(-0.5)).toBe('-0.5');
    expect(csvCell('-0.5')).toBe('-0.5');
    expect(csvCell('+1e-3')).toBe('+1e-3');
    expect(csvCell(-Infinity)).toBe('NaN');
    expect(csvCell('-')).toBe(`"'-"`);
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('line\rbreak')).toBe('"line\rbreak"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('=A1+"x"')).toBe(`"'=A1+""x"""`);
    expect(csvCell(null)).toBe('');
  });
});
