/**
 * The run dashboard's corpus index bar (RunDashboardIndexProgress.vue) as a user sees it: the
 * built renderer in headless Chromium against web mode (LabService + startLabServer) with a
 * scripted engine (test/core/host/fakeEngine.ts) that sends the `indexProgress` messages a real
 * engine sends while it indexes a corpus file (test/engine/corpusProgress.test.ts checks those).
 * A report shows the bar with passages, percent, passages/s and ETA; a later report moves it; the
 * report marked done removes it. A screenshot goes to test-artifacts/. Skips, saying so, where
 * /usr/bin/chromium is absent.
 */
import { execSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LabService } from '../../src/core/host/labService';
import type { EngineLaunchRequest } from '../../src/core/host/launcher';
import type { EngineMessage } from '../../src/core/host/messages';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../src/server/pdf';
import { startLabServer, type LabServer } from '../../src/server/server';
import { FakeEngine } from '../core/host/fakeEngine';

// Browser globals used inside page callbacks (they run in Chromium); this file is type-checked without the DOM lib.
declare const window: { location: { hash: string } };
declare const document: { querySelector(s: string): { value?: number } | null };

const hasChromium = existsSync(CHROMIUM_PATH);
if (!hasChromium) console.warn(`[e2e] skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`);
const ART = 'test-artifacts';

/** Whether out/renderer holds a build with the bar (else it is built, as the other e2e tests do when it is missing). */
function rendererHasBar(): boolean {
  const assets = 'out/renderer/assets';
  return existsSync(assets) && readdirSync(assets).some((f) => f.endsWith('.js') && readFileSync(join(assets, f), 'utf8').includes('index-progress-bar'));
}

class ScriptedEngine extends FakeEngine {
  say(m: EngineMessage): void {
    this.receive(m);
  }
}

describe.skipIf(!hasChromium)('the corpus index bar in the run dashboard (headless Chromium, web mode, a scripted engine)', () => {
  const engines: ScriptedEngine[] = [];
  let service: LabService;
  let server: LabServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    if (!rendererHasBar()) execSync('npx electron-vite build', { stdio: 'inherit' });
    mkdirSync(ART, { recursive: true });
    const launcher = { launch: (r: EngineLaunchRequest): ScriptedEngine => (engines.push(new ScriptedEngine(r, service)), engines.at(-1)!) };
    service = new LabService({ dbPath: join(mkdtempSync(join(tmpdir(), 'srpo-e2e-index-')), 'lab.db'), launcher });
    server = await startLabServer({ service });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    await page.goto(server.url);
    await page.waitForSelector('.runs-view');
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await service?.close();
  });

  it('shows passages, percent, rate and ETA while the engine indexes, moves with each report, and goes once done', async () => {
    const { runId } = (await service.call('createRun', { preset: 'search-quick', config: {}, start: true })) as { runId: number };
    const engine = engines.at(-1)!;
    await page.evaluate((h) => (window.location.hash = h), `#/runs/${runId}`);
    await page.waitForSelector('.dashboard .run-status');
    expect(await page.locator('.index-progress').count()).toBe(0);

    // The page subscribes as it mounts: report until the bar shows (a real engine reports every 100k passages).
    const report = { type: 'indexProgress', passages: 1_200_000, bytesRead: 57, totalBytes: 1000, elapsedMs: 30_000, done: false } as const;
    for (let i = 0; i < 50 && (await page.locator('.index-progress').count()) === 0; i++) {
      engine.say(report);
      await page.waitForTimeout(100);
    }
    await page.waitForSelector('.index-progress');
    expect(await page.textContent('.index-progress-text')).toBe('1.2M passages · 5.7% · 40k passages/s · ETA 8 min');
    expect(await page.evaluate(() => document.querySelector('.index-progress-bar')?.value)).toBeCloseTo(0.057, 6);
    await page.screenshot({ path: join(ART, 'dashboard-index-progress.png'), fullPage: true });

    engine.say({ ...report, passages: 10_500_000, bytesRead: 500, elapsedMs: 262_500 });
    await page.waitForFunction(() => (document.querySelector('.index-progress-bar')?.value ?? 0) > 0.4);
    expect(await page.textContent('.index-progress-text')).toBe('10.5M passages · 50.0% · 40k passages/s · ETA 4 min');

    engine.say({ ...report, passages: 21_000_000, bytesRead: 1000, elapsedMs: 525_000, done: true });
    await page.waitForSelector('.index-progress', { state: 'detached' });
    engine.complete();
  });
});
