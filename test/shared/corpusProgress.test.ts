/**
 * The corpus index build's progress as every layer shows it (src/shared/corpusProgress.ts): the
 * figures (share of the file read, passages/s, ETA), the CLI's line, the dashboard bar's words,
 * and which pushes show, update and hide the bar (indexBarAfter, what RunDashboardIndexProgress
 * draws).
 */
import { describe, expect, it } from 'vitest';
import type { LabPush } from '../../src/shared/api';
import { corpusProgressBarText, corpusProgressFigures, corpusProgressLine, indexBarAfter, type CorpusProgress } from '../../src/shared/corpusProgress';

const at = (over: Partial<CorpusProgress>): CorpusProgress => ({ passages: 0, bytesRead: 0, totalBytes: 1000, elapsedMs: 1000, done: false, ...over });

describe('corpus progress figures', () => {
  it('share of the bytes read, passages per second, and the time left at that pace', () => {
    // A quarter of the file in 10 s: three quarters to go take 30 s.
    expect(corpusProgressFigures(at({ passages: 400_000, bytesRead: 250, elapsedMs: 10_000 }))).toEqual({ fraction: 0.25, rate: 40_000, etaS: 30 });
  });

  it('no ETA before anything was read; done is the whole file and nothing left', () => {
    expect(corpusProgressFigures(at({ bytesRead: 0 })).etaS).toBeNull();
    expect(corpusProgressFigures(at({ passages: 10, bytesRead: 900, done: true }))).toEqual({ fraction: 1, rate: 10, etaS: 0 });
    // The reader runs a chunk ahead of the inserts: never more than the whole file.
    expect(corpusProgressFigures(at({ bytesRead: 1200 })).fraction).toBe(1);
  });

  it("the CLI's and the engine log's line", () => {
    expect(corpusProgressLine(at({ passages: 1_200_000, bytesRead: 57, elapsedMs: 30_000 }))).toBe(
      'indexing corpus: 1200000 passages, 5.7%, 40000 passages/s, ETA 8 min',
    );
    expect(corpusProgressLine(at({ passages: 21_000_000, bytesRead: 1000, elapsedMs: 7_200_000, done: true }))).toBe(
      'indexing corpus: 21000000 passages, 100.0%, 2917 passages/s, done in 2.0 h',
    );
  });

  it("the dashboard bar's words: short counts, percent, rate, ETA", () => {
    expect(corpusProgressBarText(at({ passages: 1_200_000, bytesRead: 57, elapsedMs: 30_000 }))).toBe('1.2M passages · 5.7% · 40k passages/s · ETA 8 min');
    expect(corpusProgressBarText(at({ passages: 994, bytesRead: 0, elapsedMs: 500 }))).toBe('994 passages · 0.0% · 1988 passages/s · ETA –');
  });
});

describe('the dashboard bar follows its run’s pushes', () => {
  const report = (over: Partial<CorpusProgress>): LabPush => ({ type: 'indexProgress', runId: 1, ...at(over) });
  /** A push as the dashboard gets it (typed as the contract's union). */
  const push = (p: LabPush): LabPush => p;

  it('shows the latest report, keeps it through unrelated pushes, and hides once the build is done', () => {
    let bar = indexBarAfter(null, report({ passages: 100_000, bytesRead: 100 }));
    expect(bar).toEqual(at({ passages: 100_000, bytesRead: 100 }));
    bar = indexBarAfter(bar, push({ type: 'log', runId: 1, level: 'info', line: 'indexing corpus: …' }));
    bar = indexBarAfter(bar, push({ type: 'status', runId: 1, status: 'running', error: null }));
    expect(bar?.passages).toBe(100_000);
    bar = indexBarAfter(bar, report({ passages: 200_000, bytesRead: 200 }));
    expect(bar).toEqual(at({ passages: 200_000, bytesRead: 200 }));
    expect(indexBarAfter(bar, report({ passages: 250_000, bytesRead: 1000, done: true }))).toBeNull();
  });

  it('hides when a step commits or the run stops, fails or pauses (a dropped done report leaves no bar behind)', () => {
    const bar = indexBarAfter(null, report({ passages: 100_000, bytesRead: 100 }));
    expect(bar).not.toBeNull();
    expect(indexBarAfter(bar, push({ type: 'progress', runId: 1, step: 0, totalSteps: 4, final: false, wallMs: 1, metrics: {} }))).toBeNull();
    for (const status of ['stopped', 'failed', 'paused', 'interrupted'] as const)
      expect(indexBarAfter(bar, push({ type: 'status', runId: 1, status, error: null }))).toBeNull();
  });
});
