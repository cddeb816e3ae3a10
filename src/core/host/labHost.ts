/**
 * What a transport needs from the lab: call a method with its raw input (validated inside),
 * receive pushes, close. Two implementations: LabService itself (in-thread: CLI, tests, benches)
 * and LabWorkerClient (the same LabService in a worker thread: the Electron main process and
 * `srpo-lab serve`, so synchronous SQLite reads never block the thread that serves IPC or HTTP).
 *
 * Not here: the contract (src/shared/api.ts), the transports (src/main, src/server).
 */
import type { ApiMethod, ApiOutputs, LabPush } from '../../shared/api';

export interface LabHost {
  /** Validates `raw` against the method's schema and runs it. Rejects with LabApiError. */
  call<M extends ApiMethod>(method: M, raw: unknown): Promise<ApiOutputs[M]>;
  call(method: string, raw: unknown): Promise<unknown>;
  /** Every push from now on; returns a disposer. */
  subscribe(listener: (push: LabPush) => void): () => void;
  /** Stops the engines this lab started (up to `timeoutMs` each, then kills) and releases the database. */
  close(timeoutMs?: number): Promise<void>;
}
