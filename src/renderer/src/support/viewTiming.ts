/**
 * User Timing marks of a view change, for DevTools' timeline and the ui bench (bench/ui.bench.ts
 * splits a dashboard's open at them): ROUTE_MARK when the hash router takes a new route
 * (composables/useRoute), VIEW_MOUNTED_MARK when the routed view has mounted (App.vue), with the
 * view's name as the mark's detail. charts/firstDraw's measure follows them. A mark is a few
 * microseconds; nothing reads them in the app. Tested by test/renderer/useRoute.test.ts (the route's mark) and
 * test/e2e/charts.test.ts (an open's marks in order).
 */

export const ROUTE_MARK = 'srpo-lab:route';
export const VIEW_MOUNTED_MARK = 'srpo-lab:view-mounted';

/** The router has taken a new route. */
export function markRoute(path: string): void {
  performance.mark(ROUTE_MARK, { detail: { path } });
}

/** The routed view `name` is in the page (its own and its children's mounted hooks have run). */
export function markViewMounted(name: string): void {
  performance.mark(VIEW_MOUNTED_MARK, { detail: { view: name } });
}
