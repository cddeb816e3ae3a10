/**
 * An EngineHandle over an Electron utility process (the child side is src/engine/parentChannel.ts,
 * `process.parentPort`). Written against the few members of Electron's `UtilityProcess` it uses,
 * with no `electron` import, so it can be exercised under plain Node with a fake child
 * (test/engine/parentChannel.test.ts); utilityLauncher.ts creates the real one.
 *
 * Same contract as the Node-fork handle in src/core/host/launcher.ts: every incoming message is
 * validated with the protocol's zod schema (an invalid one arrives as a `log` error naming the
 * problem), sends after exit are no-ops, onExit fires once (immediately if already exited).
 * A utility process reports an exit code only: the signal is always null.
 */
import type { EngineHandle } from '../core/host/launcher';
import { parseEngineMessage, type EngineMessage, type HostMessage } from '../core/host/messages';

/** The members of Electron's UtilityProcess this handle uses. */
export interface UtilityChildLike {
  readonly pid: number | undefined;
  readonly stderr: NodeJS.ReadableStream | null;
  readonly stdout: NodeJS.ReadableStream | null;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  on(event: 'exit', listener: (code: number) => void): unknown;
  on(event: 'spawn', listener: () => void): unknown;
  on(event: 'error', listener: (type: string, location: string, report: string) => void): unknown;
  postMessage(message: unknown): void;
  /** SIGTERM on POSIX. */
  kill(): boolean;
}

type ExitListener = (code: number | null, signal: NodeJS.Signals | null) => void;

export class UtilityEngineHandle implements EngineHandle {
  private readonly messageListeners = new Set<(msg: EngineMessage) => void>();
  private readonly exitListeners = new Set<ExitListener>();
  private exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private stderr = '';
  /** The pid once spawned (the child's own `pid` reads undefined again after exit). */
  private spawnedPid: number | undefined;

  constructor(
    private readonly child: UtilityChildLike,
    /** Sends a signal to a pid; default process.kill (used for signals other than SIGTERM). */
    private readonly signalPid: (pid: number, signal: NodeJS.Signals) => void = (pid, signal) => process.kill(pid, signal),
  ) {
    this.spawnedPid = child.pid;
    child.on('spawn', () => (this.spawnedPid = child.pid ?? this.spawnedPid));
    child.on('message', (raw) => {
      let msg: EngineMessage;
      try {
        msg = parseEngineMessage(raw);
      } catch (err) {
        msg = { type: 'log', level: 'error', line: (err as Error).message };
      }
      for (const l of this.messageListeners) l(msg);
    });
    child.stderr?.on('data', (d: Buffer | string) => (this.stderr = (this.stderr + d.toString()).slice(-8000)));
    child.stdout?.resume(); // drain when piped; the engine talks through messages
    // A V8 fatal error: an 'exit' always follows, keep the report's headline for stderrTail.
    child.on('error', (type, location) => (this.stderr = `${this.stderr}\n${type} at ${location}`.slice(-8000)));
    child.on('exit', (code) => {
      if (this.exited) return;
      this.exited = { code, signal: null };
      for (const l of this.exitListeners) l(code, null);
      this.exitListeners.clear();
    });
  }

  get pid(): number | undefined {
    return this.exited ? this.spawnedPid : (this.child.pid ?? this.spawnedPid);
  }

  /** The last 8000 characters the engine wrote to stderr (stdio 'pipe' only) and any fatal error. */
  stderrTail(): string {
    return this.stderr;
  }

  send(msg: HostMessage): void {
    if (this.exited) return;
    try {
      this.child.postMessage(msg);
    } catch (err) {
      // The engine may exit between the check and the post; that is not an error of the caller.
      if (!this.exited) this.stderr += `\nsend failed: ${(err as Error).message}`;
    }
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

  /** SIGTERM (the default) through UtilityProcess.kill; other signals (SIGKILL) to the pid. */
  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.exited) return;
    const pid = this.child.pid;
    if (signal === 'SIGTERM' || pid === undefined) {
      this.child.kill();
      return;
    }
    try {
      this.signalPid(pid, signal);
    } catch {
      this.child.kill();
    }
  }
}
