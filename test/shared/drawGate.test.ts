// The chart panels' draw timing: at once, then at most once per frame (src/shared/drawGate.ts).
import { describe, expect, it } from 'vitest';
import { drawGate } from '../../src/shared/drawGate';
import { frames } from './frameClock';

/** A gate over a hand-driven frame source, counting its draws. */
function setup() {
  const f = frames();
  const counted = { draws: 0 };
  const gate = drawGate(() => counted.draws++, f.next, f.cancel);
  return { f, gate, counted };
}

describe('drawGate', () => {
  it('draws the first request at once, in the calling task', () => {
    const { gate, counted } = setup();
    gate.request();
    expect(counted.draws).toBe(1);
  });

  it('folds requests made before the next frame into one draw in that frame', () => {
    const { f, gate, counted } = setup();
    gate.request();
    gate.request();
    gate.request();
    expect(counted.draws).toBe(1);
    f.tick();
    expect(counted.draws).toBe(2);
    // That draw opened a new window: a request now waits for the following frame.
    gate.request();
    expect(counted.draws).toBe(2);
    f.tick();
    expect(counted.draws).toBe(3);
  });

  it('draws at once again after a frame passed without requests', () => {
    const { f, gate, counted } = setup();
    gate.request();
    f.tick(); // nothing pending: the window closes
    f.tick();
    expect(f.size).toBe(0);
    gate.request();
    expect(counted.draws).toBe(2);
  });

  it('cancel drops a pending draw and the open window', () => {
    const { f, gate, counted } = setup();
    gate.request();
    gate.request();
    gate.cancel();
    f.tick();
    expect(counted.draws).toBe(1);
    expect(f.size).toBe(0);
    gate.request();
    expect(counted.draws).toBe(2);
  });
});
