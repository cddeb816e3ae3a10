/**
 * A hash router small enough to read in one go: `#/runs/3/trace?step=2` -> { segments, query }.
 * One shared reactive route; `navigate(path)` changes the hash. The listeners are added once for
 * the page (the route outlives every component). A new route leaves a User Timing mark
 * (support/viewTiming). Views: App.vue maps segments to components.
 */
import { reactive } from 'vue';
import { markRoute } from '../support/viewTiming';

export interface Route {
  path: string;
  segments: string[];
  query: Record<string, string>;
}

function parse(): Route {
  const raw = window.location.hash.replace(/^#/, '') || '/runs';
  const [path, qs = ''] = raw.split('?');
  return { path, segments: path.split('/').filter(Boolean), query: Object.fromEntries(new URLSearchParams(qs)) };
}

const route = reactive<Route>(parse());
/** Updates the route from the address, unless it already says the same (path and query). */
function follow(): void {
  const next = parse();
  const q = Object.keys(next.query);
  const same = next.path === route.path && q.length === Object.keys(route.query).length && q.every((k) => route.query[k] === next.query[k]);
  if (same) return;
  markRoute(next.path);
  Object.assign(route, next);
}
// popstate comes first: Chromium fires it inside the navigation (a link's click, a set
// location.hash), hashchange only in a later task. Whichever comes first updates the route, so
// the next view starts rendering in the task that navigated; the other finds nothing new.
window.addEventListener('popstate', follow);
window.addEventListener('hashchange', follow);

export function useRoute(): Route {
  return route;
}

export function navigate(path: string, query: Record<string, string | number | undefined> = {}): void {
  const defined = Object.entries(query).filter((e): e is [string, string | number] => e[1] !== undefined);
  const qs = new URLSearchParams(defined.map(([k, v]) => [k, String(v)])).toString();
  window.location.hash = qs ? `${path}?${qs}` : path;
}
