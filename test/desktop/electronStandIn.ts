/**
 * A stand-in for the `electron` module, only for tests: what the built desktop bundles
 * (out/main/index.js, out/preload/index.js) use of Electron, done by Node, recording what the app
 * asked for so tests can assert it. The build machines cannot download Electron's binary; with
 * this the app's own code runs end to end anyway (desktopApp.ts loads the bundles with it).
 *
 * Main side, here: `app` (ready / whenReady, before-quit -> windows closed -> will-quit -> quit,
 * each preventable as in Electron; window-all-closed when the last window closes outside a quit;
 * getPath; isPackaged), `ipcMain.handle` (a second handler for a channel throws, as in Electron;
 * invokes are structured-cloned both ways), `BrowserWindow` (records its options; loadFile
 * refuses a missing file; runs the window's preload; webContents with send, setWindowOpenHandler,
 * the will-navigate / will-redirect / will-attach-webview events and printToPDF),
 * `session.defaultSession` (permission handler, onHeadersReceived), `shell.openExternal` and
 * `dialog.showErrorBox` (recorded). Beside it: utilityProcessStandIn.ts (`utilityProcess.fork`
 * over child_process.fork, with utilityParentPort.cjs for the child), preloadStandIn.ts (the
 * preload in a sandboxed-preload require, contextBridge, ipcRenderer), pdfStandIn.ts (printToPDF
 * by headless Chromium through playwright-core).
 *
 * Not Electron: no real window, no Chromium renderer running the app's page, no native menus,
 * no OS sandbox, no fuses, no packaging. Used by test/desktop/*.test.ts only.
 */
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BrowserWindowConstructorOptions, PrintToPDFOptions, WebPreferences } from 'electron';
import { chromiumPrinter, type PdfRenderer } from './pdfStandIn';
import { StandInRenderer } from './preloadStandIn';
import { forkUtilityProcess, type StandInUtilityProcess } from './utilityProcessStandIn';

export interface StandInOptions {
  /** Root of app.getPath(...): userData is `<root>/userData`. */
  pathsRoot: string;
  isPackaged?: boolean;
  pdf?: PdfRenderer;
}

/** An Electron-style event: `preventDefault()` and `defaultPrevented`. */
export interface StandInEvent {
  defaultPrevented: boolean;
  preventDefault(): void;
  url?: string;
}

function newEvent(extra: Record<string, unknown> = {}): StandInEvent {
  const e = {
    defaultPrevented: false,
    preventDefault() {
      e.defaultPrevented = true;
    },
    ...extra,
  };
  return e;
}

/** Electron's IPC copies with the structured clone algorithm: functions and class identity do not cross. */
const ipcClone = <T>(value: T): T => structuredClone(value);

const PATH_NAMES = [
  'home',
  'appData',
  'userData',
  'sessionData',
  'temp',
  'exe',
  'module',
  'desktop',
  'documents',
  'downloads',
  'music',
  'pictures',
  'videos',
  'recent',
  'logs',
  'crashDumps',
] as const;

/** The main process's `app`. */
export class StandInApp extends EventEmitter {
  readonly isPackaged: boolean;
  private ready = false;
  private quitting = false;
  private settleReady!: () => void;
  private readonly readyPromise = new Promise<void>((ok) => (this.settleReady = ok));
  private settleQuit!: () => void;
  /** Resolves once the app has quit ('quit' emitted). */
  readonly exited = new Promise<void>((ok) => (this.settleQuit = ok));
  /** How many times app.quit() was called. */
  quitCalls = 0;
  hasQuit = false;

  constructor(
    private readonly pathsRoot: string,
    isPackaged: boolean,
    private readonly allWindows: () => StandInWindowLike[],
  ) {
    super();
    this.isPackaged = isPackaged;
  }

  whenReady(): Promise<void> {
    return this.readyPromise;
  }

  isReady(): boolean {
    return this.ready;
  }

  get isQuitting(): boolean {
    return this.quitting;
  }

