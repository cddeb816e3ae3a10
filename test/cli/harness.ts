/**
 * A command line run in-process, as the tests see it: exit code, standard output and the error
 * lines, each joined by newlines. Engines (train, resume) fork under this Node with their stderr
 * kept (`stdio: 'pipe'`), so a test's output stays its own.
 */
import { runCli } from '../../src/cli/commands';
import type { CliIO } from '../../src/cli/io';
import { NodeForkLauncher } from '../../src/core/host/launcher';

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

export async function runCliCaptured(argv: string[]): Promise<CliResult> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = { out: (l) => out.push(l), tty: null, launcher: new NodeForkLauncher({ stdio: 'pipe' }), onInterrupt: () => () => undefined };
  const code = await runCli(argv, io, (l) => err.push(l));
  return { code, out: out.join('\n'), err: err.join('\n') };
}
