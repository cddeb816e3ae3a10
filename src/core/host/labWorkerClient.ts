/**
 * LabWorkerClient: the lab API served from a worker thread. It starts labWorker.ts (one LabService
 * over the lab database) in a worker_threads Worker and offers the same LabHost surface as an
 * in-thread LabService (`call`, `subscribe`, `close`), so a transport does not know the
 * difference. Why: better-sqlite3 is synchronous, and a long read (a million-row trace, a CSV
 * export) on the Electron main thread freezes every window; on the web server it stalls every
 * request and socket. In the worker it blocks only the worker (STYLE.md, habit 13).
 *
 * Division of work (docs/decisions/053-lab-worker.md): the worker owns the database, the API
 * and the run bookkeeping (host/runs.ts); this side owns the EngineLauncher and the PDF printer,
 * because in Electron both need the main process (utilityProcess.fork, BrowserWindow). The worker
 * asks for a launch with a message; this side launches, then relays the engine's messages and
 * exit and forwards pause/resume/stop/kill back (labWorkerProtocol.ts, validated on arrival).
 *
 * Inputs are validated here as they arrive (parseApiInput), before anything crosses to the
 * worker; errors come back as LabApiError with their code, message and field issues. If the
 * worker dies, pending and later calls fail with 'internal' naming why, and the engines it was
 * running are asked to stop (they end 'stopped', resumable). No restart.
 *
 * Under Node the worker runs labWorker.ts through tsx's require hook; the desktop app passes the
 * built `out/main/labWorker.js`. Tested by test/core/host/labWorker.test.ts.
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { LabApiError, parseApiInput, type ApiMethod, type ApiOutputs, type LabPush } from '../../shared/api';
import type { LabHost } from './labHost';
import type { EngineHandle, EngineLauncher, EngineLaunchRequest } from './launcher';
import { parseFromWorker, type ToWorker, type WorkerInit } from './labWorkerProtocol';

/** The worker entry from source (run through tsx). */
export const LAB_WORKER_ENTRY = resolve(__dirname, 'labWorker.ts');

export interface LabWorkerClientOptions {
  /** The lab database (created and migrated if missing), opened by the worker. */
  dbPath: string;
  /** Launches engines on this thread when the worker asks (desktop: UtilityProcessLauncher). */
  launcher: EngineLauncher;
  /** Prints an HTML report to PDF on this thread. Absent: pdf is 'unsupported'. */
  printPdf?: (html: string) => Promise<Uint8Array>;
  /** Web mode: the folders a client's paths must lie in (LabServiceOptions.pathRoots); absent: any path. */
  pathRoots?: readonly string[];
  /** The worker script: a built `.js` (desktop: out/main/labWorker.js), or a `.ts` run through tsx (default LAB_WORKER_ENTRY). */
  entry?: string;
}

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

/** A worker that runs a TypeScript entry: registers tsx's require hook, then requires the entry. */
function tsxWorker(entry: string, workerData: WorkerInit): Worker {
  const tsxApi = createRequire(__filename).resolve('tsx/cjs/api');
  const boot = `require(${JSON.stringify(tsxApi)}).register();\nrequire(${JSON.stringify(entry)});\n`;
  return new Worker(boot, { eval: true, workerData });
}

export class LabWorkerClient implements LabHost {
  /** Resolves once the worker has opened the database; rejects with the reason it could not. */
  readonly ready: Promise<void>;
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Set<(push: LabPush) => void>();
  /** Engines launched for the worker, by the worker's handle id. */
  private readonly engines = new Map<number, EngineHandle>();
  private nextId = 0;
  /** Set once the worker is gone or closed: every call rejects with it. */
  private dead: LabApiError | null = null;
  private settleReady!: (err: Error | null) => void;
  private closedAck: (() => void) | null = null;
  private closing: Promise<void> | null = null;
  private exited = false;

  constructor(private readonly options: LabWorkerClientOptions) {
    this.ready = new Promise<void>((ok, fail) => (this.settleReady = (err) => (err ? fail(err) : ok())));
    this.ready.catch(() => undefined); // observed here; callers that await it still see the error
    const entry = options.entry ?? LAB_WORKER_ENTRY;
    const init: WorkerInit = { dbPath: options.dbPath, printPdf: !!options.printPdf, ...(options.pathRoots ? { pathRoots: [...options.pathRoots] } : {}) };
    this.worker = entry.endsWith('.ts') ? tsxWorker(entry, init) : new Worker(entry, { workerData: init });
    this.worker.on('message', (raw: unknown) => this.receive(raw));
    this.worker.on('error', (err: Error) => this.fail('internal', `the lab worker crashed: ${err.message}`));
    this.worker.on('exit', (code: number) => {
      this.exited = true;
      this.fail('internal', `the lab worker exited (code ${code})`);
    });
  }

  /** Whether the worker thread is alive (false after close, a crash, or a database it could not open). */
  get running(): boolean {
    return !this.exited;
  }

