/**
 * A curve panel's downloads: its lines as CSV (the columns of the metrics CSV report: run, step,
 * key, value, wall_time; every point the panel holds, zoom detail included) and its canvas as PNG
 * (ECharts getDataURL at 2x, on the panel's background). File names from the panel title.
 * Used by components/RunDashboardChart.vue; the CSV text is tested in test/shared/chartView.test.ts
 * through shared/report metricsCsv, the downloads in test/e2e/charts.test.ts.
 */
import type { SeriesPoint } from '../../../shared/api';
import { metricsCsv } from '../../../shared/report';
import { downloadReport } from '../composables/useDownload';

export interface ExportLine {
  name: string;
  points: readonly SeriesPoint[];
  source?: { runId: number; key: string };
}

/** A file name from a panel title: `reward-mean`, `eval-Avg-n`. */
export const chartFileName = (title: string) => title.replace(/[^\w.-]+/g, '-').replace(/^-+|-+$/g, '') || 'chart';

export function chartCsv(lines: readonly ExportLine[]): string {
  return metricsCsv(
    lines.flatMap((l) =>
      l.points.map((p) => ({ runId: l.source?.runId ?? 0, key: l.source?.key ?? l.name, step: p.step, value: p.value, wallTime: p.wallTime })),
    ),
  );
}

export function downloadChartCsv(title: string, lines: readonly ExportLine[]): void {
  downloadReport({ filename: `${chartFileName(title)}.csv`, mime: 'text/csv', encoding: 'utf8', content: chartCsv(lines) });
}

/** `dataUrl`: what echarts getDataURL returned (data:image/png;base64,...). */
export function downloadChartPng(title: string, dataUrl: string): void {
  downloadReport({ filename: `${chartFileName(title)}.png`, mime: 'image/png', encoding: 'base64', content: dataUrl.slice(dataUrl.indexOf(',') + 1) });
}
