/**
 * The built renderer in real headless Chromium (Debian's `chromium` + playwright-core): it
 * renders, says what the lab is, lists what is built and what is not, and breaks no CSP rule.
 * Skips, saying so, where /usr/bin/chromium is absent (.ci/run installs it with apt). Saves a
 * screenshot to test-artifacts/.
 */
import { execSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_FEATURES, PLANNED_FEATURES } from '../../src/shared/about';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`[e2e] skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);

const ROOT = 'out/renderer';
const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };

describe.skipIf(!hasChromium)('renderer shell in headless Chromium', () => {
  let server: Server;
  let browser: Browser;
  let url: string;

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'index.html'))) execSync('npx electron-vite build', { stdio: 'inherit' });
    server = createServer((req, res) => {
      const path = normalize(join(ROOT, req.url === '/' ? 'index.html' : (req.url ?? '').split('?')[0]));
      if (!path.startsWith(normalize(ROOT)) || !existsSync(path)) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream' }).end(readFileSync(path));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    server?.close();
  });

  it('says what the lab is and exactly which parts exist', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(url);
    await page.waitForSelector('h1');
    expect(await page.textContent('h1')).toBe('SRPO Lab');
    const items = await page.$$eval('li', (els) => els.map((e) => e.textContent ?? ''));
    for (const f of BUILT_FEATURES) expect(items.some((t) => t.includes(f.name))).toBe(true);
    for (const f of PLANNED_FEATURES) expect(items).toContain(f);
    mkdirSync('test-artifacts', { recursive: true });
    await page.screenshot({ path: 'test-artifacts/shell.png', fullPage: true });
    expect(problems).toEqual([]);
  });
});