  getPath(name: string): string {
    if (!(PATH_NAMES as readonly string[]).includes(name)) throw new Error(`Failed to get '${name}' path`);
    return join(this.pathsRoot, name);
  }

  /** Test side: Electron has finished launching. */
  emitReady(): Promise<void> {
    if (this.ready) return this.readyPromise;
    this.ready = true;
    this.emit('ready', newEvent(), {});
    this.settleReady();
    return this.readyPromise;
  }

  /** before-quit (preventable), then every window closes, will-quit (preventable), quit. */
  quit(): void {
    this.quitCalls++;
    if (this.hasQuit) return;
    const before = newEvent();
    this.emit('before-quit', before);
    if (before.defaultPrevented) return;
    this.quitting = true;
    for (const w of this.allWindows()) w.destroy();
    const will = newEvent();
    this.emit('will-quit', will);
    if (will.defaultPrevented) {
      this.quitting = false;
      return;
    }
    this.hasQuit = true;
    this.emit('quit', newEvent(), 0);
    this.settleQuit();
  }
}

/** The part of a window the app and the stand-in's app share. */
interface StandInWindowLike {
  destroy(): void;
}

/** One `ipcMain.handle` registration. */
type InvokeHandler = (event: unknown, ...args: unknown[]) => unknown;

/** The main process's `ipcMain` (handle only: the app uses nothing else). */
export class StandInIpcMain {
  readonly handlers = new Map<string, InvokeHandler>();
  /** Every channel passed to handle(), in order (a second registration throws before it is kept). */
  readonly registrations: string[] = [];
  /** Every invocation that reached a handler, in order. */
  readonly invocations: { channel: string; frameUrl: string | null }[] = [];

  handle(channel: string, handler: InvokeHandler): void {
    if (this.handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    this.registrations.push(channel);
    this.handlers.set(channel, handler);
  }

  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  }

  /**
   * An invoke as Electron delivers it: the arguments cloned, an event naming the sender's frame
   * (null: a frame that is gone), the answer cloned back. Rejects like ipcRenderer.invoke.
   */
  async invoke(channel: string, frameUrl: string | null, args: unknown[], sender: unknown = null): Promise<unknown> {
    const cloned = ipcClone(args);
    const handler = this.handlers.get(channel);
    if (!handler) throw new Error(`Error invoking remote method '${channel}': Error: No handler registered for '${channel}'`);
    this.invocations.push({ channel, frameUrl });
    const senderFrame = frameUrl === null ? null : { url: frameUrl, origin: safeOrigin(frameUrl) };
    const event = { sender, senderFrame, processId: 1, frameId: 1 };
    try {
      return ipcClone(await handler(event, ...cloned));
    } catch (err) {
      throw new Error(`Error invoking remote method '${channel}': ${String(err)}`);
    }
  }
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'null';
  }
}

/** A window's web contents: events, sends to its renderer, the window-open handler, printing. */
export class StandInWebContents extends EventEmitter {
  private static nextId = 1;
  readonly id = StandInWebContents.nextId++;
  /** Every webContents.send, in order (after the clone, as the renderer receives it). */
  readonly sent: { channel: string; args: unknown[] }[] = [];
  windowOpenHandler: ((details: { url: string; frameName: string; features: string; disposition: string }) => { action: 'allow' | 'deny' }) | null = null;
  url = '';
  destroyed = false;
  /** The renderer side, once a page with a preload was loaded. */
  renderer: StandInRenderer | null = null;
  /** Why the preload did not run (Electron logs it in the page's console and loads the page without it). */
  preloadError: string | null = null;

  constructor(
    readonly webPreferences: WebPreferences,
    private readonly pdf: () => PdfRenderer,
  ) {
    super();
  }

  getURL(): string {
    return this.url;
  }

  isDestroyed(): boolean {
    return this.destroyed;
  }

