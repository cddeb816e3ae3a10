/**
 * The ui bench's frame diagnostics (UI_BENCH_FRAMES=1, bench/ui.bench.ts): where the time from a
 * chart draw's end to the presentation of the frame that shows it goes, read from a Chromium trace
 * of the measured opens and the floor's repetitions. Decisions 077 and 078 read these stages off
 * traces by hand; this makes them a figure the bench prints and another machine can rerun.
 *
 * A draw is a User Timing measure its page leaves (the dashboard's charts/firstDraw, the floor's
 * bench/page/echartsFloor.ts), recorded in the trace as an async begin/end pair. Its frame is the
 * first frame of the same renderer that Chromium's frame reporter (cc's `PipelineReporter`) saw
 * presented whole (STATE_PRESENTED_ALL) and whose `Commit` stage starts after the draw's end. The
 * frame's stages come from that reporter's nested spans.
 *
 * `pageGc` adds up the garbage collector's pauses on the main thread of the page that left a draw
 * (V8's `MinorGC` and `MajorGC` events, trace category `v8`), per draw, to set the collector's
 * share beside the frame stages (decision 081).
 */

/** The fields of a trace event (Chromium's JSON trace format) read here. */
export interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  /** The thread (absent in hand-written traces that need none). */
  tid?: number;
  /** Microseconds, on the trace's own clock. */
  ts: number;
  /** A complete event's duration ('X'), microseconds. */
  dur?: number;
  id?: string;
  id2?: { local?: string; global?: string };
  args?: { frame_reporter?: { state?: string } };
}

/** One draw's frame, in ms, each stage following the one before it. */
export interface FrameStages {
  /**
   * From the draw's end to the compositor thread's commit: the rest of the draw's task and any task
   * queued before the frame, then the frame on the main thread (style, layout, paint, and the layers'
   * update, which flushes each canvas's contents).
   */
  toCommit: number;
  /** The compositor thread's commit of that frame (cc's `Commit` stage). */
  commit: number;
  /** From the commit's end to the activation's end: the new tiles rastered (on worker threads), then the tree activated. */
  rasterAndActivation: number;
  /** From the activation to presentation: the compositor frame submitted, drawn by the display compositor, swapped, presented. */
  toPresented: number;
  /** Part of toPresented: the display compositor's draw of the frame (StartDrawToSwapStart; 0 when the reporter has none). */
  displayDraw: number;
  /** From the draw's end to presentation: the sum of the four stages. */
  total: number;
}

interface Span {
  name: string;
  pid: number;
  key: string;
  start: number;
  end: number;
  args?: TraceEvent['args'];
}

/** Adds `value` to the list kept under `key`. */
function append<T>(lists: Map<string, T[]>, key: string, value: T): void {
  const list = lists.get(key);
  if (list) list.push(value);
  else lists.set(key, [value]);
}

/** Async begin/end pairs ('b'/'e') as spans, paired by process, id and name in trace order. */
function spans(events: readonly TraceEvent[]): Span[] {
  const open = new Map<string, TraceEvent[]>();
  const out: Span[] = [];
  for (const e of [...events].sort((a, b) => a.ts - b.ts)) {
    if (e.ph !== 'b' && e.ph !== 'e') continue;
    const key = `${e.pid}:${e.id ?? e.id2?.local ?? e.id2?.global ?? ''}`;
    const k = `${key}:${e.name}`;
    if (e.ph === 'b') append(open, k, e);
    else {
      const begun = open.get(k)?.shift();
      if (begun) out.push({ name: e.name, pid: e.pid, key, start: begun.ts, end: e.ts, args: begun.args });
    }
  }
  return out;
}

/**
 * Each draw named `drawName` in `events` with its frame's stages, in trace order. A draw whose
 * frame is not in the trace (the trace ended first, or no presented frame committed after it) is
 * left out.
 */
export function frameStages(events: readonly TraceEvent[], drawName: string): FrameStages[] {
  const all = spans(events);
  // A reporter's stages share its process and id.
  const byKey = new Map<string, Span[]>();
  for (const s of all) append(byKey, s.key, s);
  const frames = all
    .filter((s) => s.name === 'PipelineReporter' && s.args?.frame_reporter?.state === 'STATE_PRESENTED_ALL')
    .flatMap((reporter) => {
      const stages = byKey.get(reporter.key)!.filter((s) => s !== reporter && s.start >= reporter.start && s.end <= reporter.end);
      const commit = stages.find((s) => s.name === 'Commit');
      return commit ? [{ reporter, stages, commit }] : [];
    });
  const out: FrameStages[] = [];
  for (const draw of all.filter((s) => s.name === drawName)) {
    const after = frames.filter((f) => f.reporter.pid === draw.pid && f.commit.start >= draw.end);
    if (!after.length) continue;
    const { reporter, stages, commit } = after.reduce((a, b) => (b.commit.start < a.commit.start ? b : a));
    const stage = (name: string) => stages.find((s) => s.name === name);
    const activated = stage('Activation')?.end ?? stage('EndCommitToActivation')?.end ?? commit.end;
    const displayDraw = stage('StartDrawToSwapStart');
    const ms = (us: number) => us / 1000;
    out.push({
      toCommit: ms(commit.start - draw.end),
      commit: ms(commit.end - commit.start),
      rasterAndActivation: ms(activated - commit.end),
      toPresented: ms(reporter.end - activated),
      displayDraw: displayDraw ? ms(displayDraw.end - displayDraw.start) : 0,
      total: ms(reporter.end - draw.end),
    });
  }
  return out;
}

/** The collector's pauses on a page's main thread, per draw of that page (ms and counts over the whole trace). */
export interface PageGc {
  /** Draws of the page in the trace (the dashboard's opens, the floor's repetitions). */
  draws: number;
  minor: { count: number; ms: number };
  major: { count: number; ms: number };
}

/**
 * The GC pauses (V8's `MinorGC`, `MajorGC`) on the thread that left the draws named `drawName`
 * (a page's main thread: User Timing is recorded there), over the whole trace, so a pause between
 * two opens counts too. Null when the trace has no such draw.
 */
export function pageGc(events: readonly TraceEvent[], drawName: string): PageGc | null {
  const draws = events.filter((e) => e.name === drawName && e.ph === 'b');
  if (!draws.length) return null;
  const { pid, tid } = draws[0];
  const out: PageGc = { draws: draws.length, minor: { count: 0, ms: 0 }, major: { count: 0, ms: 0 } };
  for (const e of events) {
    if (e.ph !== 'X' || e.pid !== pid || e.tid !== tid) continue;
    const kind = e.name === 'MinorGC' ? out.minor : e.name === 'MajorGC' ? out.major : null;
    if (!kind) continue;
    kind.count++;
    kind.ms += (e.dur ?? 0) / 1000;
  }
  return out;
}
