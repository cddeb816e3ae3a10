/**
 * ECharts, tree-shaken: the line chart with grid, tooltip, legend, the inside (wheel and drag)
 * dataZoom and the canvas renderer, registered once for every chart component. No slider: its
 * view was rebuilt from the series on every live update (about half of a panel's update cost);
 * the panels have a "reset zoom" button instead.
 */
import { LineChart } from 'echarts/charts';
import { DataZoomInsideComponent, GridComponent, LegendComponent, TooltipComponent } from 'echarts/components';
import { use } from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';

use([LineChart, GridComponent, TooltipComponent, LegendComponent, DataZoomInsideComponent, CanvasRenderer]);
