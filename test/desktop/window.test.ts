/**
 * The desktop app's window, IPC and preload, from the BUILT bundles (out/main/index.js,
 * out/main/labWorker.js, out/preload/index.js; built first when missing or stale, see
 * desktopApp.ts) under the stand-in Electron (electronStandIn.ts): the window is created with the
 * hardened preferences and loads the built page; the main thread loads no native module or tfjs
 * (the lab worker and the engines do); every API method is registered once, on its own
 * channel, and refuses an untrusted sender before anything runs; the preload (run with a
 * sandboxed preload's require) exposes one function per method, `subscribe` and the transport
 * name, nothing else; pushes reach the page and stop after the disposer; permissions are refused
 * and responses get the socket-free CSP; navigation, redirects, webviews and new windows are
 * refused and only allowlisted https links reach the system browser; a PDF report is printed by
 * headless Chromium in a hidden, script-less window; a database that cannot open shows the error
 * dialog; the dev server URL counts only in an unpackaged app; on macOS the app outlives its
 * window and `activate` opens a working one without registering the API again.
 * Engines (utility processes) and quitting: engines.test.ts.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_METHODS, ipcChannel, PUSH_CHANNEL } from '../../src/shared/apiMethods';
import type { ApiResult, LabPush, ReportFile, RunSummary } from '../../src/shared/api';
import { BUNDLES, bootDesktopApp, ensureBuilt, mainThreadRequires, removeTempFolders, tempFolder, until, type DesktopApp } from './desktopApp';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`[desktop] PDF test skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);

// The bundles are built first when missing or older than their sources (CI has built them).
beforeAll(() => ensureBuilt(), 240_000);
afterAll(() => removeTempFolders());

describe('the desktop window, its IPC and its preload (built bundles, stand-in Electron)', () => {
  let app: DesktopApp;
  const pageUrl = () => pathToFileURL(BUNDLES.renderer).href;

  beforeAll(async () => {
    app = await bootDesktopApp();
  }, 60_000);

  afterAll(async () => {
    if (app && !app.electron.app.hasQuit) await app.quit();
    await app?.electron.dispose();
  });

  it('opens one window with the hardened preferences, the built preload and the built page', () => {
    const windows = app.electron.windows;
    expect(windows).toHaveLength(1);
    const prefs = windows[0].options.webPreferences ?? {};
    expect(prefs).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, webSecurity: true, webviewTag: false });
    expect(prefs.nodeIntegrationInWorker ?? false).toBe(false);
    expect(prefs.allowRunningInsecureContent ?? false).toBe(false);
    expect(prefs.preload).toBe(BUNDLES.preload);
    expect(windows[0].loads).toEqual([{ kind: 'file', target: BUNDLES.renderer }]);
    expect(windows[0].webContents.preloadError).toBeNull();
  });

  it('keeps native modules and tfjs off the main thread (the lab worker and the engines load them)', () => {
    const packages = [...mainThreadRequires].filter((r) => !r.startsWith('.') && !r.startsWith('node:'));
    expect(packages).toContain('electron');
    expect(packages.filter((r) => /better-sqlite3|tensorflow|\.node$/.test(r))).toEqual([]);
  });

  it('opens the database under userData (app.getPath)', async () => {
    await app.call('listRuns');
    expect(existsSync(join(app.userData, 'lab.db'))).toBe(true);
  });

  it('registers every API method once, each on its own channel', () => {
    const registered = app.electron.ipcMain.registrations;
    expect(registered).toHaveLength(API_METHODS.length);
    expect([...registered].sort()).toEqual(API_METHODS.map((m) => `lab:${m}`).sort());
  });

  it('refuses every method from an untrusted sender, before anything runs', async () => {
    const strangers = [
      'https://evil.example/',
      // The old suffix check took any file ending in /renderer/index.html.
      pathToFileURL('/tmp/elsewhere/renderer/index.html').href,
      'file://remote-host' + pathToFileURL(BUNDLES.renderer).pathname,
      'data:text/html,<script>1</script>',
      'about:blank',
      'http://localhost:5173/',
    ];
    for (const method of API_METHODS) {
      for (const frame of [...strangers, null]) {
        const input = method === 'createRun' ? { preset: 'math-quick', config: { name: 'from-a-stranger' } } : {};
        const r = (await app.electron.ipcMain.invoke(ipcChannel(method), frame, [input])) as ApiResult<unknown>;
        expect(r, `${method} from ${frame}`).toEqual({ ok: false, error: { code: 'unauthorized', message: 'not the lab window' } });
      }
    }
    const runs = await app.call<RunSummary[]>('listRuns');
    expect(runs.map((r) => r.name)).not.toContain('from-a-stranger');
    // The app's own page, by its exact file, is trusted.
    const own = (await app.electron.ipcMain.invoke(ipcChannel('presets'), pageUrl(), [{}])) as ApiResult<unknown>;
    expect(own.ok).toBe(true);
  });

  it('the preload exposes one function per method, subscribe and the transport, nothing else', async () => {
    const renderer = app.window.webContents.renderer!;
    expect(Object.keys(renderer.mainWorld)).toEqual(['lab']);
    expect(Object.keys(app.lab).sort()).toEqual([...API_METHODS, 'subscribe', 'transport'].sort());
    expect(app.lab.transport).toBe('ipc');
    for (const method of API_METHODS) expect(typeof app.lab[method], method).toBe('function');
    // A sandboxed preload can require only electron (and a few Node modules): the bundle asks for electron alone.
    expect(renderer.required).toEqual(['electron']);
    // Each function invokes its own channel and answers an ApiResult (most inputs here are invalid).
    const invocations = app.electron.ipcMain.invocations;
    for (const method of API_METHODS) {
      const before = invocations.length;
      const r = await app.lab[method]({});
      expect(typeof r.ok, method).toBe('boolean');
      expect(invocations.slice(before).map((i) => i.channel)).toEqual([ipcChannel(method)]);
      expect(invocations[before].frameUrl).toBe(pageUrl());
    }
  });

  it('answers through the lab worker: validation errors carry their field, guards refuse hostile input', async () => {
    const bad = await app.lab.listEvents({ runId: 1, limit: 0 });
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.error.code).toBe('invalid_input');
      expect(bad.error.issues?.[0]?.path).toBe('limit');
    }
    const proto = await app.lab.createRun(JSON.parse('{"preset":"math-quick","config":{"__proto__":{"polluted":true}}}'));
    expect(proto.ok).toBe(false);
    if (!proto.ok) expect(proto.error).toMatchObject({ code: 'invalid_input', message: expect.stringContaining('__proto__') });
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 200; i++) deep = { d: deep };
    const tooDeep = await app.lab.validateConfig({ preset: 'math-quick', config: deep });
    expect(tooDeep.ok).toBe(false);
    if (!tooDeep.ok) expect(tooDeep.error.code).toBe('invalid_input');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('pushes reach the page; a subscription stops at its disposer', async () => {
    const renderer = app.window.webContents.renderer!;
    const listenersBefore = renderer.listenerCount(PUSH_CHANNEL);
    const second: LabPush[] = [];
    const dispose = app.lab.subscribe((p) => second.push(p));
    expect(renderer.listenerCount(PUSH_CHANNEL)).toBe(listenersBefore + 1);
    const from = app.pushes.length;
    await app.call('createRun', { preset: 'math-quick', config: { name: 'pushed' } });
    await app.waitForPush('a runs push', (p) => p.type === 'runs' && app.pushes.indexOf(p) >= from, 10_000);
    await until('the second subscriber to get it', () => second.some((p) => p.type === 'runs'));
    dispose();
    expect(renderer.listenerCount(PUSH_CHANNEL)).toBe(listenersBefore);
    const got = second.length;
    const from2 = app.pushes.length;
    await app.call('createRun', { preset: 'math-quick', config: { name: 'pushed-again' } });
    await app.waitForPush('another runs push', (p) => p.type === 'runs' && app.pushes.indexOf(p) >= from2, 10_000);
    expect(second).toHaveLength(got);
    // The main process sent them on the push channel, to this window.
    expect(app.window.webContents.sent.filter((s) => s.channel !== PUSH_CHANNEL)).toEqual([]);
  });

  it('refuses permission requests and gives every response the socket-free CSP', () => {
    const session = app.electron.session.defaultSession;
    for (const permission of ['media', 'geolocation', 'notifications', 'clipboard-read', 'openExternal']) {
      const answers: boolean[] = [];
      session.permissionRequestHandler!(app.window.webContents, permission, (granted) => answers.push(granted), {});
      expect(answers, permission).toEqual([false]);
    }
    const responses: { responseHeaders?: Record<string, string[]> }[] = [];
    session.headersReceived!({ url: pageUrl(), responseHeaders: { 'X-Other': ['kept'] } }, (r) => responses.push(r));
    expect(responses).toHaveLength(1);
    const headers = responses[0].responseHeaders!;
    expect(headers['X-Other']).toEqual(['kept']);
    expect(headers['Content-Security-Policy']).toHaveLength(1);
    const csp = headers['Content-Security-Policy'][0];
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).not.toMatch(/ws:|wss:|unsafe-eval/);
    expect(csp.match(/script-src[^;]*/)?.[0]).not.toContain('unsafe-inline');
  });

  it('refuses navigation, redirects, webviews and new windows; only allowlisted https links open in the browser', () => {
    const contents = app.window.webContents;
    for (const url of ['https://evil.example/', 'https://github.com/', pageUrl(), 'file:///etc/passwd']) {
      expect(contents.tryNavigate(url), `navigate to ${url}`).toBe(false);
      expect(contents.tryNavigate(url, 'will-redirect'), `redirect to ${url}`).toBe(false);
    }
    expect(contents.tryAttachWebview('https://github.com/')).toBe(false);
    const allowed = ['https://github.com/anthropics/srpo-lab', 'https://arxiv.org/abs/2402.03300', 'https://huggingface.co/Qwen/Qwen3-0.6B'];
    const refused = [
      'http://github.com/',
      'https://github.com.evil.example/',
      'https://evil.example/?https://github.com/',
      'https://user:pw@github.com/',
      'https://github.com:8443/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'smb://server/share',
      'not a url',
    ];
    app.electron.openedExternally.length = 0;
    for (const url of [...allowed, ...refused]) expect(contents.tryOpenWindow(url), url).toBe('deny');
    expect(app.electron.openedExternally).toEqual(allowed);
  });

  it.skipIf(!hasChromium)(
    'prints a PDF report with headless Chromium, in a hidden window without scripts',
    async () => {
      const { runId } = await app.call<{ runId: number }>('createRun', { preset: 'math-quick', config: { name: 'printed-run' } });
      const windowsBefore = app.electron.windows.length;
      const file = await app.call<ReportFile>('exportReport', { runIds: [runId], format: 'pdf' });
      expect(file.encoding).toBe('base64');
      expect(file.filename).toMatch(/\.pdf$/);
      const bytes = Buffer.from(file.content, 'base64');
      expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      expect(bytes.length).toBeGreaterThan(2000);
      expect(bytes.toString('latin1')).toMatch(/\/Type\s*\/Page\b/);
      const printers = app.electron.windows.slice(windowsBefore);
      expect(printers).toHaveLength(1);
      const printer = printers[0];
      expect(printer.options.show).toBe(false);
      expect(printer.options.webPreferences).toMatchObject({ sandbox: true, contextIsolation: true, javascript: false });
      expect(printer.options.webPreferences?.preload).toBeUndefined();
      expect(printer.isDestroyed()).toBe(true);
      expect(printer.loads).toHaveLength(1);
      expect(decodeURIComponent(printer.loads[0].target)).toContain('printed-run');
      // Closing the hidden window did not count as the last window closing.
      expect(app.electron.app.quitCalls).toBe(0);
    },
    120_000,
  );
});

