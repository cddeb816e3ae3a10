/**
 * A chart workspace's view (smoothing, x axis, y scale, added panels: shared/chartView) kept in
 * the URL and remembered: opened from a link with view parameters, the view is the link's; opened
 * without, it is the one last used on this kind of page (localStorage), else the default. Each
 * change rewrites the current history entry's query (history.replaceState: no navigation, no new
 * entry), so copying the address shares the view and Back returns to it. The remembered view is
 * per page kind ('dashboard', 'compare'), not per run. `warmRememberedViews` reads them once
 * while the page is idle (main.ts): a page's first localStorage read loads the whole storage area
 * from the browser process synchronously, and the first chart page opened would otherwise wait
 * for it; later reads come from the page's copy. Tested by test/renderer/useChartView.test.ts.
 */
import { reactive, watch } from 'vue';
import { DEFAULT_VIEW, queryHasView, viewFromJson, viewFromQuery, viewToQuery, type ChartView } from '../../../shared/chartView';
import { useRoute } from './useRoute';

const storageKey = (page: string) => `srpo-lab.chartView.${page}`;

function remembered(page: string): ChartView | null {
  try {
    return viewFromJson(window.localStorage.getItem(storageKey(page)));
  } catch {
    return null; // storage unavailable (a sandboxed or private window): the default view
  }
}

/** The kinds of chart page with a remembered view. */
const PAGES = ['dashboard', 'compare'] as const;

/** Reads every remembered view (the values are not kept): the storage is loaded before a chart page needs it. */
export function warmRememberedViews(): void {
  for (const page of PAGES) remembered(page);
}

/**
 * The current hash with the view's parameters replaced by `extra` (other parameters kept), as
 * `#/path?query`.
 */
export function hashWithQuery(extra: Record<string, string | undefined>, drop: readonly string[] = []): string {
  const raw = window.location.hash.replace(/^#/, '') || '/runs';
  const [path, qs = ''] = raw.split('?');
  const params = new URLSearchParams(qs);
  for (const k of drop) params.delete(k);
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) params.delete(k);
    else params.set(k, v);
  }
  const q = params.toString();
  return `#${path}${q ? `?${q}` : ''}`;
}

/** The view's query keys (to drop before writing a view that leaves some at their default). */
const VIEW_KEYS = Object.keys(viewToQuery({ smoothing: 0.1, xAxis: 'time', yScale: 'log', panels: ['x'] }));

export function useChartView(page: (typeof PAGES)[number]): ChartView {
  const route = useRoute();
  const initial = queryHasView(route.query) ? viewFromQuery(route.query) : (remembered(page) ?? DEFAULT_VIEW);
  const view = reactive<ChartView>({ ...initial, panels: [...initial.panels] });

  function persist(): void {
    const v: ChartView = { smoothing: view.smoothing, xAxis: view.xAxis, yScale: view.yScale, panels: [...view.panels] };
    try {
      window.localStorage.setItem(storageKey(page), JSON.stringify(v));
    } catch {
      // not remembered; the URL still carries it
    }
    const next = hashWithQuery(viewToQuery(v), VIEW_KEYS);
    if (next !== window.location.hash) {
      window.history.replaceState(window.history.state, '', next);
      // The router's view of the query follows (replaceState fires no hashchange).
      Object.assign(route.query, viewToQuery(v));
      for (const k of VIEW_KEYS) if (!(k in viewToQuery(v))) delete route.query[k];
    }
  }
  watch(view, persist, { deep: true, immediate: true });
  return view;
}
