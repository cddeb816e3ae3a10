// The chart pages' remembered views (src/renderer/src/composables/useChartView.ts): read once in
// the page's idle time (warmRememberedViews, main.ts), so that the first chart page opened does
// not wait for the storage's first, synchronous load; a storage that cannot be read is no error;
// a view opened unchanged is not written to the storage again, a changed one is.
import { describe, expect, it } from 'vitest';
import { effectScope, nextTick } from 'vue';

const read: string[] = [];
const written: string[] = [];
const storage = new Map<string, string>();
let broken = false;
const page = Object.assign(new EventTarget(), {
  location: { hash: '#/runs' },
  history: { state: null, replaceState: (_s: unknown, _t: string, url: string) => void (page.location.hash = url) },
  localStorage: {
    getItem: (key: string) => {
      if (broken) throw new Error('storage unavailable');
      read.push(key);
      return storage.get(key) ?? null;
    },
    setItem: (key: string, value: string) => {
      written.push(value);
      storage.set(key, value);
    },
  },
});
(globalThis as unknown as { window: typeof page }).window = page;
const { useChartView, warmRememberedViews } = await import('../../src/renderer/src/composables/useChartView');

describe('warmRememberedViews', () => {
  it("reads the dashboard's and Compare's remembered views from the storage", () => {
    warmRememberedViews();
    expect(read.sort()).toEqual(['srpo-lab.chartView.compare', 'srpo-lab.chartView.dashboard']);
  });

  it('does not throw where the storage cannot be read', () => {
    broken = true;
    expect(() => warmRememberedViews()).not.toThrow();
  });
});

describe('useChartView', () => {
  it('writes the remembered view only when it changed (an unchanged open writes nothing)', async () => {
    broken = false;
    const scope = effectScope();
    const first = scope.run(() => useChartView('dashboard'))!;
    expect(written).toHaveLength(1); // nothing was stored: the default view is written once
    const again = effectScope();
    again.run(() => useChartView('dashboard'));
    expect(written).toHaveLength(1); // opened again unchanged: no write
    first.smoothing = 0.9;
    await nextTick();
    expect(written).toHaveLength(2);
    expect(JSON.parse(written[1]).smoothing).toBe(0.9);
    // Reopened from a link without view parameters, the view comes from what was written,
    // without reading the storage again.
    page.location.hash = '#/runs/1';
    page.dispatchEvent(new Event('hashchange'));
    const reads = read.length;
    const third = effectScope();
    expect(third.run(() => useChartView('dashboard'))!.smoothing).toBe(0.9);
    expect(read.length).toBe(reads);
    expect(written).toHaveLength(2);
    // Another window wrote the storage (its storage event): the next open reads it again.
    storage.set('srpo-lab.chartView.dashboard', JSON.stringify({ ...JSON.parse(written[1]), smoothing: 0.3 }));
    page.dispatchEvent(new Event('storage'));
    page.location.hash = '#/runs/2';
    page.dispatchEvent(new Event('hashchange'));
    expect(third.run(() => useChartView('dashboard'))!.smoothing).toBe(0.3);
    expect(read.length).toBe(reads + 1);
    expect(written).toHaveLength(2);
    third.stop();
    scope.stop();
    again.stop();
  });
});
