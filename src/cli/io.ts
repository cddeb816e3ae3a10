/**
 * What a command may touch besides its arguments, so tests can run commands in-process: output
 * lines, an optional terminal (progress bar), the engine launcher, and Ctrl-C. `processIO()` is
 * the real thing (index.ts); tests pass their own (test/cli/train.test.ts).
 */
import { NodeForkLauncher, type EngineLauncher } from '../core/host/launcher';

export interface CliIO {
  /** One line of normal output (stdout). */
  out(line: string): void;
  /** A terminal to redraw a one-line progress bar on; null when stdout is not a TTY. */
  tty: { write(text: string): void; columns: number } | null;
  launcher: EngineLauncher;
  /** Registers a Ctrl-C handler for the duration of a command; returns a disposer. */
  onInterrupt(handler: () => void): () => void;
}

export function processIO(): CliIO {
  return {
    out: (line) => console.log(line),
    tty: process.stdout.isTTY ? { write: (t) => void process.stdout.write(t), columns: process.stdout.columns || 100 } : null,
    // The engine's stderr without TensorFlow's start-up INFO lines (core/host/tfLogFilter.ts).
    launcher: new NodeForkLauncher({ stdio: 'filter' }),
    onInterrupt: (handler) => {
      process.on('SIGINT', handler);
      return () => void process.off('SIGINT', handler);
    },
  };
}
