/**
 * ECharts, tree-shaken: the line chart with grid, tooltip, legend, dataZoom and the canvas
 * renderer, registered once for every chart component (vue-echarts' VChart).
 */
import { LineChart } from 'echarts/charts';
import { DataZoomComponent, GridComponent, LegendComponent, TooltipComponent } from 'echarts/components';
import { use } from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';

use([LineChart, GridComponent, TooltipComponent, LegendComponent, DataZoomComponent, CanvasRenderer]);
