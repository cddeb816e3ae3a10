/**
 * Chart-side series arithmetic (src/shared/seriesWindow.ts): the request size for a chart width,
 * live points appended, long series compacted by the store's min/max rule (checked against the
 * store's downsamplePoints), the zoom detail spliced into the overview, and the packed line.
 */
import { describe, expect, it } from 'vitest';
import type { SeriesPoint } from '../../src/shared/api';
import { appendLivePoint, chartMaxPoints, compactSeries, PackedLine, spliceDetail } from '../../src/shared/seriesWindow';
import { downsamplePoints } from '../../src/core/store/series';

const pt = (step: number, value: number | null = step): SeriesPoint => ({ step, value, wallTime: 1000 + step });
const line = (values: (number | null)[], from = 0): SeriesPoint[] => values.map((v, i) => pt(from + i, v));

function seeded(n: number, seed = 7): number[] {
  let s = seed;
  return Array.from({ length: n }, (_, i) => Math.sin(i / 40) + ((s = (s * 16807) % 2147483647) / 2147483647 - 0.5) * 0.2);
}

describe('chartMaxPoints', () => {
  it('asks for one min/max pair per device pixel column, at least 64 points', () => {
    expect(chartMaxPoints(400)).toBe(800);
    expect(chartMaxPoints(400, 2)).toBe(1600);
    expect(chartMaxPoints(400, 3)).toBe(1600); // dpr capped at 2
    expect(chartMaxPoints(10)).toBe(64);
    expect(chartMaxPoints(-5)).toBe(64);
  });
});

describe('appendLivePoint', () => {
  it('appends after the last step, keeping the old points (same objects) in front', () => {
    const a = line([1, 2, 3]);
    const b = appendLivePoint(a, pt(3, 9));
    expect(b.map((p) => p.step)).toEqual([0, 1, 2, 3]);
    expect(b[0]).toBe(a[0]);
    expect(a).toHaveLength(3); // not mutated
  });

  it('a redone step (resumed run) drops the points from that step on', () => {
    const b = appendLivePoint(line([1, 2, 3, 4]), pt(2, 9));
    expect(b.map((p) => [p.step, p.value])).toEqual([
      [0, 1],
      [1, 2],
      [2, 9],
    ]);
  });

  it('starts an empty series', () => {
    expect(appendLivePoint([], pt(5))).toEqual([pt(5)]);
  });
});

describe('compactSeries', () => {
  it('returns the input itself when it already fits', () => {
    const a = line([1, 2, 3]);
    expect(compactSeries(a, 3)).toBe(a);
  });

  it('picks exactly what the store picks (downsamplePoints) for the same points', () => {
    for (const [n, maxPoints] of [
      [5000, 800],
      [1001, 1000],
      [777, 64],
      [10, 4],
      [9, 3],
    ]) {
      const values = seeded(n, n);
      values[Math.floor(n / 3)] = 40;
      values[Math.floor(n / 2)] = NaN;
      const points = line(values.map((v) => (Number.isNaN(v) ? null : v)));
      const got = compactSeries(points, maxPoints);
      const want = downsamplePoints(
        points.map((p) => p.step),
        values,
        points.map((p) => p.wallTime),
        0,
        n,
        maxPoints,
      );
      expect(got.map((p) => p.step)).toEqual(want.map((p) => p.step));
      expect(got.length).toBeLessThanOrEqual(maxPoints);
    }
  });

  it('keeps a spike, a dip and a NaN through repeated compaction of a live-grown series', () => {
    let pts: SeriesPoint[] = [];
    const values = seeded(20_000, 3);
    for (let i = 0; i < values.length; i++) {
      const v = i === 12_345 ? 99 : i === 4_321 ? -99 : i === 17_000 ? null : values[i];
      pts = appendLivePoint(pts, pt(i, v));
      if (pts.length > 2 * 500) pts = compactSeries(pts, 500) as SeriesPoint[];
    }
    expect(pts.length).toBeLessThanOrEqual(1000);
    expect(pts.find((p) => p.value === 99)?.step).toBe(12_345);
    expect(pts.find((p) => p.value === -99)?.step).toBe(4_321);
    expect(pts.find((p) => p.value === null)?.step).toBe(17_000);
    expect(pts.every((p, i) => i === 0 || p.step > pts[i - 1].step)).toBe(true);
  });
});

describe('spliceDetail', () => {
  const overview = [0, 10, 20, 30, 40, 50].map((s) => pt(s, 1));
  it('replaces the overview inside the range by the detail, keeps it outside', () => {
    const detail = { fromStep: 15, toStep: 35, points: [16, 17, 18, 25, 34].map((s) => pt(s, 2)) };
    expect(spliceDetail(overview, detail).map((p) => p.step)).toEqual([0, 10, 16, 17, 18, 25, 34, 40, 50]);
  });

  it('keeps overview points after the range (live points that came after the fetch)', () => {
    const detail = { fromStep: 35, toStep: 50, points: [36, 45, 50].map((s) => pt(s, 2)) };
    const grown = [...overview, pt(51, 1), pt(52, 1)];
    expect(spliceDetail(grown, detail).map((p) => p.step)).toEqual([0, 10, 20, 30, 36, 45, 50, 51, 52]);
  });
});

describe('PackedLine', () => {
  it('packs (x, y, step) triples, null as NaN, growing past its capacity', () => {
    const l = new PackedLine(1);
    for (let i = 0; i < 100; i++) l.push(i * 2, i === 5 ? null : i / 10, i + 1000);
    expect(l.length).toBe(100);
    expect(l.view()).toHaveLength(300);
    expect([l.x(7), l.y(7), l.step(7)]).toEqual([14, 0.7, 1007]);
    expect(Number.isNaN(l.y(5))).toBe(true);
  });

  it('finds the first point at or after an x', () => {
    const l = new PackedLine();
    for (const x of [0, 1, 1, 4, 9]) l.push(x, 0, x);
    expect([-1, 0, 1, 2, 4, 5, 9, 10].map((x) => l.lowerBoundX(x))).toEqual([0, 0, 1, 3, 3, 4, 4, 5]);
  });
});
