/**
 * The chart workspace's view state (src/shared/chartView.ts) in the URL: a round trip, defaults
 * left out of links, malformed values falling back instead of throwing; which metrics are drawn
 * raw; the metric search. And a panel's CSV (charts/chartExport via shared/report).
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_VIEW, drawnUnsmoothed, queryHasView, searchKeys, viewFromJson, viewFromQuery, viewToQuery, type ChartView } from '../../src/shared/chartView';

describe('view state in the URL', () => {
  it('round-trips through the query', () => {
    const v: ChartView = { smoothing: 0.85, xAxis: 'time', yScale: 'log', panels: ['time/step', 'eval/arith-chain/avg'] };
    const q = viewToQuery(v);
    expect(q).toEqual({ smooth: '0.85', x: 'time', y: 'log', panels: 'time/step,eval/arith-chain/avg' });
    // Through a real query string, as a shared link carries it.
    const parsed = Object.fromEntries(new URLSearchParams(new URLSearchParams(q).toString()));
    expect(viewFromQuery(parsed)).toEqual(v);
    expect(queryHasView(parsed)).toBe(true);
  });

  it('leaves the default view out of links', () => {
    expect(viewToQuery(DEFAULT_VIEW)).toEqual({});
    expect(queryHasView({ runs: '1,2' })).toBe(false);
    expect(viewFromQuery({})).toEqual(DEFAULT_VIEW);
  });

  it('falls back to defaults on malformed values, clamps smoothing, drops odd keys and duplicates', () => {
    expect(viewFromQuery({ smooth: 'abc', x: 'epoch', y: 'sqrt', panels: 'a/b,,<script>,a/b' })).toEqual({ ...DEFAULT_VIEW, panels: ['a/b'] });
    expect(viewFromQuery({ smooth: '7' }).smoothing).toBe(0.99);
    expect(viewFromQuery({ smooth: '-1' }).smoothing).toBe(0);
    expect(viewFromQuery({ smooth: '0' }).smoothing).toBe(0);
  });

  it('reads a remembered view back as totally as a query', () => {
    expect(viewFromJson(null)).toBeNull();
    expect(viewFromJson('{oops')).toBeNull();
    expect(viewFromJson(JSON.stringify({ smoothing: 0.3, xAxis: 'time', panels: ['loss/total'] }))).toEqual({
      smoothing: 0.3,
      xAxis: 'time',
      yScale: 'linear',
      panels: ['loss/total'],
    });
    expect(viewFromJson(JSON.stringify({ xAxis: 'nope', panels: 'not-a-list' }))).toEqual(DEFAULT_VIEW);
  });
});

describe('metrics drawn raw', () => {
  it('are the evaluations, every benchmark and the macro average', () => {
    expect(['eval/macro/avg', 'eval/arith-chain/pass'].every(drawnUnsmoothed)).toBe(true);
    expect(['reward/mean', 'loss/total', 'time/eval'].some(drawnUnsmoothed)).toBe(false);
  });
});

describe('metric search', () => {
  const keys = ['clip/frac_high', 'clip/frac_low', 'eval/macro/avg', 'grad/norm', 'loss/total', 'ratio/max', 'time/eval', 'time/step'];

  it('keeps keys holding every word, those starting with (a segment of) the first word first', () => {
    expect(searchKeys(keys, 'eval')).toEqual(['eval/macro/avg', 'time/eval']);
    expect(searchKeys(keys, 'CLIP high')).toEqual(['clip/frac_high']);
    expect(searchKeys(keys, 'frac')).toEqual(['clip/frac_high', 'clip/frac_low']);
    expect(searchKeys(keys, '  ')).toEqual(keys);
    expect(searchKeys(keys, 'nothing')).toEqual([]);
  });
});
