/**
 * The desktop window's trust decisions (issue: the sender check was a string prefix, the dev URL
 * was honoured in a packaged app, and the CSP allowed ws://127.0.0.1:* with no socket in use).
 * Pure helpers, no Electron needed; plus the renderer page's own meta CSP and how web mode
 * rewrites it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DESKTOP_CSP, devRendererUrl, isTrustedSender } from '../../src/main/windowPolicy';
import { webModeHtml } from '../../src/server/server';

const rendererFile = join('/opt/srpo-lab/resources/app.asar/out/renderer/index.html');

describe('dev renderer URL', () => {
  const env = { ELECTRON_RENDERER_URL: 'http://localhost:5173/' };

  it('is honoured only when the app is not packaged', () => {
    expect(devRendererUrl(env, false)).toBe('http://localhost:5173/');
    expect(devRendererUrl(env, true)).toBeNull();
    expect(devRendererUrl({}, false)).toBeNull();
  });

  it('must be an http(s) URL on this machine', () => {
    expect(devRendererUrl({ ELECTRON_RENDERER_URL: 'http://127.0.0.1:5173' }, false)).toBe('http://127.0.0.1:5173/');
    for (const bad of ['https://evil.example/', 'file:///tmp/page.html', 'http://localhost.evil.example:5173/', 'nonsense']) {
      expect(devRendererUrl({ ELECTRON_RENDERER_URL: bad }, false), bad).toBeNull();
    }
  });
});

describe('trusted IPC sender', () => {
  it('dev: the exact origin of the dev server, not a prefix of it', () => {
    const page = { devUrl: 'http://localhost:5173', rendererFile };
    expect(isTrustedSender('http://localhost:5173/#/runs', page)).toBe(true);
    expect(isTrustedSender('http://localhost:5173/index.html?x=1', page)).toBe(true);
    for (const url of [
      'http://localhost:5173.evil.example/',
      'http://localhost:51730/',
      'http://localhost:5173@evil.example/',
      'https://localhost:5173/',
      'http://127.0.0.1:5173/',
      'about:blank',
      '',
    ]) {
      expect(isTrustedSender(url, page), url).toBe(false);
    }
  });

  it('packaged: exactly the renderer file, not any file ending like it', () => {
    const page = { devUrl: null, rendererFile };
    expect(isTrustedSender(`${pathToFileURL(rendererFile).href}#/runs/3`, page)).toBe(true);
    for (const url of [
      'file:///tmp/evil/renderer/index.html',
      `${pathToFileURL(rendererFile).href.replace('index.html', 'other.html')}`,
      'file://remote-host/opt/srpo-lab/resources/app.asar/out/renderer/index.html',
      'http://localhost:5173/',
      'data:text/html,<p>x</p>',
    ]) {
      expect(isTrustedSender(url, page), url).toBe(false);
    }
  });
});

describe('desktop CSP', () => {
  it('allows no sockets: connect-src self only', () => {
    expect(DESKTOP_CSP).toContain("connect-src 'self'");
    expect(DESKTOP_CSP).not.toMatch(/ws:|wss:/);
    expect(DESKTOP_CSP).toContain("default-src 'self'");
    expect(DESKTOP_CSP).toContain("object-src 'none'");
  });

  it("the renderer page's meta CSP allows no sockets; web mode adds exactly its own", () => {
    const html = readFileSync(join(__dirname, '../../src/renderer/index.html'), 'utf8');
    const meta = (h: string) => /http-equiv="Content-Security-Policy"\s+content="([^"]*)"/.exec(h)![1];
    expect(meta(html)).toContain("connect-src 'self';");
    expect(meta(html)).not.toMatch(/ws:/);
    expect(meta(webModeHtml(html, 4321))).toContain("connect-src 'self' ws://127.0.0.1:4321 ws://localhost:4321;");
  });
});
