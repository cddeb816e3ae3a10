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
import { EngineHandleBase } from '../core/host/launcher';
import type { HostMessage } from '../core/host/messages';

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

export class UtilityEngineHandle extends EngineHandleBase {
  /** The pid once spawned (the child's own `pid` reads undefined again after exit). */
  private spawnedPid: number | undefined;

  constructor(
    private readonly child: UtilityChildLike,
    /** Sends a signal to a pid; default process.kill (used for signals other than SIGTERM). */
    private readonly signalPid: (pid: number, signal: NodeJS.Signals) => void = (pid, signal) => process.kill(pid, signal),
  ) {
    super();
    this.spawnedPid = child.pid;
    child.on('spawn', () => (this.spawnedPid = child.pid ?? this.spawnedPid));
    child.on('message', (raw) => this.receive(raw));
    child.stderr?.on('data', (d: Buffer | string) => this.appendStderr(d.toString()));
    child.stdout?.resume(); // drain when piped; the engine talks through messages
    // A V8 fatal error: an 'exit' always follows, keep the report's headline for stderrTail.
    child.on('error', (type, location) => this.appendStderr(`\n${type} at ${location}`));
    child.on('exit', (code) => this.exit(code, null));
  }

  get pid(): number | undefined {
    return this.exited ? this.spawnedPid : (this.child.pid ?? this.spawnedPid);
  }

  send(msg: HostMessage): void {
    if (this.exited) return;
    try {
      this.child.postMessage(msg);
    } catch (err) {
      // The engine may exit between the check and the post; that is not an error of the caller.
      if (!this.exited) this.appendStderr(`\nsend failed: ${(err as Error).message}`);
    }
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
