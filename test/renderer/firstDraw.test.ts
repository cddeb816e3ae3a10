// The batched first draw of curve panels (src/renderer/src/charts/firstDraw.ts): hosts queued in
// one task are all measured before any is drawn (one layout for all: a draw inserts a canvas and
// would dirty the layout the next measurement reads), each drawn at its floored size after the
// task's synchronous code, and a cancelled or removed host is not drawn.
import { describe, expect, it } from 'vitest';
import { drawSoon } from '../../src/renderer/src/charts/firstDraw';
import type { Size } from '../../src/renderer/src/charts/chartPanelTypes';

/** A stand-in host that logs its measurements; `connected` false: removed from the page. */
function host(name: string, width: number, height: number, log: string[], connected = true) {
  return {
    isConnected: connected,
    getBoundingClientRect() {
      log.push(`measure ${name}`);
      return { width, height };
    },
  } as unknown as Element;
}

const drawer = (name: string, log: string[], sizes: Record<string, Size>) => (size: Size) => {
  log.push(`draw ${name}`);
  sizes[name] = size;
};

describe('drawSoon', () => {
  it('measures every host queued in one task before drawing any, after the synchronous code', async () => {
    const log: string[] = [];
    const sizes: Record<string, Size> = {};
    drawSoon(host('a', 444.6, 200, log), drawer('a', log, sizes));
    drawSoon(host('b', 300.2, 199.9, log), drawer('b', log, sizes));
    drawSoon(host('c', 10, 20, log), drawer('c', log, sizes));
    expect(log).toEqual([]);
    await Promise.resolve();
    expect(log).toEqual(['measure a', 'measure b', 'measure c', 'draw a', 'draw b', 'draw c']);
    expect(sizes).toEqual({ a: { width: 444, height: 200 }, b: { width: 300, height: 199 }, c: { width: 10, height: 20 } });
  });

  it('skips a cancelled host and one no longer in the page; a later task starts a new batch', async () => {
    const log: string[] = [];
    const sizes: Record<string, Size> = {};
    const cancel = drawSoon(host('a', 100, 50, log), drawer('a', log, sizes));
    drawSoon(host('gone', 100, 50, log, false), drawer('gone', log, sizes));
    drawSoon(host('b', 120, 60, log), drawer('b', log, sizes));
    cancel();
    await Promise.resolve();
    expect(log).toEqual(['measure gone', 'measure b', 'draw b']);
    drawSoon(host('c', 130, 70, log), drawer('c', log, sizes));
    await Promise.resolve();
    expect(log.slice(3)).toEqual(['measure c', 'draw c']);
    expect(Object.keys(sizes)).toEqual(['b', 'c']);
  });

  it('a draw that queues another host (a panel appearing while drawn) gets its own batch', async () => {
    const log: string[] = [];
    const sizes: Record<string, Size> = {};
    drawSoon(host('a', 100, 50, log), (size) => {
      drawer('a', log, sizes)(size);
      drawSoon(host('late', 90, 40, log), drawer('late', log, sizes));
    });
    await Promise.resolve();
    await Promise.resolve();
    expect(log).toEqual(['measure a', 'draw a', 'measure late', 'draw late']);
  });
});
