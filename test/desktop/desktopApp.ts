/**
 * The desktop app as the tests run it: the BUILT bundles (out/main/index.js with its lab worker
 * out/main/labWorker.js and engine out/main/engine.js, out/preload/index.js) loaded under Node,
 * with `require('electron')` answered by the stand-in (electronStandIn.ts) for code under out/.
 * `ensureBuilt()` runs `npx electron-vite build` once when a bundle is missing or older than the
 * sources it is built from (CI runs `npm run build` first, so there it finds them fresh); a lock
 * keeps two test files from building at once, and the new files replace the old ones one by one.
 * `bootDesktopApp()` starts one app: a fresh stand-in, the main bundle required afresh (its
 * module state is the app's), `ready` emitted, the window's preload run; the test then plays the
 * page through `lab`, the API the preload exposed.
 *
 * Only for test/desktop/*.test.ts. What this cannot show (a real Chromium window, native menus,
 * packaging, fuses, the GPU) is listed in the README's "What is verified where".
 */
import { execSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import type { ApiMethod, ApiResult, LabPush } from '../../src/shared/api';
import { ElectronStandIn, type StandInWindow } from './electronStandIn';

export const ROOT = resolve(__dirname, '../..');
export const OUT = join(ROOT, 'out');
/** The bundles the desktop app runs, as electron-vite lays them out (electron.vite.config.ts). */
export const BUNDLES = {
  main: join(OUT, 'main/index.js'),
  labWorker: join(OUT, 'main/labWorker.js'),
  engine: join(OUT, 'main/engine.js'),
  preload: join(OUT, 'preload/index.js'),
  renderer: join(OUT, 'renderer/index.html'),
} as const;

/** What the main and preload bundles are built from. */
const SOURCES = ['src/main', 'src/preload', 'src/core', 'src/engine', 'src/shared', 'electron.vite.config.ts'].map((p) => join(ROOT, p));

/** The newest mtime under `path` (0 for a file that vanished meanwhile: others keep editing). */
function newestMtime(path: string): number {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  const names = (() => {
    try {
      return readdirSync(path);
    } catch {
      return [];
    }
  })();
  for (const name of names) newest = Math.max(newest, newestMtime(join(path, name)));
  return newest;
}

/** Why the bundles must be (re)built, or null when they are fresh. */
export function bundlesStale(): string | null {
  const missing = Object.values(BUNDLES).filter((b) => !existsSync(b));
  if (missing.length > 0) return `missing ${missing.map((m) => m.slice(ROOT.length + 1)).join(', ')}`;
  const built = Math.min(...[BUNDLES.main, BUNDLES.labWorker, BUNDLES.engine, BUNDLES.preload].map((b) => statSync(b).mtimeMs));
  const source = Math.max(...SOURCES.filter(existsSync).map(newestMtime));
  return source > built ? 'sources are newer than the bundles' : null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every file under `dir`, those in subfolders (chunks/, assets/) first, relative to `dir`. */
function filesDeepFirst(dir: string, rel = ''): string[] {
  const entries = readdirSync(join(dir, rel), { withFileTypes: true });
  const sub = entries.filter((e) => e.isDirectory()).flatMap((e) => filesDeepFirst(dir, join(rel, e.name)));
  return [...sub, ...entries.filter((e) => e.isFile()).map((e) => join(rel, e.name))];
}

/**
 * `npx electron-vite build` into a staging folder, then each file renamed into out/ (chunks and
 * assets before the entries that load them). electron-vite empties out/ when it builds there;
 * another test file of the same run may be serving out/renderer or forking out/main/engine.js
 * at that moment, and must never find it empty or half written.
 */
function buildInPlace(): void {
  const staging = mkdtempSync(join(tmpdir(), 'srpo-desktop-out-'));
  // Stamped with the time the build began: a source saved during the build still reads as newer.
  const began = new Date();
  try {
    execSync(`npx electron-vite build --outDir ${JSON.stringify(staging)}`, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    for (const part of ['renderer', 'preload', 'main']) {
      for (const rel of filesDeepFirst(join(staging, part))) {
        const target = join(OUT, part, rel);
        mkdirSync(dirname(target), { recursive: true });
        copyFileSync(join(staging, part, rel), `${target}.tmp`);
        utimesSync(`${target}.tmp`, began, began);
        renameSync(`${target}.tmp`, target);
      }
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Builds the bundles if missing or stale, one test file at a time (a lock directory in tmp). Once
 * per vitest run: the test files of one run are children of one vitest process (`process.ppid`),
 * and a file that finds the bundles built during its run does not rebuild them under another
 * file's running app because a source changed since (other people keep editing).
 */
export async function ensureBuilt(): Promise<void> {
  const base = join(tmpdir(), `srpo-lab-desktop-build-${Buffer.from(ROOT).toString('hex').slice(-24)}`);
  const lock = `${base}.lock`;
  const stamp = `${base}.stamp`;
  const t0 = Date.now();
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Another test file is building; a lock older than 3 minutes was left by a dead one.
      const st = statSync(lock, { throwIfNoEntry: false });
      if (st && Date.now() - st.mtimeMs > 180_000) rmSync(lock, { recursive: true, force: true });
      if (Date.now() - t0 > 240_000) throw new Error(`timed out waiting for the build lock ${lock}`);
      await sleep(250);
    }
  }
  try {
    const builtThisRun = existsSync(stamp) && readFileSync(stamp, 'utf8') === String(process.ppid);
    const why = bundlesStale();
    if (why && !(builtThisRun && !why.startsWith('missing'))) {
      console.log(`[desktop] building the bundles (${why}): npx electron-vite build`);
      buildInPlace();
      writeFileSync(stamp, String(process.ppid));
    }
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// `require('electron')` from the bundles

let current: ElectronStandIn | null = null;
let hooked = false;
/** Every module the bundles under out/ required on this thread (the Electron main thread's share). */
export const mainThreadRequires = new Set<string>();

/** Code under out/ that requires 'electron' gets the current stand-in; nothing else is touched. */
function hookElectron(): void {
  if (hooked) return;
  hooked = true;
  const mod = Module as unknown as { _load(request: string, parent: { filename?: string } | null, isMain: boolean): unknown };
  const load = mod._load;
  mod._load = function (request, parent, isMain) {
    if (parent?.filename?.startsWith(OUT + sep)) mainThreadRequires.add(request);
    if (request === 'electron' && parent?.filename?.startsWith(OUT + sep)) {
      if (!current) throw new Error('desktopApp: a bundle required electron with no stand-in installed');
      return current.mainModule();
    }
    return load.call(this, request, parent, isMain);
  };
}

/** Forgets every module under out/, so the next require runs the main bundle afresh. */
function purgeBundles(): void {
  const cache = (Module as unknown as { _cache: Record<string, unknown> })._cache;
  for (const id of Object.keys(cache)) if (id.startsWith(OUT + sep)) delete cache[id];
}

// ---------------------------------------------------------------------------------------------
// One running app

/** What the preload exposes to the page (src/preload/index.ts). */
export type LabBridge = { [M in ApiMethod]: (input: unknown) => Promise<ApiResult<unknown>> } & {
  transport: string;
  subscribe(listener: (push: LabPush) => void): () => void;
};

export interface DesktopApp {
  electron: ElectronStandIn;
  /** The window the app opened at ready. */
  window: StandInWindow;
  /** The page's `window.lab`, as the preload exposed it. */
  lab: LabBridge;
  /** Every push the page received through `lab.subscribe`, in order. */
  pushes: LabPush[];
  userData: string;
  /** Calls a method as the page does and unwraps the ApiResult (throws with the error's code). */
  call<T = unknown>(method: ApiMethod, input?: unknown): Promise<T>;
  /** Resolves with the first push (already received or future) that matches. */
  waitForPush<P extends LabPush>(what: string, pred: (p: LabPush) => p is P, timeoutMs?: number): Promise<P>;
  waitForPush(what: string, pred: (p: LabPush) => boolean, timeoutMs?: number): Promise<LabPush>;
  /** app.quit() as the OS or a menu asks, then waits for 'quit'. */
  quit(timeoutMs?: number): Promise<void>;
  /** Waits for the app to have quit (however the quit began). */
  quitted(timeoutMs?: number): Promise<void>;
}

export interface BootOptions {
  /** Where app.getPath('userData') points (default: a new temporary folder). */
  userData?: string;
  isPackaged?: boolean;
  /** Environment the main process sees while it loads and gets ready (undefined: unset). */
  env?: Record<string, string | undefined>;
}

/** Polls until `get` returns something truthy. */
export async function until<T>(what: string, get: () => T | undefined | null | false, timeoutMs = 10_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** The temporary folders the apps of this test file made (paths roots, userData). */
const tempFolders: string[] = [];

/** A temporary folder removed by `removeTempFolders()`. */
export function tempFolder(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempFolders.push(dir);
  return dir;
}

/** Removes every temporary folder of this file's apps (call once they have all quit). */
export function removeTempFolders(): void {
  for (const dir of tempFolders.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** An app that did not come up as it should: quit it (ending its lab worker), then let go of its engines. */
async function giveUp(electron: ElectronStandIn): Promise<void> {
  electron.app.quit();
  await Promise.race([electron.app.exited, sleep(10_000)]);
  await electron.dispose();
}

/** Starts the built app under the stand-in: loads the main bundle, emits ready, waits for the window's preload. */
export async function bootDesktopApp(options: BootOptions = {}): Promise<DesktopApp> {
  hookElectron();
  const root = tempFolder('srpo-desktop-');
  const electron = new ElectronStandIn({ pathsRoot: root, isPackaged: options.isPackaged ?? false });
  const userData = options.userData ?? electron.app.getPath('userData');
  if (options.userData) electron.app.getPath = (name: string) => (name === 'userData' ? userData : join(root, name));
  mkdirSync(userData, { recursive: true });

  // The app reads its environment at load (the dev URL) and at ready (the database path).
  const env = { SRPO_LAB_DB: undefined, ELECTRON_RENDERER_URL: undefined, ...options.env };
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const setEnv = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  current = electron;
  purgeBundles();
  setEnv(env);
  let window: StandInWindow;
  try {
    Module.createRequire(join(ROOT, 'package.json'))(BUNDLES.main);
    await electron.app.emitReady();
    // The environment stays set until the ready handler has run: the window it opens says so.
    window = await until('the app window', () => electron.windows.find((w) => w.options.webPreferences?.preload)).catch(async (err: Error) => {
      await giveUp(electron);
      throw err;
    });
  } finally {
    setEnv(saved);
  }
  const pushes: LabPush[] = [];
  const lab = window.webContents.renderer?.mainWorld.lab as LabBridge | undefined;
  if (!lab) {
    await giveUp(electron);
    throw new Error(`the preload exposed no window.lab (${window.webContents.preloadError ?? 'it ran and exposed nothing'})`);
  }
  const waiters: { pred: (p: LabPush) => boolean; resolve: (p: LabPush) => void }[] = [];
  lab.subscribe((p) => {
    pushes.push(p);
    for (const w of [...waiters]) {
      if (!w.pred(p)) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(p);
    }
  });

  const app: DesktopApp = {
    electron,
    window,
    lab,
    pushes,
    userData,
    async call<T>(method: ApiMethod, input: unknown = {}): Promise<T> {
      const r = await lab[method](input);
      if (!r.ok) throw Object.assign(new Error(`${method}: ${r.error.code}: ${r.error.message}`), { code: r.error.code });
      return r.value as T;
    },
    waitForPush(what: string, pred: (p: LabPush) => boolean, timeoutMs = 60_000): Promise<LabPush> {
      const hit = pushes.find(pred);
      if (hit) return Promise.resolve(hit);
      return new Promise((ok, fail) => {
        const timer = setTimeout(
          () =>
            fail(
              new Error(`timed out after ${timeoutMs} ms waiting for ${what}; pushes: ${JSON.stringify(pushes.filter((p) => p.type !== 'points').slice(-20))}`),
            ),
          timeoutMs,
        );
        waiters.push({ pred, resolve: (p) => (clearTimeout(timer), ok(p)) });
      });
    },
    quit(timeoutMs = 30_000): Promise<void> {
      electron.app.quit();
      return app.quitted(timeoutMs);
    },
    async quitted(timeoutMs = 30_000): Promise<void> {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          electron.app.exited,
          new Promise((_, fail) => (timer = setTimeout(() => fail(new Error(`the app did not quit within ${timeoutMs} ms`)), timeoutMs))),
        ]);
      } finally {
        clearTimeout(timer);
      }
    },
  } as DesktopApp;
  return app;
}