  send(channel: string, ...args: unknown[]): void {
    if (this.destroyed) throw new Error('Object has been destroyed');
    const cloned = ipcClone(args);
    this.sent.push({ channel, args: cloned });
    // Delivered asynchronously, as a message to another process is.
    const renderer = this.renderer;
    if (renderer) setImmediate(() => renderer.deliver(channel, cloned));
  }

  setWindowOpenHandler(handler: StandInWebContents['windowOpenHandler']): void {
    this.windowOpenHandler = handler;
  }

  async printToPDF(options: PrintToPDFOptions): Promise<Buffer> {
    if (this.destroyed) throw new Error('Object has been destroyed');
    if (!this.url) throw new Error('printToPDF: nothing is loaded');
    const bytes = await this.pdf()(this.url, { javaScriptEnabled: this.webPreferences.javascript !== false, pdf: options });
    return Buffer.from(bytes);
  }

  /** Test side: the page tries to navigate; true when the app let it. */
  tryNavigate(url: string, event: 'will-navigate' | 'will-redirect' = 'will-navigate'): boolean {
    const e = newEvent({ url });
    this.emit(event, e, url);
    return !e.defaultPrevented;
  }

  /** Test side: the page asks for a new window (window.open, target=_blank); the handler's answer. */
  tryOpenWindow(url: string): 'allow' | 'deny' {
    // Without a handler Electron opens the window.
    if (!this.windowOpenHandler) return 'allow';
    return this.windowOpenHandler({ url, frameName: '', features: '', disposition: 'foreground-tab' }).action;
  }

  /** Test side: the page tries to attach a <webview>; true when the app let it. */
  tryAttachWebview(src: string): boolean {
    const e = newEvent();
    this.emit('will-attach-webview', e, { preload: '' }, { src });
    return !e.defaultPrevented;
  }
}

/** One stand-in `electron` module: a fresh app, IPC and window list for each app the tests start. */
export class ElectronStandIn {
  readonly app: StandInApp;
  readonly ipcMain = new StandInIpcMain();
  readonly windows: StandInWindow[] = [];
  /** Every utilityProcess.fork, in order. */
  readonly forks: { modulePath: string; args: string[]; options: Record<string, unknown>; child: StandInUtilityProcess }[] = [];
  readonly openedExternally: string[] = [];
  readonly errorBoxes: { title: string; content: string }[] = [];
  readonly session: {
    defaultSession: {
      permissionRequestHandler: ((wc: unknown, permission: string, callback: (granted: boolean) => void, details: unknown) => void) | null;
      headersReceived:
        | ((
            details: { url: string; responseHeaders?: Record<string, string[]> },
            callback: (r: { responseHeaders?: Record<string, string[]>; cancel?: boolean }) => void,
          ) => void)
        | null;
      setPermissionRequestHandler(h: ElectronStandIn['session']['defaultSession']['permissionRequestHandler']): void;
      webRequest: { onHeadersReceived(listener: ElectronStandIn['session']['defaultSession']['headersReceived']): void };
    };
  };
  readonly BrowserWindow: { new (opts?: BrowserWindowConstructorOptions): StandInWindow; getAllWindows(): StandInWindow[] };
  private pdfRenderer: PdfRenderer | null;

  constructor(options: StandInOptions) {
    this.pdfRenderer = options.pdf ?? null;
    const open = () => this.windows.filter((w) => !w.isDestroyed());
    this.app = new StandInApp(options.pathsRoot, options.isPackaged ?? false, open);
    const defaultSession: ElectronStandIn['session']['defaultSession'] = {
      permissionRequestHandler: null,
      headersReceived: null,
      setPermissionRequestHandler: (h) => void (defaultSession.permissionRequestHandler = h),
      webRequest: { onHeadersReceived: (l) => void (defaultSession.headersReceived = l) },
    };
    this.session = { defaultSession };
    // The class the app constructs: bound to this stand-in (its window list, app, IPC).
    const standIn = this;
    this.BrowserWindow = class extends StandInWindow {
      constructor(opts: BrowserWindowConstructorOptions = {}) {
        super(standIn, opts);
      }
      static getAllWindows(): StandInWindow[] {
        return open();
      }
    };
  }

