/**
 * The start-up the browser e2e tests share, so each test file says only what is its own: the
 * renderer built once (out/renderer) and test-artifacts/ made, a fresh lab database with its
 * LabService (real engines through NodeForkLauncher) and web server, a headless Chromium page
 * whose console errors and page errors are collected, and the lab opened in it. Also the paging
 * of a run's trace events through the API.
 *
 * Not a test itself. Used by test/e2e/*.test.ts.
 */
import { execSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import { LabService, type LabServiceOptions } from '../../src/core/host/labService';
import { NodeForkLauncher } from '../../src/core/host/launcher';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../src/server/pdf';
import { startLabServer, type LabServer } from '../../src/server/server';
import type { ApiOutputs } from '../../src/shared/api';
import type { EventSummary } from '../../src/shared/records';

/** Where the e2e tests leave their screenshots and downloads. */
export const ART = 'test-artifacts';

/** Builds the renderer when it is not built yet, and makes the artifacts folder. */
export function prepareE2e(): void {
  if (!existsSync('out/renderer/index.html')) execSync('npx electron-vite build', { stdio: 'inherit' });
  mkdirSync(ART, { recursive: true });
}

export interface StartedLab {
  dbPath: string;
  service: LabService;
  server: LabServer;
}

/** A new database in a temporary folder (`<tmp>/<prefix>XXXXXX/lab.db`), its LabService with real engines, and its web server. */
export async function startLab(prefix: string, options: Omit<LabServiceOptions, 'dbPath' | 'launcher'> = {}): Promise<StartedLab> {
  const dbPath = join(mkdtempSync(join(tmpdir(), prefix)), 'lab.db');
  const service = new LabService({ dbPath, launcher: new NodeForkLauncher({ stdio: 'pipe' }), ...options });
  const server = await startLabServer({ service });
  return { dbPath, service, server };
}

export interface LaunchedPage {
  browser: Browser;
  page: Page;
}

/**
 * Headless Chromium with one page (viewport 1440 x 900 unless `context` says otherwise), whose
 * page errors, and console errors unless `consoleErrors` is false, are pushed to `problems`.
 */
export async function launchPage(problems: string[], context: BrowserContextOptions = {}, consoleErrors = true): Promise<LaunchedPage> {
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 }, ...context });
  const page = await ctx.newPage();
  if (consoleErrors) page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  page.on('pageerror', (e) => problems.push(e.message));
  return { browser, page };
}

/** Opens the lab's URL (with its token) and waits for the runs view. */
export async function openLab(page: Page, server: LabServer): Promise<void> {
  await page.goto(server.url);
  await page.waitForSelector('.runs-view');
}

/** Every trace event of a run that `filter` selects, page after page (1000 a page). */
export async function allEvents(service: LabService, runId: number, filter: Record<string, unknown> = {}): Promise<EventSummary[]> {
  const out: EventSummary[] = [];
  let after: { step: number; id: number } | null = null;
  do {
    const p: ApiOutputs['listEvents'] = await service.call('listEvents', { runId, filter, limit: 1000, after });
    out.push(...p.events);
    after = p.next;
  } while (after);
  return out;
}
