/**
 * The desktop window's trust decisions, pure so they can be tested without Electron:
 * - `DESKTOP_CSP`: the Content-Security-Policy of the app's page. The desktop app talks to the
 *   lab over IPC only, so `connect-src 'self'` and no `ws:` (web mode serves its own CSP).
 * - `devRendererUrl`: the dev server URL (`ELECTRON_RENDERER_URL`, set by `electron-vite dev`),
 *   honoured only when the app is not packaged, and only an http(s) URL on this machine. A
 *   packaged app always loads its own file: an environment variable must not swap in a page.
 * - `isTrustedSender`: whether an IPC call comes from the app's page. The dev page by exact
 *   origin (URL parse: `http://localhost:5173.evil.example` is not `http://localhost:5173`), the
 *   packaged page by its exact file path (file URLs have no origin to compare).
 *
 * Used by index.ts. Tested by test/main/windowPolicy.test.ts.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const DESKTOP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const LOCAL_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/** The dev server URL to load, or null (packaged, unset, or not a local http(s) URL). */
export function devRendererUrl(env: Readonly<Record<string, string | undefined>>, isPackaged: boolean): string | null {
  const raw = env.ELECTRON_RENDERER_URL;
  if (isPackaged || !raw) return null;
  try {
    const u = new URL(raw);
    return (u.protocol === 'http:' || u.protocol === 'https:') && LOCAL_HOSTS.includes(u.hostname) ? u.href : null;
  } catch {
    return null;
  }
}

/** The page the app loads: the dev server (origin compared) or the built renderer file (path compared). */
export interface AppPage {
  devUrl: string | null;
  rendererFile: string;
}

/** Whether a frame at `frameUrl` is the app's own page. */
export function isTrustedSender(frameUrl: string, page: AppPage): boolean {
  let u: URL;
  try {
    u = new URL(frameUrl);
  } catch {
    return false;
  }
  if (page.devUrl) return u.origin !== 'null' && u.origin === new URL(page.devUrl).origin;
  if (u.protocol !== 'file:' || u.host !== '') return false;
  const same = (a: string, b: string) => (process.platform === 'win32' ? a.toLowerCase() === b.toLowerCase() : a === b);
  try {
    return same(resolve(fileURLToPath(u)), resolve(page.rendererFile));
  } catch {
    return false;
  }
}
