/**
 * A curve panel's zoom detail: after a zoom gesture (wheel, drag, reset) and a quiet
 * ZOOM_DEBOUNCE_MS, the lines with a source are fetched again for the zoomed step range (about
 * one min/max pair per pixel column: charts/zoomDetail) and the panel splices that detail in, so
 * zooming into a long run shows real points, not a stretched overview; zooming back out to the
 * whole run drops the details. An answer for a window that a newer gesture or a rebuild replaced
 * is dropped (ChartPanel.generation). The pending timer is cleared with the caller's scope.
 * Not here: which step range each line shows and how a detail is drawn (charts/chartPanel).
 * Tested by test/renderer/useChartZoom.test.ts (fake timers, a fake fetch, a real ChartPanel).
 */
import { onScopeDispose } from 'vue';
import type { SeriesPoint } from '../../../shared/api';
import type { ChartPanel } from '../charts/chartPanel';
import type { DetailWant } from '../charts/chartPanelTypes';

/** Quiet time after the last zoom gesture before the detail is fetched (ms). */
export const ZOOM_DEBOUNCE_MS = 250;

/** charts/zoomDetail fetchDetail in the page (one metricSeries call per run and range). */
export type FetchDetail = (requests: readonly DetailWant[], maxPoints: number) => Promise<(SeriesPoint[] | null)[]>;

export interface ChartZoom {
  /** The panel's onZoom hook: a gesture; `full` when the whole run is shown again. */
  gesture(full: boolean): void;
}

/** `dpr`: the device pixel ratio the detail is fetched for (the page's, read when the fetch goes out). */
export function useChartZoom<Host>(panel: ChartPanel<Host>, fetchDetail: FetchDetail, dpr: () => number): ChartZoom {
  let timer: ReturnType<typeof setTimeout> | null = null;

  async function apply(full: boolean): Promise<void> {
    if (full) return panel.clearDetail();
    const win = panel.zoomWindow(dpr());
    if (!win) return;
    let got: (SeriesPoint[] | null)[];
    try {
      got = await fetchDetail(win.wanted, win.maxPoints);
    } catch {
      return; // the overview stays; the next gesture tries again
    }
    panel.setDetail(win, got); // dropped there when a newer gesture or rebuild came meanwhile
  }

  onScopeDispose(() => {
    if (timer) clearTimeout(timer);
    timer = null;
  });

  return {
    gesture(full) {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        timer = null;
        void apply(full);
      }, ZOOM_DEBOUNCE_MS);
    },
  };
}