  /** The printer windows print with (created on first use). */
  pdf(): PdfRenderer {
    this.pdfRenderer ??= chromiumPrinter();
    return this.pdfRenderer;
  }

  /** What `require('electron')` returns in the main process. */
  mainModule(): Record<string, unknown> {
    return {
      app: this.app,
      ipcMain: this.ipcMain,
      BrowserWindow: this.BrowserWindow,
      session: this.session,
      utilityProcess: { fork: (modulePath: string, args: string[] = [], opts: Record<string, unknown> = {}) => this.fork(modulePath, args, opts) },
      shell: {
        openExternal: async (url: string) => void this.openedExternally.push(url),
      },
      dialog: {
        showErrorBox: (title: string, content: string) => void this.errorBoxes.push({ title, content }),
      },
    };
  }

  /** Kills whatever engines are still running, closes the PDF browser. */
  async dispose(): Promise<void> {
    for (const f of this.forks) if (f.child.exit === null) f.child.child.kill('SIGKILL');
    await this.pdfRenderer?.close();
  }

  private fork(modulePath: string, args: string[], opts: Record<string, unknown>): StandInUtilityProcess {
    if (!this.app.isReady()) throw new Error('utilityProcess.fork: the app is not ready');
    const utility = forkUtilityProcess(modulePath, args, opts);
    this.forks.push({ modulePath, args, options: opts, child: utility });
    return utility;
  }
}

/** A BrowserWindow. The app gets the subclass bound to its stand-in (ElectronStandIn.BrowserWindow). */
export class StandInWindow {
  readonly webContents: StandInWebContents;
  /** Every loadFile / loadURL, in order. */
  readonly loads: { kind: 'file' | 'url'; target: string }[] = [];
  private destroyed = false;

  constructor(
    private readonly standIn: ElectronStandIn,
    readonly options: BrowserWindowConstructorOptions,
  ) {
    this.webContents = new StandInWebContents(options.webPreferences ?? {}, () => standIn.pdf());
    standIn.windows.push(this);
    standIn.app.emit('browser-window-created', newEvent(), this);
    standIn.app.emit('web-contents-created', newEvent(), this.webContents);
  }

  async loadFile(path: string): Promise<void> {
    this.loads.push({ kind: 'file', target: path });
    if (!existsSync(path)) throw new Error(`ERR_FILE_NOT_FOUND (-6) loading '${pathToFileURL(path).href}'`);
    this.load(pathToFileURL(resolve(path)).href);
  }

  async loadURL(url: string): Promise<void> {
    this.loads.push({ kind: 'url', target: url });
    this.load(url);
  }

  isDestroyed(): boolean {
    return this.destroyed;
  }

  /** Closes like the user closing it: 'close' (preventable), then destroy. */
  close(): void {
    if (this.destroyed) return;
    const e = newEvent();
    this.emit('close', e);
    if (!e.defaultPrevented) this.destroy();
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.webContents.destroyed = true;
    this.emit('closed');
    const app = this.standIn.app;
    if (!app.isQuitting && this.standIn.windows.every((w) => w.isDestroyed())) app.emit('window-all-closed');
  }

  private readonly events = new EventEmitter();

  on(event: string, listener: (...args: unknown[]) => void): this {
    this.events.on(event, listener);
    return this;
  }

  private emit(event: string, ...args: unknown[]): void {
    this.events.emit(event, ...args);
  }

  private load(url: string): void {
    const contents = this.webContents;
    contents.url = url;
    const preload = contents.webPreferences.preload;
    if (preload) {
      const renderer = new StandInRenderer(contents, this.standIn.ipcMain);
      try {
        if (!existsSync(preload)) throw new Error('no such file');
        renderer.run(preload);
        contents.renderer = renderer;
      } catch (err) {
        contents.preloadError = `Unable to load preload script: ${preload}: ${(err as Error).message}`;
      }
    }
    setImmediate(() => contents.emit('did-finish-load'));
  }
}
