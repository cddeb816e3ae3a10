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
});
