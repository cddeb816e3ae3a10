/**
 * An external run as a user sees it (issue 28, point 8), in headless Chromium against web mode: a
 * 1-step run of external-math-quick (the JavaScript example program with the official `openai`
 * client, through a real forked engine), then its trace viewer lists the program's calls as
 * events: the two solver calls tagged "solve" as one K = 2 set, each member with its role, the
 * prompt the policy read and its tokens; the dashboard shows the failed-episode and request
 * latency panels. Skips, saying so, without Chromium. Screenshots: test-artifacts/external-*.png.
 */
import { execSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LabService } from '../../src/core/host/labService';
import { NodeForkLauncher } from '../../src/core/host/launcher';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../src/server/pdf';
import { startLabServer, type LabServer } from '../../src/server/server';

const hasChromium = existsSync(CHROMIUM_PATH);
if (!hasChromium) console.warn(`[e2e] skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`);
const ART = 'test-artifacts';

describe.skipIf(!hasChromium)('an external agent run in the trace viewer and the dashboard (web mode, real engine)', () => {
  let service: LabService;
  let server: LabServer;
  let browser: Browser;
  let page: Page;
  let runId = 0;
  const go = (hash: string) => page.evaluate((h) => ((globalThis as unknown as { location: { hash: string } }).location.hash = h), hash);

  beforeAll(async () => {
    if (!existsSync('out/renderer/index.html')) execSync('npx electron-vite build', { stdio: 'inherit' });
    mkdirSync(ART, { recursive: true });
    const dbPath = join(mkdtempSync(join(tmpdir(), 'srpo-e2e-external-')), 'lab.db');
    service = new LabService({ dbPath, launcher: new NodeForkLauncher({ stdio: 'pipe' }) });
    server = await startLabServer({ service });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    ({ runId } = await service.call('createRun', {
      preset: 'external-math-quick',
      config: { steps: 1, rollout: { tasksPerStep: 2, groupSize: 2 }, eval: { every: 0 }, checkpointEvery: 0 },
      start: true,
    }));
    await page.goto(server.url);
    await page.waitForSelector('.runs-view');
    for (const until = Date.now() + 180_000; ;) {
      const run = (await service.call('listRuns', {})).find((r) => r.id === runId)!;
      if (run.status === 'completed') break;
      if (run.status === 'failed' || Date.now() > until) throw new Error(`run ${runId}: ${run.status} ${run.error ?? ''}`);
      await new Promise((ok) => setTimeout(ok, 250));
    }
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await service?.close();
  });

  it('lists the tagged solver calls as one K = 2 event, each member with its role, prompt and tokens', async () => {
    await go(`#/runs/${runId}/trace`);
    await page.waitForSelector('tr[data-event]');
    const rows = await page.$$eval('tr[data-event]', (trs) =>
      trs.map((tr) =>
        Array.from(
          (tr as unknown as { querySelectorAll(s: string): ArrayLike<{ textContent: string | null }> }).querySelectorAll('td'),
          (td) => td.textContent ?? '',
        ),
      ),
    );
    // Columns: step, key, kind, K (members/expected), ...; a solve event per episode, 4 episodes.
    const solve = rows.filter((r) => r[1].endsWith('/solve'));
    expect(solve.length).toBe(4);
    for (const r of solve) expect([r[0], r[2], r[3]]).toEqual(['1', 'solve', '2/2']);
    expect(rows.some((r) => /\/verifier#0$/.test(r[1]))).toBe(true);
    await page.click(`tr[data-event] >> text=${solve[0][1]}`);
    await page.waitForSelector(`.trace-event[data-event-key="${solve[0][1]}"]`);
    const members = await page.$$eval('.trace-event .member', (els) =>
      els.map((m) => ({
        role: m.querySelector('.role')?.textContent ?? '',
        prompt: m.querySelector('.prompt')?.textContent ?? '',
        tokens: m.querySelectorAll('.tokens span').length,
      })),
    );
    expect(members.map((m) => m.role)).toEqual(['solver', 'solver']);
    for (const m of members) {
      expect(m.prompt).toContain('Problem: ');
      expect(m.tokens).toBeGreaterThan(0);
    }
    await page.screenshot({ path: join(ART, 'external-trace.png'), fullPage: true });
  });

  it('the dashboard shows the failed-episode and request-latency panels', async () => {
    await go(`#/runs/${runId}`);
    await page.waitForSelector('[data-chart="external/failed_episodes"]');
    expect(await page.textContent('[data-chart="external/failed_episodes"] .title')).toBe('External agents: failed episodes');
    await page.waitForSelector('[data-chart="external/request_latency_ms + external/request_latency_p95_ms"] canvas');
    await page.screenshot({ path: join(ART, 'external-dashboard.png'), fullPage: true });
  });
});
