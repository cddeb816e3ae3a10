/**
 * The ui bench's ECharts floor (bench/ui.bench.ts builds this file for the browser with vite and
 * runs it in a blank page of the same Chromium): what ECharts alone needs to draw the dashboard's
 * curve panels and to apply one live point to them, with no app around it (no fetch, no Vue, no
 * other panels). The same data path and options as components/RunDashboardChart.vue: lines
 * packed by chartLine (EMA included), options from chartOption, the same registered components,
 * one ECharts instance per panel at the dashboard's plot size. Both phases are timed to the
 * presentation of the frame that shows them, with the marker the bench uses for the app
 * (`presented`, given by the bench). The dashboard cannot beat this floor on the same machine.
 */
import { init } from 'echarts/core';
import type { SeriesPoint } from '../../src/shared/api';
import { keepYRange } from '../../src/shared/chartRange';
import { buildLine, extendLine, type LineStyle } from '../../src/renderer/src/charts/chartLine';
import { fullOption, seriesData } from '../../src/renderer/src/charts/chartOption';
import '../../src/renderer/src/charts/echarts';

export interface FloorInput {
  /** Panels, points per line (the dashboard's downsampled count) and a panel plot's size (px). */
  panels: number;
  points: number;
  width: number;
  height: number;
  repetitions: number;
  /** Calls back with the presentation time (performance.now() scale) of the frame painting what the page shows now. */
  presented: (onTime: (t: number) => void) => void;
}

const STYLE: LineStyle = { smoothing: 0.6, xAxis: 'step' };

/** The User Timing measure each render's draw leaves (as the dashboard's charts/firstDraw does), for the bench's frame diagnostics (bench/frameStages.ts). */
export const FLOOR_DRAW_MEASURE = 'echarts-floor:draw';

/** A series like the bench's: 100,000 steps downsampled to `n` points, a slow sine with a fast ripple. */
function series(n: number, k: number): SeriesPoint[] {
  return Array.from({ length: n }, (_, i) => {
    const step = Math.round((i * 100_000) / n);
    return { step, value: Math.sin(step / 500 + k) + 0.1 * Math.sin(step * 7.3 + k), wallTime: 1_700_000_000_000 + step * 1000 };
  });
}

/** Per repetition: to presented (render, update) and the render's synchronous draw alone (drawn), ms. */
export async function echartsFloor(o: FloorInput): Promise<{ render: number[]; update: number[]; drawn: number[] }> {
  const presented = () => new Promise<number>((resolve) => o.presented(resolve));
  const settle = () => new Promise((resolve) => setTimeout(resolve, 50));
  const render: number[] = [];
  const update: number[] = [];
  const drawnMs: number[] = [];
  for (let r = 0; r < o.repetitions; r++) {
    const hosts = Array.from({ length: o.panels }, (_, k) => {
      const host = document.createElement('div');
      host.style.cssText = `position:absolute;left:${(k % 3) * (o.width + 30)}px;top:${Math.floor(k / 3) * (o.height + 40)}px;width:${o.width}px;height:${o.height}px`;
      document.body.appendChild(host);
      return host;
    });
    await presented();
    await settle();
    const t0 = performance.now();
    const drawn = hosts.map((_, k) => buildLine(series(o.points, k), null, STYLE));
    const lineData = (k: number) => [{ raw: drawn[k].raw.view(), ema: drawn[k].ema.view(), count: drawn[k].points.length }];
    const charts = hosts.map((host, k) => {
      const chart = init(host, null, { width: o.width, height: o.height });
      const y = keepYRange(drawn[k].lo, drawn[k].hi, null);
      chart.setOption(fullOption({ names: ['m'], lines: lineData(k), xAxis: 'step', y, tooltip: false }), { notMerge: true });
      return chart;
    });
    drawnMs.push(performance.now() - t0);
    performance.measure(FLOOR_DRAW_MEASURE, { start: t0 });
    render.push((await presented()) - t0);
    await settle();
    const t1 = performance.now();
    charts.forEach((chart, k) => {
      const d = drawn[k];
      const last = d.points[d.points.length - 1];
      const from = d.points.length;
      d.points = [...d.points, { step: last.step + 1, value: 0.5, wallTime: last.wallTime + 1000 }];
      extendLine(d, from, STYLE);
      chart.setOption({ series: seriesData(lineData(k), [0]) });
    });
    update.push((await presented()) - t1);
    charts.forEach((c) => c.dispose());
    hosts.forEach((h) => h.remove());
  }
  return { render, update, drawn: drawnMs };
}
