/**
 * A hash router small enough to read in one go: `#/runs/3/trace?step=2` -> { segments, query }.
 * One shared reactive route; `navigate(path)` changes the hash. The listener is added once for
 * the page (the route outlives every component). Views: App.vue maps segments to components.
 */
import { reactive } from 'vue';

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
window.addEventListener('hashchange', () => Object.assign(route, parse()));

export function useRoute(): Route {
  return route;
}

export function navigate(path: string, query: Record<string, string | number | undefined> = {}): void {
  const defined = Object.entries(query).filter((e): e is [string, string | number] => e[1] !== undefined);
  const qs = new URLSearchParams(defined.map(([k, v]) => [k, String(v)])).toString();
  window.location.hash = qs ? `${path}?${qs}` : path;
}