describe('the desktop app at start-up and across windows', () => {
  it('shows the error dialog when the database cannot open, and every call says why', async () => {
    // Not a missing file (that one would be created): a file that is there and is not a database.
    const userData = tempFolder('srpo-desktop-broken-');
    const dbPath = join(userData, 'lab.db');
    writeFileSync(dbPath, 'this is not a SQLite database, it is a text file that got in the way\n'.repeat(100));
    const broken = await bootDesktopApp({ userData });
    try {
      const boxes = await until('the error dialog', () => broken.electron.errorBoxes.length > 0 && broken.electron.errorBoxes, 20_000);
      expect(boxes).toHaveLength(1);
      expect(boxes[0].title).toBe('SRPO Lab could not open its database');
      expect(boxes[0].content).toContain(dbPath);
      const r = await broken.lab.listRuns({});
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe('internal');
        expect(r.error.message).toContain(dbPath);
      }
      // Still one window, and quitting works.
      expect(broken.electron.windows).toHaveLength(1);
      await broken.quit(15_000);
      expect(broken.electron.errorBoxes).toHaveLength(1);
    } finally {
      await broken.electron.dispose();
    }
  }, 60_000);

  it('loads the dev server only in an unpackaged app, and trusts only its exact origin', async () => {
    const dev = 'http://localhost:5173/';
    const unpackaged = await bootDesktopApp({ env: { ELECTRON_RENDERER_URL: dev }, isPackaged: false });
    try {
      expect(unpackaged.window.loads).toEqual([{ kind: 'url', target: dev }]);
      expect((await unpackaged.lab.presets({})).ok).toBe(true);
      for (const frame of ['http://localhost:5173.evil.example/', 'http://localhost:5174/', 'https://localhost:5173/', pathToFileURL(BUNDLES.renderer).href]) {
        const r = (await unpackaged.electron.ipcMain.invoke(ipcChannel('listRuns'), frame, [{}])) as ApiResult<unknown>;
        expect(r.ok, frame).toBe(false);
      }
      await unpackaged.quit();
    } finally {
      await unpackaged.electron.dispose();
    }
    const packaged = await bootDesktopApp({ env: { ELECTRON_RENDERER_URL: dev }, isPackaged: true });
    try {
      expect(packaged.window.loads).toEqual([{ kind: 'file', target: BUNDLES.renderer }]);
      const r = (await packaged.electron.ipcMain.invoke(ipcChannel('listRuns'), dev, [{}])) as ApiResult<unknown>;
      expect(r.ok).toBe(false);
      expect((await packaged.lab.listRuns({})).ok).toBe(true);
      await packaged.quit();
    } finally {
      await packaged.electron.dispose();
    }
  }, 60_000);

  it('on macOS, closing the window keeps the app; activate opens a working window without registering the API again', async () => {
    const platform = Object.getOwnPropertyDescriptor(process, 'platform')!;
    Object.defineProperty(process, 'platform', { ...platform, value: 'darwin' });
    const app = await bootDesktopApp();
    try {
      app.electron.app.emit('activate');
      expect(app.electron.windows).toHaveLength(1); // a window is open: nothing to do
      app.window.close();
      expect(app.electron.app.quitCalls).toBe(0);
      app.electron.app.emit('activate');
      const open = app.electron.windows.filter((w) => !w.isDestroyed());
      expect(open).toHaveLength(1);
      expect(open[0]).not.toBe(app.window);
      expect(app.electron.ipcMain.registrations).toHaveLength(API_METHODS.length);
      // The new window's page talks to the lab and gets its pushes.
      const lab = open[0].webContents.renderer!.mainWorld.lab as typeof app.lab;
      const got: LabPush[] = [];
      lab.subscribe((p) => got.push(p));
      const created = await lab.createRun({ preset: 'math-quick', config: { name: 'second-window' } });
      expect(created.ok).toBe(true);
      await until('a runs push in the new window', () => got.some((p) => p.type === 'runs'));
    } finally {
      Object.defineProperty(process, 'platform', platform);
      await app.quit().catch(() => undefined);
      await app.electron.dispose();
    }
  }, 60_000);
});
