/**
 * The page's chart warm-up (charts/chartWarmup.ts says why): requestIdleCallback, a detached div,
 * ECharts' init at the given size. Scheduled once by main.ts after the app mounts; skipped by
 * components/RunDashboardChart.vue when a real panel comes first. Tested through
 * test/renderer/chartWarmup.test.ts (the logic) and the e2e tests (the page).
 */
import { init } from 'echarts/core';
import { chartWarmup } from './chartWarmup';
import './echarts';

/** The user-timing mark set when the warm-up has run (read by bench/ui.bench.ts). */
export const CHART_WARMUP_MARK = 'srpo-lab:chart-warmup';

export const pageChartWarmup = chartWarmup<HTMLDivElement>({
  idle: (work) => requestIdleCallback(work),
  cancelIdle: (id) => cancelIdleCallback(id),
  createHost: () => document.createElement('div'),
  createChart: (host, size) => init(host, null, size),
  ran: () => performance.mark(CHART_WARMUP_MARK),
});
