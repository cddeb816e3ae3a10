/**
 * Progress of a corpus index build (src/core/data/corpusIndex.ts), one record type for every layer
 * that shows it: the build reports it, the engine sends it as an `indexProgress` message
 * (src/core/host/messages.ts), the host pushes it (LabPush), the CLI prints corpusProgressLine
 * and the run dashboard draws a bar from corpusProgressFigures (RunDashboardIndexProgress.vue).
 * Pure: no I/O, browser-safe. Tested by test/shared/corpusProgress.test.ts.
 */

export interface CorpusProgress {
  /** Passages indexed so far. */
  passages: number;
  /** Bytes of the corpus file read so far (the reader runs up to one 8 MiB chunk ahead). */
  bytesRead: number;
  totalBytes: number;
  /** Since the build started, ms. */
  elapsedMs: number;
  /** True on the last report of a build (the index is complete). */
  done: boolean;
}

export interface CorpusProgressFigures {
  /** Share of the file read, 0..1 (1 once done, and for an empty file). */
  fraction: number;
  /** Passages indexed per second so far. */
  rate: number;
  /** Seconds left at the rate so far (bytes to go over bytes per second), 0 once done; null before anything was read. */
  etaS: number | null;
}

export function corpusProgressFigures(p: CorpusProgress): CorpusProgressFigures {
  const fraction = p.done || p.totalBytes <= 0 ? 1 : Math.min(1, Math.max(0, p.bytesRead / p.totalBytes));
  const elapsedS = Math.max(1e-3, p.elapsedMs / 1000);
  const etaS = p.done ? 0 : fraction > 0 ? ((1 - fraction) / fraction) * elapsedS : null;
  return { fraction, rate: p.passages / elapsedS, etaS };
}

/** `12 s`, `8 min`, `2.5 h`. */
export function formatSeconds(s: number): string {
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

/** `indexing corpus: 1200000 passages, 5.7%, 41000 passages/s, ETA 8 min` (the CLI's and the engine log's line). */
export function corpusProgressLine(p: CorpusProgress): string {
  const f = corpusProgressFigures(p);
  const eta = p.done ? `done in ${formatSeconds(p.elapsedMs / 1000)}` : `ETA ${formatSeconds(f.etaS ?? 0)}`;
  return `indexing corpus: ${p.passages} passages, ${(100 * f.fraction).toFixed(1)}%, ${Math.round(f.rate)} passages/s, ${eta}`;
}

/** `1.2M`, `45k`, `994`: a count short enough for a status bar. */
function shortCount(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${Math.round(n / 1e3)}k`;
  return String(Math.round(n));
}

/** The dashboard bar's words: `1.2M passages · 5.7% · 41k passages/s · ETA 8 min`. */
export function corpusProgressBarText(p: CorpusProgress): string {
  const f = corpusProgressFigures(p);
  const eta = p.done ? `done in ${formatSeconds(p.elapsedMs / 1000)}` : f.etaS === null ? 'ETA –' : `ETA ${formatSeconds(f.etaS)}`;
  return `${shortCount(p.passages)} passages · ${(100 * f.fraction).toFixed(1)}% · ${shortCount(f.rate)} passages/s · ${eta}`;
}

/** The fields of a push (LabPush, src/shared/api.ts, which imports this file) that the bar reads. */
export type IndexBarPush = { type: string; status?: string } & Partial<CorpusProgress>;

/**
 * What the dashboard's bar shows after a push of its run: the build's latest report while it
 * runs; nothing once the build reports done, a step commits, or the run leaves `running`.
 */
export function indexBarAfter(current: CorpusProgress | null, push: IndexBarPush): CorpusProgress | null {
  if (push.type === 'indexProgress') {
    const { passages = 0, bytesRead = 0, totalBytes = 0, elapsedMs = 0, done = false } = push;
    return done ? null : { passages, bytesRead, totalBytes, elapsedMs, done };
  }
  if (push.type === 'progress' || (push.type === 'status' && push.status !== 'running')) return null;
  return current;
}
