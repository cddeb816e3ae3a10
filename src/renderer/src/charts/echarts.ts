/**
 * ECharts, tree-shaken: the line chart with grid, tooltip, legend, the inside (wheel and drag)
 * dataZoom and the canvas renderer, registered once for every chart component. No slider: its
 * view was rebuilt from the series on every live update (about half of a panel's update cost);
 * the panels have a "reset zoom" button instead.
 * `initOffPage` makes a panel's chart away from the page and puts it there once drawn (it says why).
 */
import { LineChart } from 'echarts/charts';
import { DataZoomInsideComponent, GridComponent, LegendComponent, TooltipComponent } from 'echarts/components';
import { init, use, type ECharts } from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';

use([LineChart, GridComponent, TooltipComponent, LegendComponent, DataZoomInsideComponent, CanvasRenderer]);

/**
 * An ECharts instance for `host` at `size`, made in a div that is not in the page yet and put into
 * `host` (in place of anything left there) at the end of the current microtask queue, so after the
 * caller's first setOption has drawn it. Why: every font ECharts sets on a canvas in the page
 * makes Chromium bring the page's style up to date first; drawing five charts one after another,
 * each inserted chart left the style dirty for the next one's fonts (a style recalculation of the
 * whole dashboard per chart). Off the page, a canvas's fonts need no page style.
 */
export function initOffPage(host: HTMLElement, size: { width: number; height: number }): ECharts {
  const root = document.createElement('div');
  root.style.cssText = 'width:100%;height:100%';
  const chart = init(root, null, size);
  queueMicrotask(() => host.replaceChildren(root));
  return chart;
}
