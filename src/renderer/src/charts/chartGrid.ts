/**
 * The curve panels' geometry in one place: the grid of panels (RunDashboard, CompareView), a
 * panel's inset, and the plot's margins inside its chart (the ECharts grid, chartOption). The
 * request size of a panel's series (gridMaxPoints) is computed from the same numbers the page is
 * laid out with, and the zoom's window is read back at the same plot edges (charts/chartPanel).
 * No Vue, no state. Tested by test/renderer/chartPanel.test.ts (the plot width of a grid).
 */
import { chartMaxPoints } from '../../../shared/seriesWindow';

/** The plot's margins inside a chart (px): y-axis labels on the left, the last x label and the axis name on the right. */
export const PLOT_LEFT = 52;
export const PLOT_RIGHT = 46;
/** Above the plot: room for the legend when a panel has more than one line. */
export const PLOT_TOP = 12;
export const PLOT_TOP_LEGEND = 34;
export const PLOT_BOTTOM = 22;

/** The grid of panels: columns at least this wide (px), this far apart. */
export const PANEL_MIN_WIDTH = 380;
export const PANEL_GAP = 10;
/** A panel's horizontal padding (px; RunDashboardChart) plus the 1 px border of App.vue's `.panel`. */
export const PANEL_PAD_X = 8;
const PANEL_INSET_X = PANEL_PAD_X + 1;
/** The page's horizontal padding (App.vue `main`, px) on each side. */
const PAGE_PAD_X = 16;

/** The grid's CSS (a `:style` binding), from the constants above. */
export const PANEL_GRID_STYLE = {
  display: 'grid',
  gridTemplateColumns: `repeat(auto-fill, minmax(${PANEL_MIN_WIDTH}px, 1fr))`,
  gap: `${PANEL_GAP}px`,
} as const;

/** The width of one panel's plot (px) in a grid `gridWidth` px wide (auto-fill columns of at least PANEL_MIN_WIDTH). */
export function gridPlotWidth(gridWidth: number): number {
  const columns = Math.max(1, Math.floor((gridWidth + PANEL_GAP) / (PANEL_MIN_WIDTH + PANEL_GAP)));
  const panel = (gridWidth - (columns - 1) * PANEL_GAP) / columns;
  return panel - 2 * PANEL_INSET_X - PLOT_LEFT - PLOT_RIGHT;
}

/**
 * Points to fetch per series for charts in a grid of panels: one min/max pair per pixel column
 * of a chart's plot. The charts are not laid out when the first fetch goes out, so the width
 * comes from the grid's width once it exists, and before that from the window's (not the
 * document's: reading that would force a layout of the page being left).
 */
export function gridMaxPoints(grid: { clientWidth: number } | null, windowWidth: number, dpr: number): number {
  const width = grid?.clientWidth || windowWidth - 2 * PAGE_PAD_X;
  return chartMaxPoints(gridPlotWidth(width), dpr);
}
