// The hash router (src/renderer/src/composables/useRoute.ts): a navigation updates the route in
// the task that navigated (popstate, which Chromium fires inside it), not a task later
// (hashchange), and the hashchange that follows the same navigation changes nothing more; each
// new route leaves one User Timing mark (support/viewTiming), a repeated one none.
import { watch } from 'vue';
import { describe, expect, it } from 'vitest';

// A page's window as far as the router reads it: its address and its events.
const page = Object.assign(new EventTarget(), { location: { hash: '#/runs' } });
(globalThis as unknown as { window: typeof page }).window = page;
const { useRoute } = await import('../../src/renderer/src/composables/useRoute');
const { ROUTE_MARK } = await import('../../src/renderer/src/support/viewTiming');
/** The route marks left since the last clear, as their paths. */
const routeMarks = () => performance.getEntriesByName(ROUTE_MARK, 'mark').map((m) => (m as PerformanceMark).detail.path as string);

/** Navigates as a link or `location.hash = ...` does in Chromium: popstate now, hashchange in a later task. */
function navigateTo(hash: string): Promise<void> {
  page.location.hash = hash;
  page.dispatchEvent(new Event('popstate'));
  return new Promise((resolve) =>
    setTimeout(() => {
      page.dispatchEvent(new Event('hashchange'));
      resolve();
    }, 0),
  );
}

describe('useRoute', () => {
  it('follows a navigation at its popstate, and its hashchange changes nothing more', async () => {
    const route = useRoute();
    expect(route.segments).toEqual(['runs']);
    let changes = 0;
    watch(
      () => [route.path, route.query],
      () => changes++,
    );
    const done = navigateTo('#/runs/7/trace?step=3');
    expect(route.segments).toEqual(['runs', '7', 'trace']); // before the hashchange
    expect(route.query).toEqual({ step: '3' });
    await done;
    expect(changes).toBe(1);
  });

  it('still follows a navigation that fires only hashchange', () => {
    const route = useRoute();
    page.location.hash = '#/compare?runs=1,2';
    page.dispatchEvent(new Event('hashchange'));
    expect(route.path).toBe('/compare');
    expect(route.query).toEqual({ runs: '1,2' });
  });

  it('marks each new route once, at its popstate; the hashchange after it and a same route mark nothing', async () => {
    performance.clearMarks(ROUTE_MARK);
    const done = navigateTo('#/runs/9?x=1');
    expect(routeMarks()).toEqual(['/runs/9']);
    await done;
    await navigateTo('#/runs/9?x=1');
    expect(routeMarks()).toEqual(['/runs/9']);
    await navigateTo('#/about');
    expect(routeMarks()).toEqual(['/runs/9', '/about']);
  });
});
