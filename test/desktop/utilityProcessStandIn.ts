/**
 * `utilityProcess.fork` of the stand-in Electron (electronStandIn.ts): Electron's UtilityProcess
 * over a Node `child_process.fork` of the module, with structured-clone IPC (Electron's
 * postMessage clones; JSON would turn NaN into null). utilityParentPort.cjs is preloaded into the
 * child: it gets Electron's `process.parentPort` and loses `process.send`, so an engine that does
 * not talk through parentPort cannot talk at all. As in Electron: `pid` is undefined until the
 * child has spawned and after it exits, 'exit' carries a code only, stdin must be 'ignore',
 * stdout/stderr are streams only when piped.
 *
 * Not Electron's: no Chromium service process, no sandbox, no V8 'error' reports. Used by test/desktop only.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { constants as osConstants } from 'node:os';
import { resolve } from 'node:path';

/** Preloaded into every forked engine: Electron's `process.parentPort` over the Node IPC channel. */
export const PARENT_PORT_SHIM = resolve(__dirname, 'utilityParentPort.cjs');

/** A child started by `utilityProcess.fork`: Electron's UtilityProcess over a Node fork. */
export class StandInUtilityProcess extends EventEmitter {
  readonly stdout: NodeJS.ReadableStream | null;
  readonly stderr: NodeJS.ReadableStream | null;
  private spawned = false;
  private exited = false;
  /** The exit as Node saw it (Electron reports only a code). */
  exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;

  constructor(readonly child: ChildProcess) {
    super();
    this.stdout = child.stdout;
    this.stderr = child.stderr;
    child.on('spawn', () => {
      this.spawned = true;
      this.emit('spawn');
    });
    child.on('message', (m) => this.emit('message', m));
    child.on('exit', (code, signal) => {
      this.exited = true;
      this.exit = { code, signal };
      // Electron reports a code only; here a signal reads as 128 + its number (SIGKILL: 137).
      this.emit('exit', code ?? 128 + (signal ? osConstants.signals[signal] : 0));
    });
    child.on('error', () => {
      // A fork that could not start: Electron reports an exit.
      if (this.exited) return;
      this.exited = true;
      this.exit = { code: 1, signal: null };
      this.emit('exit', 1);
    });
  }

  /** Undefined until spawned and after exit, as Electron's. */
  get pid(): number | undefined {
    return this.spawned && !this.exited ? this.child.pid : undefined;
  }

  postMessage(message: unknown): void {
    if (this.exited || !this.child.connected) throw new Error('Cannot post message to a process that is not running');
    this.child.send(message as never);
  }

  kill(): boolean {
    if (this.exited) return false;
    return this.child.kill('SIGTERM');
  }
}

type StdioValue = 'pipe' | 'ignore' | 'inherit';

/** Electron's stdio option: a string, or [stdin, stdout, stderr] with stdin 'ignore'. */
function utilityStdio(stdio: unknown): [StdioValue, StdioValue, StdioValue] {
  const ok = (v: unknown): v is StdioValue => v === 'pipe' || v === 'ignore' || v === 'inherit';
  if (stdio === undefined) return ['ignore', 'inherit', 'inherit'];
  if (ok(stdio)) return ['ignore', stdio, stdio];
  if (Array.isArray(stdio) && stdio.length === 3 && stdio.every(ok)) {
    if (stdio[0] !== 'ignore') throw new Error(`utilityProcess.fork: stdin must be 'ignore' (got ${String(stdio[0])})`);
    return stdio as [StdioValue, StdioValue, StdioValue];
  }
  throw new Error(`utilityProcess.fork: invalid stdio ${JSON.stringify(stdio)}`);
}

/** utilityProcess.fork(modulePath, args, options) as Electron takes it. */
export function forkUtilityProcess(modulePath: string, args: string[], opts: Record<string, unknown>): StandInUtilityProcess {
  if (typeof modulePath !== 'string') throw new TypeError('utilityProcess.fork: modulePath must be a string');
  const stdio = utilityStdio(opts.stdio);
  const child = fork(modulePath, args, {
    env: (opts.env as NodeJS.ProcessEnv | undefined) ?? process.env,
    cwd: opts.cwd as string | undefined,
    execArgv: [...((opts.execArgv as string[] | undefined) ?? []), '--require', PARENT_PORT_SHIM],
    stdio: [...stdio, 'ipc'],
    // Electron's postMessage is a structured clone (NaN, typed arrays survive), not JSON.
    serialization: 'advanced',
  });
  return new StandInUtilityProcess(child);
}