  call<M extends ApiMethod>(method: M, raw: unknown): Promise<ApiOutputs[M]>;
  call(method: string, raw: unknown): Promise<unknown>;
  call(method: string, raw: unknown): Promise<unknown> {
    if (this.dead) return Promise.reject(this.dead);
    let input: unknown;
    try {
      input = parseApiInput(method, raw);
    } catch (err) {
      return Promise.reject(err);
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.post({ type: 'call', id, method, input });
    });
  }

  subscribe(listener: (push: LabPush) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /**
   * Stops the engines the lab started (the worker waits up to `timeoutMs` each, then kills them),
   * closes the database, and ends the worker. Pending calls are answered first.
   */
  close(timeoutMs = 10_000): Promise<void> {
    this.closing ??= (async () => {
      if (!this.dead) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          new Promise<void>((ok) => {
            this.closedAck = ok;
            this.post({ type: 'close', timeoutMs });
          }),
          // The worker waits up to timeoutMs per engine (in parallel), then kills: allow that and a margin.
          new Promise<void>((ok) => (timer = setTimeout(ok, timeoutMs + 5_000).unref())),
        ]);
        clearTimeout(timer);
      }
      this.fail('unsupported', 'the lab is closed', false);
      for (const engine of this.engines.values()) engine.kill('SIGKILL');
      this.engines.clear();
      await this.worker.terminate();
      this.listeners.clear();
    })();
    return this.closing;
  }

  private post(m: ToWorker): void {
    try {
      this.worker.postMessage(m);
    } catch (err) {
      // Only a value structured clone cannot copy gets here; answer the call instead of hanging it.
      if (m.type === 'call') this.settle(m.id, new LabApiError('internal', `could not send ${m.method} to the lab worker: ${(err as Error).message}`));
    }
  }

  private settle(id: number, error: Error | null, value?: unknown): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    if (error) p.reject(error);
    else p.resolve(value);
  }

  /** The worker is gone (or closed): fail what waits, refuse what comes, stop orphaned engines. */
  private fail(code: 'internal' | 'unsupported', message: string, stopEngines = true): void {
    if (this.dead) return;
    this.dead = new LabApiError(code, message);
    this.settleReady(this.dead);
    for (const id of [...this.pending.keys()]) this.settle(id, this.dead);
    // Nobody can record these engines' ends any more; stopped between steps, their runs stay resumable.
    if (stopEngines) for (const engine of this.engines.values()) engine.send({ type: 'stop' });
    this.closedAck?.();
  }

  private receive(raw: unknown): void {
    let m;
    try {
      m = parseFromWorker(raw);
    } catch (err) {
      const r = raw as { type?: unknown; id?: unknown } | null;
      if (r?.type === 'result' && typeof r.id === 'number') this.settle(r.id, new LabApiError('internal', (err as Error).message));
      else console.error(`lab worker: ${(err as Error).message}`);
      return;
    }
    switch (m.type) {
      case 'ready':
        this.settleReady(null);
        return;
      case 'failed':
        this.fail('internal', m.message);
        return;
      case 'result':
        if (m.ok) this.settle(m.id, null, m.value);
        else this.settle(m.id, new LabApiError(m.error.code, m.error.message, m.error.issues));
        return;
      case 'push':
        for (const l of [...this.listeners]) {
          try {
            l(m.push);
          } catch {
            // A subscriber's failure is its own; the others still get the push.
          }
        }
        return;
      case 'launch':
        this.launch(m.handle, m.request);
        return;
      case 'engineSend':
        this.engines.get(m.handle)?.send(m.message);
        return;
      case 'engineKill':
        this.engines.get(m.handle)?.kill(m.signal);
        return;
      case 'printPdf':
        this.print(m.id, m.html);
        return;
      case 'closed':
        this.closedAck?.();
        return;
    }
  }

  private launch(handle: number, request: EngineLaunchRequest): void {
    if (request.dbPath !== this.options.dbPath) {
      this.post({ type: 'engineFailed', handle, message: `refused: ${request.dbPath} is not this lab's database` });
      return;
    }
    let engine: EngineHandle;
    try {
      engine = this.options.launcher.launch(request);
    } catch (err) {
      this.post({ type: 'engineFailed', handle, message: (err as Error).message });
      return;
    }
    this.engines.set(handle, engine);
    this.post({ type: 'engineStarted', handle, pid: engine.pid ?? null });
    engine.onMessage((message) => this.post({ type: 'engineMessage', handle, message }));
    engine.onExit((code, signal) => {
      this.engines.delete(handle);
      this.post({ type: 'engineExit', handle, code, signal });
    });
  }

  private print(id: number, html: string): void {
    const printPdf = this.options.printPdf;
    if (!printPdf) {
      this.post({ type: 'pdfResult', id, ok: false, message: 'PDF printing is not available here' });
      return;
    }
    printPdf(html).then(
      (bytes) => this.post({ type: 'pdfResult', id, ok: true, bytes }),
      (err: unknown) => this.post({ type: 'pdfResult', id, ok: false, message: err instanceof Error ? err.message : String(err) }),
    );
  }
}
