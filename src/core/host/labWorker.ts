/**
 * The lab worker: a worker_threads entry that owns one LabService (and so the lab's SQLite read
 * connection, whose better-sqlite3 calls are synchronous) off the thread that serves the UI. It is
 * started by LabWorkerClient (labWorkerClient.ts) and speaks labWorkerProtocol.ts with it:
 * `call` -> LabService.call -> `result`; every LabService push -> `push`; `close` -> `closed`.
 *
 * Engines are not launched here: the parent launches them with its own EngineLauncher (in Electron
 * a utility process can only be forked from the main process) and relays each engine's messages
 * and exit; this side sees them through ParentEngineHandle, an ordinary EngineHandle, so
 * host/runs.ts and LabService are unchanged. PDF printing is asked of the parent the same way.
 *
 * Built by electron-vite as its own main-process entry (out/main/labWorker.js); under Node it is
 * run from source through tsx (LabWorkerClient does that). Not meant to be run directly.
 * Tested by test/core/host/labWorker.test.ts (a real database, every API method).
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { toApiError, type LabPush } from '../../shared/api';
import { LabService } from './labService';
import { EngineHandleBase, type EngineLauncher, type EngineLaunchRequest } from './launcher';
import type { HostMessage } from './messages';
import { parseToWorker, parseWorkerInit, type FromWorker, type ToWorker } from './labWorkerProtocol';

/** An engine the parent launched for this worker; events arrive as parent messages. */
class ParentEngineHandle extends EngineHandleBase {
  private startedPid: number | undefined;

  constructor(
    private readonly id: number,
    private readonly post: (m: FromWorker) => void,
  ) {
    super();
  }

  get pid(): number | undefined {
    return this.startedPid;
  }

  send(message: HostMessage): void {
    if (!this.exited) this.post({ type: 'engineSend', handle: this.id, message });
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (!this.exited) this.post({ type: 'engineKill', handle: this.id, signal });
  }

  /** One relayed event of this engine. */
  event(m: Extract<ToWorker, { handle: number }>): void {
    switch (m.type) {
      case 'engineStarted':
        this.startedPid = m.pid ?? undefined;
        break;
      case 'engineMessage':
        this.receive(m.message);
        break;
      case 'engineFailed':
        // The launcher threw in the parent (e.g. the engine bundle is missing): say why, then end
        // like an engine that died at once, so the run is marked interrupted with the reason logged.
        this.appendStderr(`\n${m.message}`);
        this.receive({ type: 'log', level: 'error', line: `engine did not start: ${m.message}` });
        this.exit(1, null);
        break;
      case 'engineExit':
        this.exit(m.code, m.signal);
        break;
    }
  }
}

/** The EngineLauncher LabService gets here: every launch is a `launch` request to the parent. */
class ParentLauncher implements EngineLauncher {
  readonly handles = new Map<number, ParentEngineHandle>();
  private nextId = 1;

  constructor(private readonly post: (m: FromWorker) => void) {}

  launch(request: EngineLaunchRequest): ParentEngineHandle {
    const id = this.nextId++;
    const handle = new ParentEngineHandle(id, this.post);
    this.handles.set(id, handle);
    handle.onExit(() => this.handles.delete(id));
    this.post({ type: 'launch', handle: id, request: { dbPath: request.dbPath, runId: request.runId, mode: request.mode } });
    return handle;
  }
}

function serve(port: MessagePort): void {
  const post = (m: FromWorker, transfer?: ArrayBuffer[]) => port.postMessage(m, transfer);
  let init;
  try {
    init = parseWorkerInit(workerData);
  } catch (err) {
    post({ type: 'failed', message: (err as Error).message });
    port.close();
    return;
  }
  const launcher = new ParentLauncher(post);
  const pdfs = new Map<number, { resolve: (b: Uint8Array) => void; reject: (e: Error) => void }>();
  let pdfId = 0;
  const printPdf = (html: string) =>
    new Promise<Uint8Array>((resolve, reject) => {
      const id = pdfId++;
      pdfs.set(id, { resolve, reject });
      post({ type: 'printPdf', id, html });
    });

  let service: LabService;
  try {
    service = new LabService({
      dbPath: init.dbPath,
      launcher,
      ...(init.printPdf ? { printPdf } : {}),
      ...(init.pathRoots ? { pathRoots: init.pathRoots } : {}),
    });
  } catch (err) {
    post({ type: 'failed', message: `could not open the lab database ${init.dbPath}: ${(err as Error).message}` });
    port.close();
    return;
  }
  service.subscribe((push: LabPush) => post({ type: 'push', push }));

  let closing = false;
  port.on('message', (raw: unknown) => {
    let m: ToWorker;
    try {
      m = parseToWorker(raw);
    } catch (err) {
      // A call we cannot parse still gets its answer when its id is readable.
      const id = (raw as { id?: unknown } | null)?.id;
      if ((raw as { type?: unknown } | null)?.type === 'call' && Number.isInteger(id)) {
        post({ type: 'result', id: id as number, ok: false, error: { code: 'internal', message: (err as Error).message } });
      } else console.error(`lab worker: ${(err as Error).message}`);
      return;
    }
    switch (m.type) {
      case 'call': {
        if (closing) {
          post({ type: 'result', id: m.id, ok: false, error: { code: 'unsupported', message: 'the lab is closing' } });
          return;
        }
        service.call(m.method, m.input).then(
          (value) => post({ type: 'result', id: m.id, ok: true, value }),
          (err: unknown) => post({ type: 'result', id: m.id, ok: false, error: toApiError(err) }),
        );
        return;
      }
      case 'close':
        if (closing) return;
        closing = true;
        void service
          .close(m.timeoutMs)
          .catch(() => undefined)
          .finally(() => {
            for (const p of pdfs.values()) p.reject(new Error('the lab is closing'));
            post({ type: 'closed' });
            port.close();
          });
        return;
      case 'pdfResult': {
        const p = pdfs.get(m.id);
        if (!p) return;
        pdfs.delete(m.id);
        if (m.ok) p.resolve(m.bytes);
        else p.reject(new Error(m.message));
        return;
      }
      case 'engineStarted':
      case 'engineFailed':
      case 'engineMessage':
      case 'engineExit':
        launcher.handles.get(m.handle)?.event(m);
        return;
    }
  });
  post({ type: 'ready' });
}

if (!parentPort) throw new Error('labWorker runs as a worker thread started by LabWorkerClient (src/core/host/labWorkerClient.ts)');
serve(parentPort);
