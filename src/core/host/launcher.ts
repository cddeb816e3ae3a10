/**
 * Starting an engine process for one run, behind a small interface the host uses without caring
 * how: `NodeForkLauncher` (CLI, web mode, tests) forks `src/engine/main.ts` under plain Node with
 * tsx's loader; the Electron utilityProcess launcher (src/main/utilityLauncher.ts) starts the same entry, built.
 * A handle gives the pid, typed sends, validated incoming messages, the exit and a kill.
 *
 * Not here: what a run is or what its messages mean (runs.ts), the engine itself (src/engine/).
 * Tested through test/engine/*.test.ts (real forks, kill -9 included).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseEngineMessage, type EngineMessage, type HostMessage } from './messages';
import { tfLogFilter } from './tfLogFilter';

/** The engine entry, shared by every launcher. Args: DB_PATH RUN_ID start|resume. */
export const ENGINE_ENTRY = resolve(__dirname, '../../engine/main.ts');

export type EngineMode = 'start' | 'resume';

export interface EngineLaunchRequest {
  /** The lab database (the engine opens its own write connection to it). */
  dbPath: string;
  runId: number;
  mode: EngineMode;
}

export interface EngineHandle {
  readonly pid: number | undefined;
  /** Sends a control message; a no-op once the engine has exited. */
  send(msg: HostMessage): void;
  /** Every valid message from the engine; an invalid one arrives as a `log` error naming the problem. Returns a disposer. */
  onMessage(listener: (msg: EngineMessage) => void): () => void;
  /** Called once when the process has exited (immediately if it already has). Returns a disposer. */
  onExit(listener: (code: number | null, signal: NodeJS.Signals | null) => void): () => void;
  kill(signal?: NodeJS.Signals): void;
}

export interface EngineLauncher {
  launch(request: EngineLaunchRequest): EngineHandle;
}

export interface NodeForkLauncherOptions {
  /** Engine entry file (default ENGINE_ENTRY). */
  entry?: string;
  /** Extra environment for the engine (merged over process.env). */
  env?: NodeJS.ProcessEnv;
  /**
   * 'inherit' (default): the engine's stdout/stderr go to the host's; 'pipe': kept, see
   * `stderrTail`; 'filter': stderr goes to the host's without TensorFlow's start-up INFO lines
   * (tfLogFilter.ts), and is kept too.
   */
  stdio?: 'inherit' | 'pipe' | 'filter';
  /** Where 'filter' writes (default: this process's stderr). */
  stderrSink?: (text: string) => void;
}

/** tsx's ESM loader, by absolute URL so the engine starts from any working directory. */
function tsxImport(): string {
  return pathToFileURL(createRequire(__filename).resolve('tsx')).href;
}

type ExitListener = (code: number | null, signal: NodeJS.Signals | null) => void;

/**
 * What every EngineHandle shares, whatever the process kind: validated incoming messages (an
 * invalid one arrives as a `log` error naming the problem), an exit reported once (immediately
 * to late listeners), and the last 8000 characters of stderr. Subclasses feed it events.
 */
export abstract class EngineHandleBase implements EngineHandle {
  private readonly messageListeners = new Set<(msg: EngineMessage) => void>();
  private readonly exitListeners = new Set<ExitListener>();
  protected exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  protected stderr = '';

  abstract readonly pid: number | undefined;
  abstract send(msg: HostMessage): void;
  abstract kill(signal?: NodeJS.Signals): void;

  /** A raw message from the engine. */
  protected receive(raw: unknown): void {
    let msg: EngineMessage;
    try {
      msg = parseEngineMessage(raw);
    } catch (err) {
      msg = { type: 'log', level: 'error', line: (err as Error).message };
    }
    for (const l of this.messageListeners) l(msg);
  }

  /** The process ended; later calls are ignored. */
  protected exit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exited) return;
    this.exited = { code, signal };
    for (const l of this.exitListeners) l(code, signal);
    this.exitListeners.clear();
  }

  protected appendStderr(text: string): void {
    this.stderr = (this.stderr + text).slice(-8000);
  }

  /** The last 8000 characters the engine wrote to stderr (stdio 'pipe' only), and spawn or fatal errors. */
  stderrTail(): string {
    return this.stderr;
  }

  onMessage(listener: (msg: EngineMessage) => void): () => void {
    this.messageListeners.add(listener);
    return () => this.messageListeners.delete(listener);
  }

  onExit(listener: ExitListener): () => void {
    if (this.exited) {
      listener(this.exited.code, this.exited.signal);
      return () => {};
    }
    this.exitListeners.add(listener);
    return () => this.exitListeners.delete(listener);
  }
}

class ForkedEngine extends EngineHandleBase {
  constructor(private readonly child: ChildProcess) {
    super();
    child.on('message', (raw) => this.receive(raw));
    child.stderr?.on('data', (d: Buffer) => this.appendStderr(d.toString()));
    child.on('exit', (code, signal) => this.exit(code, signal));
    // A spawn failure (bad execPath) arrives as 'error' and no 'exit': report it as an exit.
    child.on('error', (err) => {
      if (this.exited) return;
      this.appendStderr(`\n${err.message}`);
      if (child.pid === undefined) this.exit(1, null);
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  send(msg: HostMessage): void {
    if (this.exited || !this.child.connected) return;
    this.child.send(msg, (err) => {
      // The engine may exit between the check and the write; that is not an error of the caller.
      if (err && !this.exited) this.appendStderr(`\nsend failed: ${err.message}`);
    });
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (!this.exited) this.child.kill(signal);
  }
}

/** Forks the engine under this Node with tsx (`--import tsx`), talking over the IPC channel. */
export class NodeForkLauncher implements EngineLauncher {
  constructor(private readonly options: NodeForkLauncherOptions = {}) {}

  launch(request: EngineLaunchRequest): EngineHandle & { stderrTail(): string } {
    const pipe = this.options.stdio === 'pipe';
    const filter = this.options.stdio === 'filter';
    const child = fork(this.options.entry ?? ENGINE_ENTRY, [request.dbPath, String(request.runId), request.mode], {
      execArgv: ['--import', tsxImport()],
      env: { ...process.env, ...this.options.env },
      // Structured clone keeps NaN and Infinity in metric values (JSON would turn them into null).
      serialization: 'advanced',
      stdio: pipe ? ['ignore', 'pipe', 'pipe', 'ipc'] : filter ? ['ignore', 'inherit', 'pipe', 'ipc'] : ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    if (pipe) child.stdout?.resume(); // drain; the engine talks through messages
    if (filter) {
      const sink = this.options.stderrSink ?? ((text: string) => void process.stderr.write(text));
      const out = tfLogFilter(sink);
      child.stderr?.on('data', (d: Buffer) => out.write(d.toString()));
      child.stderr?.on('end', () => out.end());
    }
    return new ForkedEngine(child);
  }
}
