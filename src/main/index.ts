/**
 * Electron main process: window lifecycle, security, and the LabService bound to IPC. Each
 * LabApi method is one `ipcMain.handle('lab:<method>')` whose sender frame must be this app's
 * page (windowPolicy.ts: exact origin / exact file) and whose input is refused when too deep or
 * holding prototype keys (src/shared/inputGuards.ts), then validated with the contract's zod
 * schema (LabService.call -> parseApiInput) before anything runs; results go back as ApiResult.
 * Pushes go to the app's windows on `lab:push`. Windows: contextIsolation + sandbox, no node
 * integration, strict CSP without sockets (header and meta), navigation, new windows, webviews
 * and permission requests refused; only allowlisted https links open in the system browser
 * (externalLinks.ts). The dev server URL is honoured only in an unpackaged app. Packaged builds
 * get their Electron fuses flipped by scripts/set-fuses.mjs (RunAsNode off, …).
 * Engines are Electron utility processes running the bundled engine `out/main/engine.js`
 * (UtilityProcessLauncher, utilityLauncher.ts); PDF reports are printed by a hidden, script-less window.
 *
 * The LabService itself runs in a worker thread (LabWorkerClient, the built `out/main/labWorker.js`):
 * its SQLite reads are synchronous and must never freeze this thread, which serves every window.
 * This thread keeps what only the main process can do and the worker asks for by message:
 * launching engines (utilityProcess.fork) and printing PDFs (BrowserWindow).
 *
 * The build machines have no Electron binary: the BUILT bundle runs under Node with a stand-in
 * `electron` module in test/desktop (window preferences, IPC registration and sender checks,
 * preload, utility-process engines, quit, PDF, navigation); the worker client and its protocol
 * are tested by test/core/host/labWorker.test.ts, the same LabService in web mode by test/server
 * and test/e2e. A real Electron window is not run there (README, "What is verified where").
 */
import { join } from 'node:path';
import { app, BrowserWindow, dialog, ipcMain, session, shell, type IpcMainInvokeEvent } from 'electron';
import type { LabHost } from '../core/host/labHost';
import { LabWorkerClient } from '../core/host/labWorkerClient';
import { API_METHODS, ipcChannel, PUSH_CHANNEL } from '../shared/apiMethods';
import { toApiError, type ApiResult } from '../shared/api';
import { findForbiddenKey, forbiddenKeyMessage, MAX_INPUT_DEPTH, valueDepthExceeds } from '../shared/inputGuards';
import { isAllowedExternalLink } from './externalLinks';
import { UtilityProcessLauncher } from './utilityLauncher';
import { DESKTOP_CSP, devRendererUrl, isTrustedSender } from './windowPolicy';

const devUrl = devRendererUrl(process.env, app.isPackaged);
const rendererFile = join(__dirname, '../renderer/index.html');

let service: LabWorkerClient | null = null;

/** Only this app's own page may call the lab. */
function trusted(event: IpcMainInvokeEvent): boolean {
  return isTrustedSender(event.senderFrame?.url ?? '', { devUrl, rendererFile });
}

async function printPdf(html: string): Promise<Uint8Array> {
  const win = new BrowserWindow({ show: false, webPreferences: { sandbox: true, contextIsolation: true, javascript: false } });
  try {
    await win.loadURL(`data:text/html;charset=utf-8,${encodeURIComponent(html)}`);
    return await win.webContents.printToPDF({ printBackground: true, pageSize: 'A4' });
  } finally {
    win.destroy();
  }
}

function bindIpc(lab: LabHost): void {
  for (const method of API_METHODS) {
    ipcMain.handle(ipcChannel(method), async (event, input: unknown): Promise<ApiResult<unknown>> => {
      if (!trusted(event)) return { ok: false, error: { code: 'unauthorized', message: 'not the lab window' } };
      // Before the worker's structured clone and the validators recurse into it.
      if (valueDepthExceeds(input)) return { ok: false, error: { code: 'invalid_input', message: `input nests deeper than ${MAX_INPUT_DEPTH} levels` } };
      const bad = findForbiddenKey(input);
      if (bad) return { ok: false, error: { code: 'invalid_input', message: forbiddenKeyMessage(bad.key, `input at "${bad.path}"`) } };
      try {
        return { ok: true, value: await lab.call(method, input) };
      } catch (err) {
        return { ok: false, error: toApiError(err) };
      }
    });
  }
  lab.subscribe((push) => {
    for (const w of BrowserWindow.getAllWindows()) if (!w.isDestroyed()) w.webContents.send(PUSH_CHANNEL, push);
  });
}

function createWindow(): void {
  const win = new BrowserWindow({
    width: 1400,
    height: 900,
    title: 'SRPO Lab',
    webPreferences: {
      preload: join(__dirname, '../preload/index.js'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      webviewTag: false,
    },
  });
  // No navigation away from the app and no new windows; allowlisted https links open in the browser.
  win.webContents.on('will-navigate', (event) => event.preventDefault());
  win.webContents.on('will-redirect', (event) => event.preventDefault());
  win.webContents.setWindowOpenHandler(({ url }) => {
    if (isAllowedExternalLink(url)) void shell.openExternal(url);
    return { action: 'deny' };
  });
  if (devUrl) void win.loadURL(devUrl);
  else void win.loadFile(rendererFile);
}

app.on('web-contents-created', (_e, contents) => {
  contents.on('will-attach-webview', (event) => event.preventDefault());
});

void app.whenReady().then(() => {
  session.defaultSession.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [DESKTOP_CSP] } });
  });
  const dbPath = process.env.SRPO_LAB_DB ?? join(app.getPath('userData'), 'lab.db');
  service = new LabWorkerClient({
    dbPath,
    // The worker and engine bundles sit next to this one (electron-vite inputs `labWorker`, `engine`).
    entry: join(__dirname, 'labWorker.js'),
    launcher: new UtilityProcessLauncher({ entry: join(__dirname, 'engine.js') }),
    printPdf,
  });
  // Every call fails with this reason too; say it once where the user looks.
  service.ready.catch((err: Error) => {
    if (!closing) dialog.showErrorBox('SRPO Lab could not open its database', `${dbPath}\n\n${err.message}`);
  });
  bindIpc(service);
  createWindow();
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) createWindow();
  });
});

let closing = false;
app.on('before-quit', (event) => {
  if (!service || closing) return;
  // Let engines stop between steps (their runs end 'stopped', resumable) before quitting.
  event.preventDefault();
  closing = true;
  void service.close(5000).finally(() => app.quit());
});

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});
