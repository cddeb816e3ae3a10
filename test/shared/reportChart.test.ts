/**
 * The report's figures (src/shared/reportChart.ts) and what report.ts puts around them: axes
 * with titles and tick labels, gridlines, the legend beside the plot, raw under EMA, seeds as a
 * mean ± std band, evaluation rates in percent with Avg@<n>, a stopped run's evaluation not
 * called final, and the Markdown's smoothed reward as a small table.
 */
import { describe, expect, it } from 'vitest';
import { evalTable } from '../../src/shared/analysis';
import type { RunDetail } from '../../src/shared/api';
import type { StoredEvaluation } from '../../src/shared/records';
import { htmlReport, markdownReport, type ReportData } from '../../src/shared/report';
import { figureSeries, figureSvg, valueAt } from '../../src/shared/reportChart';

const texts = (svg: string) => [...svg.matchAll(/<text[^>]*>(?:<title>[^<]*<\/title>)?([^<]*)<\/text>/g)].map((m) => m[1]);

describe('figureSvg', () => {
  const svg = figureSvg({
    title: 'Training reward',
    yTitle: 'reward/mean',
    xTitle: 'step',
    series: [
      {
        name: '1 math-quick-s1',
        line: [
          [0, 0.1],
          [1, 0.2],
          [2, 0.35],
          [3, 0.5],
        ],
        raw: [
          [0, 0.1],
          [1, 0.3],
          [2, 0.4],
          [3, 0.6],
        ],
      },
      {
        name: '2 a-very-long-run-name-that-would-wrap-s2',
        line: [
          [0, 0.2],
          [1, 0.25],
          [2, 0.3],
          [3, 0.45],
        ],
      },
    ],
  });

  it('has a title, both axis titles, y ticks on nice values and x ticks on whole steps', () => {
    const t = texts(svg);
    expect(t).toContain('Training reward');
    expect(t).toContain('step');
    expect(t).toContain('reward/mean');
    // y: 0.1..0.6 padded by 6% -> 0.0 .. 0.8 by 0.2 (the 1-2-5 rule); x: 0 1 2 3.
    for (const y of ['0.0', '0.2', '0.4', '0.6', '0.8']) expect(t).toContain(y);
    for (const x of ['0', '1', '2', '3']) expect(t).toContain(x);
    expect(t).not.toContain('0.5 '); // no fractional steps
    expect((svg.match(/stroke="#e6e9ef"/g) ?? []).length).toBeGreaterThanOrEqual(8); // gridlines
  });

  it('puts the legend beside the plot, long names shortened with the full name kept', () => {
    const entries = [...svg.matchAll(/<g class="legend-entry">.*?<text x="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(entries).toHaveLength(2);
    // Right of the plot frame (the frame's rect ends at width - legend - margin).
    const frame = /<rect x="56" y="26" width="([\d.]+)"/.exec(svg)!;
    for (const x of entries) expect(x).toBeGreaterThan(56 + Number(frame[1]));
    expect(svg).toContain('<title>2 a-very-long-run-name-that-would-wrap-s2</title>');
    expect(texts(svg).some((s) => s.endsWith('…') && s.length <= 22)).toBe(true);
  });

  it('draws the raw line faint under the EMA', () => {
    expect(svg).toMatch(/class="raw"[^>]*stroke-opacity="0.3"/);
    expect((svg.match(/class="line"/g) ?? []).length).toBe(2);
  });

  it('shows fractions in percent when asked', () => {
    const pct = figureSvg({
      title: 'Avg@4',
      yTitle: 'eval/macro/avg',
      xTitle: 'step',
      percent: true,
      series: [
        {
          name: 'a',
          line: [
            [0, 0.1],
            [10, 0.388],
          ],
        },
      ],
    });
    expect(texts(pct)).toContain('eval/macro/avg (%)');
    expect(texts(pct)).toContain('40'); // a tick in percent, not 0.4
  });
});

describe('figureSeries', () => {
  const cfg = (seed: number, lr = 1) => ({ seed, name: `x-s${seed}`, optimizer: { lr } });
  const pts = (ys: number[]) => ys.map((value, step) => ({ step, value }));

  it('merges seeds of one config into a mean line with a ± std band; a lone run stays raw + EMA', () => {
    const series = figureSeries(
      [
        { id: 1, name: 'x-s1', config: cfg(1), points: pts([1, 1, 1]) },
        { id: 2, name: 'x-s2', config: cfg(2), points: pts([3, 3, 3]) },
        { id: 3, name: 'y-s1', config: cfg(1, 2), points: pts([5, 6, 7]) },
      ],
      0.6,
    );
    expect(series.map((s) => s.name)).toEqual(['x (2 seeds)', '3 y-s1']);
    const [group, lone] = series;
    expect(group.line.map(([, y]) => y)).toEqual([2, 2, 2]);
    expect(group.band![0].lo).toBeCloseTo(2 - Math.SQRT2);
    expect(group.band![0].hi).toBeCloseTo(2 + Math.SQRT2);
    expect(lone.raw!.map(([, y]) => y)).toEqual([5, 6, 7]);
    expect(lone.line[0][1]).toBe(5); // bias-corrected EMA starts at the first value
  });

  it('draws evaluations raw (smoothing 0), with markers', () => {
    const [s] = figureSeries([{ id: 1, name: 'r', config: cfg(1), points: pts([0.1, 0.388]) }], 0);
    expect(s.line.map(([, y]) => y)).toEqual([0.1, 0.388]);
    expect(s.raw).toBeUndefined();
    expect(s.markers).toBe(true);
  });

  it('interpolates a curve between its points', () => {
    expect(
      valueAt(
        [
          [0, 0],
          [10, 1],
        ],
        5,
      ),
    ).toBe(0.5);
    expect(
      valueAt(
        [
          [0, 0],
          [10, 1],
        ],
        11,
      ),
    ).toBeNull();
  });
});

const ev = (step: number, benchmark: string, avg: number, n = 4): StoredEvaluation => ({
  step,
  benchmark,
  n,
  queries: 40,
  avgAtN: avg,
  passAtN: avg,
  tokensPerQuery: 1,
  callsPerQuery: 1,
  toolCallsPerQuery: 0,
  successesPerMTok: 0,
  latencyP50Ms: 1,
  latencyP95Ms: 1,
});

describe('the evaluation a table reports', () => {
  it('is final only when every run evaluated at its planned steps', () => {
    const cfg = { optimizer: { lr: 1 } };
    const t = evalTable([{ runId: 1, name: 'a', seed: 1, config: cfg, evaluations: [ev(0, 'b', 0.1)], steps: 8 }]);
    expect(t.rows[0]).toMatchObject({ final: false, evalSteps: [0] });
    const done = evalTable([{ runId: 1, name: 'a', seed: 1, config: cfg, evaluations: [ev(0, 'b', 0.1), ev(8, 'b', 0.388)], steps: 8 }]);
    expect(done.rows[0]).toMatchObject({ final: true, evalSteps: [8] });
  });
});

describe('reports around the figures', () => {
  const run = (id: number, name: string, seed: number, steps: number): RunDetail =>
    ({
      id,
      name,
      seed,
      steps,
      lastStep: steps - 1,
      status: 'stopped',
      preset: 'math-quick',
      workflow: 'math',
      objective: 'srpo',
      backend: 'wasm',
      bestEval: { step: 0, value: 0.25 },
      config: { seed, steps, eval: { n: 4 } },
    }) as unknown as RunDetail;
  const reward = (n: number) => Array.from({ length: n }, (_, step) => ({ step, value: step / n, wallTime: step }));
  const data: ReportData = {
    generatedAt: 0,
    runs: [
      {
        run: run(1, 'math-quick-s1', 1, 30),
        series: { 'reward/mean': reward(30), 'eval/macro/avg': [{ step: 0, value: 0.25, wallTime: 0 }] },
        evaluations: [ev(0, 'arith-chain', 0.25)],
      },
    ],
  };

  it('HTML: Avg@4 with n filled in, percentages, the step-0 evaluation not called final', () => {
    const html = htmlReport(data);
    expect(html).toContain('arith-chain Avg@4');
    expect(html).not.toContain('Avg@n');
    expect(html).toContain('step 0 (not final)');
    expect(html).toContain('<td>25.0</td>'); // best eval in percent, not 0.25
    expect(html).toContain('Validation Avg@4');
  });

  it('Markdown: the smoothed reward is a small table, not a list of every value', () => {
    const md = markdownReport(data);
    const section = md.split('## Smoothed reward/mean (EMA 0.6)')[1].split('\n## ')[0];
    expect(section).toMatch(/\| run \| first \| ¼ \| ½ \| ¾ \| last \| min \| max \|/);
    expect(section).toMatch(/\| 0\.9\d* at step 29 \|/); // the EMA lags the raw 29/30 = 0.967 but stays above 0.9
    expect(section.split('\n').filter((l) => l.startsWith('|'))).toHaveLength(3);
    expect((section.match(/\d\.\d+/g) ?? []).length).toBeLessThan(12);
  });
});
