/**
 * A chart workspace's view (smoothing, x axis, y scale, added panels: shared/chartView) kept in
 * the URL and remembered: opened from a link with view parameters, the view is the link's; opened
 * without, it is the one last used on this kind of page (localStorage), else the default. Each
 * change rewrites the current history entry's query (history.replaceState: no navigation, no new
 * entry), so copying the address shares the view and Back returns to it. The remembered view is
 * per page kind ('dashboard', 'compare'), not per run. `warmRememberedViews` reads them once
 * while the page is idle (main.ts): a page's first localStorage read loads the whole storage area
 * from the browser process synchronously, and the first chart page opened would otherwise wait
 * for it; later opens use what was read (or last written). Tested by test/renderer/useChartView.test.ts.
 */
import { reactive, watch } from 'vue';
import { DEFAULT_VIEW, queryHasView, viewFromJson, viewFromQuery, viewToQuery, type ChartView } from '../../../shared/chartView';
import { useRoute } from './useRoute';

const storageKey = (page: string) => `srpo-lab.chartView.${page}`;

/**
 * What the storage holds for each page kind, as this page last read or wrote it: the storage is
 * read once per page kind (each read of localStorage had cost every chart page's open; decision
 * 075), and a view opened unchanged is not written again. Another window's write (the
 * storage event) drops the copy.
 */
const stored = new Map<string, string | null>();
if (typeof window.addEventListener === 'function') window.addEventListener('storage', () => stored.clear());

function storedJson(page: string): string | null {
  if (!stored.has(page)) stored.set(page, window.localStorage.getItem(storageKey(page)));
  return stored.get(page)!;
}

function remembered(page: string): ChartView | null {
  try {
    return viewFromJson(storedJson(page));
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
      const json = JSON.stringify(v);
      if (storedJson(page) !== json) {
        window.localStorage.setItem(storageKey(page), json);
        stored.set(page, json);
      }
    } catch {
      // not remembered; the URL still carries it
    }
    // The address already says this view when the router's query does (it follows the address):
    // then the address is not read or rewritten (reading it had cost every open; decision 075).
    const query = viewToQuery(v);
    if (VIEW_KEYS.every((k) => route.query[k] === query[k])) return;
    const next = hashWithQuery(query, VIEW_KEYS);
    if (next !== window.location.hash) window.history.replaceState(window.history.state, '', next);
    // The router's view of the query follows (replaceState fires no hashchange).
    Object.assign(route.query, query);
    for (const k of VIEW_KEYS) if (!(k in query)) delete route.query[k];
  }
  watch(view, persist, { deep: true, immediate: true });
  return view;
}
