/**
 * The CLI's progress line (src/cli/progress.ts): the corpus index bar on a terminal, nothing extra
 * on a pipe (the engine's log line says it there), and the step bar's fill.
 */
import { describe, expect, it } from 'vitest';
import { ProgressView } from '../../src/cli/progress';

function terminal(columns = 120) {
  const writes: string[] = [];
  return { writes, tty: { columns, write: (t: string) => void writes.push(t) } };
}

const report = (bytesRead: number, done = false) => ({ type: 'indexProgress', passages: 20000, bytesRead, totalBytes: 100, elapsedMs: 2000, done }) as const;

describe('ProgressView', () => {
  it('draws the corpus index bar on a terminal: half the file read -> half the bar, then cleared when done', () => {
    const { writes, tty } = terminal();
    const lines: string[] = [];
    const view = new ProgressView((l) => lines.push(l), tty);
    view.handle(report(50));
    expect(writes).toHaveLength(1);
    const clearLine = '\r\x1b[2K';
    expect(writes[0].startsWith(clearLine)).toBe(true);
    const m = /^\[(#*)(\.*)\] (.*)$/.exec(writes[0].slice(clearLine.length));
    expect(m).not.toBeNull();
    const [, filled, empty, text] = m!;
    expect(filled.length).toBe(empty.length); // 50% of the bar
    // 20000 passages in 2 s = 10k/s; half read in 2 s -> 2 s to go.
    expect(text).toBe('20k passages · 50.0% · 10k passages/s · ETA 2 s');
    view.handle(report(100, true));
    expect(writes[1]).toBe('\r\x1b[2K');
    expect(lines).toEqual([]);
  });

  it('prints nothing for index reports on a pipe', () => {
    const lines: string[] = [];
    const view = new ProgressView((l) => lines.push(l), null);
    view.handle(report(50));
    view.handle(report(100, true));
    expect(lines).toEqual([]);
  });

  it('a run with evaluation off ends with what it did, not a table of dashes', () => {
    const lines: string[] = [];
    const view = new ProgressView((l) => lines.push(l), null);
    view.handle({ type: 'step', step: 2, final: true, totalSteps: 2, metrics: { 'time/step': 0.0001 }, wallMs: 1, checkpoint: null });
    expect(lines).toEqual(['done: 2 updates; no final evaluation (evaluation off: eval.every = 0)']);
    expect(lines.join('\n')).not.toMatch(/macro avg -/);
  });

  it('prints a health warning once, when it first holds (steps are updates done)', () => {
    const lines: string[] = [];
    const view = new ProgressView((l) => lines.push(l), null);
    const step = (s: number) =>
      view.handle({
        type: 'step',
        step: s,
        final: false,
        totalSteps: 6,
        metrics: { 'reward/mean': 0, 'groups/zero_std_frac': 1 },
        wallMs: 1,
        checkpoint: null,
      });
    for (let s = 0; s < 5; s++) step(s);
    const warnings = lines.filter((l) => l.startsWith('warning:'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^warning: No learning signal: groups\/zero_std_frac = 1 for 3 consecutive steps \(1-3\).*random-weight model/);
    // It came right after step 3 (the third step with no signal), not before.
    expect(lines.findIndex((l) => l.startsWith('warning:'))).toBe(lines.findIndex((l) => l.startsWith('step 3/6')) + 1);
  });
});
