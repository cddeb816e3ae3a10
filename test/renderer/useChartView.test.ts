// The chart pages' remembered views (src/renderer/src/composables/useChartView.ts): read once in
// the page's idle time (warmRememberedViews, main.ts), so that the first chart page opened does
// not wait for the storage's first, synchronous load; a storage that cannot be read is no error.
import { describe, expect, it } from 'vitest';

const read: string[] = [];
let broken = false;
const page = Object.assign(new EventTarget(), {
  location: { hash: '#/runs' },
  localStorage: {
    getItem: (key: string) => {
      if (broken) throw new Error('storage unavailable');
      read.push(key);
      return null;
    },
  },
});
(globalThis as unknown as { window: typeof page }).window = page;
const { warmRememberedViews } = await import('../../src/renderer/src/composables/useChartView');

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
