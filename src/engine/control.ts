/**
 * The engine's control state: pause / resume / stop requests from the host (IPC messages,
 * SIGINT/SIGTERM, the host's STOP flag file, a lost IPC channel), and the two places the loop
 * consults it: `between steps` (async: yields to the event loop so messages that arrived during
 * the step are handled, and waits while paused) and inside a step (sync: the flag file only, see
 * src/core/host/paths.ts): before the update `checkMidStep` abandons the step; during the update
 * the engine only notes the request (`stopRequested`) and lets the step commit first.
 * A paused loop is woken by resume/stop at once; its only clock is the PAUSE_POLL_MS timer that
 * polls the flag file (exported so a test can tick it under a fake clock).
 *
 * Not here: the loop (runEngine.ts). Tested through test/engine/control.test.ts.
 */
import { existsSync, rmSync } from 'node:fs';

/** Thrown from inside Trainer.step (onMiniBatch('before-update'), before any weight changes) to abandon the uncommitted step. */
export class StopRequested extends Error {
  constructor(readonly reason: string) {
    super(`stop requested (${reason})`);
    this.name = 'StopRequested';
  }
}

/** How often a paused loop looks at the STOP flag file (a resume or stop message wakes it at once). */
export const PAUSE_POLL_MS = 250;

export class EngineControl {
  private paused = false;
  private stopReason: string | null = null;
  private wake: (() => void) | null = null;

  constructor(private readonly stopFlag: string) {
    // A flag left by an earlier engine of this run is not a request to this one.
    rmSync(stopFlag, { force: true });
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.wake?.();
  }

  stop(reason: string): void {
    this.stopReason ??= reason;
    this.wake?.();
  }

  /** The stop reason, if a stop was requested (flag file included). */
  stopRequested(): string | null {
    if (this.stopReason === null && existsSync(this.stopFlag)) this.stopReason = 'host request';
    return this.stopReason;
  }

  /** For onMiniBatch: throws StopRequested when a stop is pending. */
  checkMidStep(): void {
    const reason = this.stopRequested();
    if (reason !== null) throw new StopRequested(reason);
  }

  /**
   * Between steps: lets pending messages in, then waits while paused. `onPause(true|false)` is called
   * when a pause starts and ends. Returns the stop reason, or null to go on.
   */
  async betweenSteps(onPause: (paused: boolean) => void): Promise<string | null> {
    await new Promise<void>((r) => setImmediate(r));
    if (this.stopRequested() !== null) return this.stopReason;
    if (!this.paused) return null;
    onPause(true);
    while (this.paused && this.stopRequested() === null) {
      // Woken by resume/stop; the timer also polls the flag file.
      await new Promise<void>((r) => {
        this.wake = r;
        setTimeout(r, PAUSE_POLL_MS);
      });
      this.wake = null;
    }
    if (this.stopReason !== null) return this.stopReason;
    onPause(false);
    return null;
  }

  dispose(): void {
    rmSync(this.stopFlag, { force: true });
  }
}
