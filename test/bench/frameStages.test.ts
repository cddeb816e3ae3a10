/**
 * bench/frameStages: a draw's frame found among a trace's frame reporters (same renderer,
 * presented whole, the first to commit after the draw's end) and cut into its stages. The trace
 * here is written by hand, its times in microseconds as Chromium records them.
 */
import { describe, expect, it } from 'vitest';
import { frameStages, pageGc, type TraceEvent } from '../../bench/frameStages';

const span = (name: string, pid: number, id: string, start: number, end: number, args?: TraceEvent['args']): TraceEvent[] => [
  { name, ph: 'b', pid, id, ts: start, args },
  { name, ph: 'e', pid, id, ts: end },
];
const presented = { frame_reporter: { state: 'STATE_PRESENTED_ALL' } };
/** A frame reporter and its stages, all under one id as Chromium nests them. */
function frame(pid: number, id: string, at: { start: number; commit: number; end: number }, state = presented): TraceEvent[] {
  const c = at.commit;
  return [
    ...span('PipelineReporter', pid, id, at.start, at.end, state),
    ...span('SendBeginMainFrameToCommit', pid, id, at.start, c),
    ...span('Commit', pid, id, c, c + 500),
    ...span('EndCommitToActivation', pid, id, c + 500, c + 6000),
    ...span('Activation', pid, id, c + 6000, c + 6400),
    ...span('EndActivateToSubmitCompositorFrame', pid, id, c + 6400, c + 7000),
    ...span('SubmitCompositorFrameToPresentationCompositorFrame', pid, id, c + 7000, at.end),
    ...span('StartDrawToSwapStart', pid, id, c + 10_000, c + 13_000),
  ];
}

describe('frameStages', () => {
  it('takes the first frame of the draw’s renderer presented whole that commits after the draw, and splits it from the draw’s end', () => {
    const trace = [
      ...span('page:draw', 1, '0x1', 1000, 21_000),
      // Committed before the draw ended: its frame does not show the draw.
      ...frame(1, '0xa', { start: 2000, commit: 15_000, end: 30_000 }),
      // Another renderer's frame, and a frame of this one presented only in part.
      ...frame(2, '0xb', { start: 22_000, commit: 23_000, end: 40_000 }),
      ...frame(1, '0xc', { start: 22_000, commit: 25_000, end: 45_000 }, { frame_reporter: { state: 'STATE_PRESENTED_PARTIAL' } }),
      // This one; and a later one, not.
      ...frame(1, '0xd', { start: 5000, commit: 30_000, end: 50_000 }),
      ...frame(1, '0xe', { start: 55_000, commit: 60_000, end: 80_000 }),
    ];
    expect(frameStages(trace, 'page:draw')).toEqual([{ toCommit: 9, commit: 0.5, rasterAndActivation: 5.9, toPresented: 13.6, displayDraw: 3, total: 29 }]);
  });

  it('leaves out a draw without a frame after it, and reads each draw of a name in turn', () => {
    const trace = [
      ...span('page:draw', 1, '0x1', 1000, 21_000),
      ...frame(1, '0xd', { start: 5000, commit: 30_000, end: 50_000 }),
      ...span('page:draw', 1, '0x2', 60_000, 70_000),
      ...span('other:draw', 1, '0x3', 1000, 2000),
    ];
    const got = frameStages(trace, 'page:draw');
    expect(got).toHaveLength(1);
    expect(got[0].total).toBe(29);
  });

  it('ends the raster stage at the commit-to-activation span when the reporter has no Activation stage', () => {
    const trace = [
      ...span('page:draw', 1, '0x1', 0, 10_000),
      ...frame(1, '0xd', { start: 1000, commit: 12_000, end: 30_000 }).filter((e) => e.name !== 'Activation'),
    ];
    const [s] = frameStages(trace, 'page:draw');
    expect(s.rasterAndActivation).toBe(5.5);
    expect(s.toPresented).toBe(12);
  });
});

describe('pageGc', () => {
  const gc = (name: string, pid: number, tid: number, ts: number, dur: number): TraceEvent => ({ name, ph: 'X', pid, tid, ts, dur });
  const draw = (pid: number, tid: number, id: string, ts: number): TraceEvent[] => [
    { name: 'page:draw', ph: 'b', pid, tid, id, ts },
    { name: 'page:draw', ph: 'e', pid, tid, id, ts: ts + 5000 },
  ];

  it('adds up the scavenges and full collections on the thread that drew, per draw', () => {
    const trace = [
      ...draw(1, 10, '0x1', 1000),
      ...draw(1, 10, '0x2', 100_000),
      gc('MinorGC', 1, 10, 20_000, 6000),
      gc('MinorGC', 1, 10, 150_000, 4000),
      gc('MajorGC', 1, 10, 160_000, 12_000),
      // Another thread of the same renderer (a worker), another renderer, and an event that is not a pause.
      gc('MinorGC', 1, 11, 30_000, 9000),
      gc('MinorGC', 2, 10, 30_000, 9000),
      gc('V8.GCScavenger', 1, 10, 20_100, 5800),
    ];
    expect(pageGc(trace, 'page:draw')).toEqual({ draws: 2, minor: { count: 2, ms: 10 }, major: { count: 1, ms: 12 } });
  });

  it('is null for a page that left no draw', () => {
    expect(pageGc([gc('MinorGC', 1, 10, 0, 1000)], 'page:draw')).toBeNull();
  });
});
