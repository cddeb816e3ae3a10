/**
 * The lab as a user drives it: the built renderer in real headless Chromium (Debian's chromium +
 * playwright-core) against web mode (LabService + startLabServer, real forked engines on a tiny
 * math-quick run). Creates a run from a preset through the generated form (inline validation,
 * diff), watches its curves grow live, steps through its trace with the keyboard, compares it
 * with a second seed (and watches a third run's curve grow live in the comparison), zooms into a
 * long synthetic run's curve and gets the window's real points, exports every report format and
 * checks their content, and breaks no CSP rule on the way. Screenshots of every view go to
 * test-artifacts/. Skips, saying so, where /usr/bin/chromium is absent (.ci/run installs it with
 * apt).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LabService } from '../../src/core/host/labService';
import { presetConfig, resolveRunConfig } from '../../src/core/config';
import { BUILT_FEATURES, PLANNED_FEATURES } from '../../src/shared/about';
import { chromiumPdfPrinter, CHROMIUM_PATH } from '../../src/server/pdf';
import type { LabServer } from '../../src/server/server';
import { ART, launchPage, openLab, prepareE2e, startLab } from './harness';

// Browser globals used inside page callbacks (they run in Chromium); this file is type-checked
// without the DOM lib, so just what the callbacks touch is declared here, module-scoped.
interface El {
  textContent: string | null;
}
declare const document: { querySelector(s: string): El | null; querySelectorAll(s: string): ArrayLike<El> & Iterable<El> };
declare const window: { location: { hash: string } };
declare const location: { hash: string };
type HTMLInputElement = El & { value: string };

const hasChromium = existsSync(CHROMIUM_PATH);
if (!hasChromium) console.warn(`[e2e] skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`);

const TINY_FIELDS: Record<string, string> = {
  steps: '4',
  'policies.init': '',
  'policies.modelOverrides.dModel': '32',
  'policies.modelOverrides.nLayers': '1',
  'policies.modelOverrides.nHeads': '2',
  'policies.modelOverrides.contextLength': '192',
  'rollout.tasksPerStep': '2',
  'rollout.groupSize': '2',
  'rollout.maxNewTokens': '8',
  'eval.every': '2',
  'eval.n': '2',
  'eval.queries': '2',
};
const TINY_CONFIG = {
  policies: { init: null, modelOverrides: { dModel: 32, nLayers: 1, nHeads: 2, contextLength: 192 } },
  rollout: { tasksPerStep: 2, groupSize: 2, maxNewTokens: 8 },
  eval: { every: 2, n: 2, queries: 2 },
  steps: 4,
};

describe.skipIf(!hasChromium)('the lab UI in headless Chromium (web mode, real engines)', () => {
  let service: LabService;
  let server: LabServer;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const shot = (name: string) => page.screenshot({ path: join(ART, `${name}.png`), fullPage: true });
  const go = async (hash: string) => {
    await page.evaluate((h) => (window.location.hash = h), hash);
  };

  beforeAll(async () => {
    prepareE2e();
    ({ service, server } = await startLab('srpo-e2e-', { printPdf: chromiumPdfPrinter() ?? undefined }));
    ({ browser, page } = await launchPage(problems, { acceptDownloads: true }));
    await openLab(page, server);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await service?.close();
  });

  it('opens with the token, then hides it from the address bar', async () => {
    expect(page.url()).not.toContain('token=');
    expect(await page.textContent('.topbar .transport')).toBe('web');
    expect(await page.textContent('.runs-view')).toContain('No runs yet');
  });

  it('About says exactly which parts exist', async () => {
    await go('#/about');
    await page.waitForSelector('.about');
    const items = await page.$$eval('.about li', (els) => els.map((e) => e.textContent ?? ''));
    for (const f of BUILT_FEATURES) expect(items.some((t) => t.includes(f.name))).toBe(true);
    for (const f of PLANNED_FEATURES) expect(items).toContain(f);
    await shot('about');
  });

  it('New run: a form from the schema, inline validation, a diff against the preset, start', async () => {
    await go('#/new');
    await page.waitForSelector('.field[data-path="rollout.groupSize"] input');
    const field = (path: string) => page.locator(`.field[data-path="${path}"] input`).first();
    await field('rollout.groupSize').fill('0');
    await page.waitForSelector('.field[data-path="rollout.groupSize"] .field-error');
    expect(await page.textContent('.field[data-path="rollout.groupSize"] .field-error')).toMatch(/must be at least 1/);
    expect(await page.isDisabled('.start-run')).toBe(true);
    await shot('new-run-invalid');
    for (const [path, value] of Object.entries(TINY_FIELDS)) await field(path).fill(value);
    await page.waitForFunction(() => !document.querySelector('.field-error') && document.querySelector('.diff'));
    const diff = await page.textContent('.diff');
    expect(diff).toContain('rollout.groupSize');
    expect(diff).toContain('policies.init');
    await shot('new-run');
    await page.click('.start-run');
    await page.waitForFunction(() => location.hash === '#/runs/1');
  });

  it('Run dashboard: curves grow live from pushes until the run completes', async () => {
    // A second seed of the same config, for the comparison (started through the API).
    await service.call('createRun', { preset: 'math-quick', config: { ...TINY_CONFIG, seed: 2 }, start: true });
    await page.waitForSelector('.dashboard [data-chart="reward/mean"]');
    const points = async () => Number(((await page.textContent('[data-chart="reward/mean"] .head small')) ?? '0').split(' ')[0]);
    await page.waitForFunction(() => Number(document.querySelector('[data-chart="reward/mean"] .head small')?.textContent?.split(' ')[0]) >= 1, null, {
      timeout: 60_000,
    });
    const early = await points();
    await page.waitForFunction(() => document.querySelector('.run-status')?.textContent === 'completed', null, { timeout: 90_000 });
    const late = await points();
    expect(late).toBeGreaterThan(early);
    expect(late).toBe(4); // updates 1..4 (the final eval-only record has no reward)
    expect(await page.locator('[data-chart="eval Avg@2"] canvas').count()).toBe(1);
    expect(await page.textContent('.step-progress')).toMatch(/step 4\/4/);
    // After a live run, without a reload: the metric search offers every key the run wrote (it once
    // offered the 18 of the first step), the backend that ran is named, and no stale log line stays.
    const runId = Number(/#\/runs\/(\d+)/.exec(page.url())?.[1]);
    const keys = await service.call('metricKeys', { runId });
    const placeholder = () => page.getAttribute('.metric-search-input', 'placeholder');
    await expect.poll(placeholder, { timeout: 10_000 }).toBe(`Add metric: search ${keys.length} keys`);
    expect(keys.length).toBeGreaterThan(40);
    expect(await page.textContent('.dashboard')).toMatch(/backend (node|wasm|cpu|node-gpu)\b/);
    expect(await page.locator('.dashboard .log').count()).toBe(0);
    await page.click('.config summary');
    expect(await page.textContent('.config pre')).toContain('"groupSize": 2');
    await shot('dashboard');
  }, 150_000);

  it('Runs: the table lists both runs with status, preset, workflow, objective, backend, steps', async () => {
    await page.waitForFunction(async () => true);
    await go('#/runs');
    await page.waitForSelector('.runs-table tr[data-run="2"]');
    await page.waitForFunction(() => document.querySelector('tr[data-run="2"] .status')?.textContent === 'completed', null, { timeout: 90_000 });
    const row = await page.textContent('tr[data-run="1"]');
    expect(row).toContain('math-quick-s1');
    expect(row).toContain('completed');
    expect(row).toContain('srpo');
    expect(row).toContain('wasm');
    expect(row).toContain('4/4');
    await page.fill('.runs-filter', 's2');
    expect(await page.locator('.runs-table tbody tr').count()).toBe(1);
    await page.fill('.runs-filter', '');
    await shot('runs');
  }, 120_000);

  it('Trace viewer: j/k step through events, n/p and J/K through episodes; a step opens from its curve point', async () => {
    await go('#/runs/1/trace');
    await page.waitForSelector('.trace-event');
    const key = () => page.textContent('.trace-event .event-key');
    const episode = () => page.textContent('.timeline .head strong');
    const first = await key();
    await page.keyboard.press('j');
    await page.waitForFunction((k) => document.querySelector('.trace-event .event-key')?.textContent !== k, first);
    const second = await key();
    expect(second).not.toBe(first);
    await page.keyboard.press('k');
    await page.waitForFunction((k) => document.querySelector('.trace-event .event-key')?.textContent === k, first);
    const ep1 = await episode();
    await page.keyboard.press('n');
    await page.waitForFunction((e) => document.querySelector('.timeline .head strong')?.textContent !== e, ep1);
    await page.keyboard.press('J');
    await page.keyboard.press('K');
    await page.keyboard.press('p');
    await page.waitForFunction((e) => document.querySelector('.timeline .head strong')?.textContent === e, ep1);
    // The event detail: K, ratio, advantage, clip state, members with tokens (masked ones marked).
    expect(await page.locator('.trace-event .member').count()).toBeGreaterThan(0);
    expect(await page.locator('.trace-event .tok').count()).toBeGreaterThan(0);
    expect(await page.textContent('.trace-event .stats')).toMatch(/K \(expected\)/);
    await shot('trace');
    // Tokens of a member that took part in an update are coloured by their own log-ratio
    // (log pi_cur - log pi_old), each with a tooltip; step with j until an event has one.
    const ratioTokens = () => page.locator('.trace-event .tok[data-log-ratio]').count();
    for (let i = 0; i < 30 && (await ratioTokens()) === 0; i++) {
      const before = await key();
      await page.keyboard.press('j');
      await page
        .waitForFunction((k) => document.querySelector('.trace-event .event-key')?.textContent !== k, before, { timeout: 5_000 })
        .catch(() => undefined);
    }
    expect(await ratioTokens()).toBeGreaterThan(0);
    const tok = page.locator('.trace-event .tok[data-log-ratio]').first();
    const title = (await tok.getAttribute('title')) ?? '';
    expect(title).toMatch(/logp old -?\d/);
    expect(title).toMatch(/logp cur -?\d/);
    expect(title).toMatch(/log-ratio [+-]\d/);
    expect(Number.isFinite(Number(await tok.getAttribute('data-log-ratio')))).toBe(true);
    expect(await page.locator('.trace-event .legend[data-scale="tokenLogRatio"]').count()).toBe(1);
    expect(await page.locator('.trace-event .tokens[data-scale="tokenLogRatio"]').count()).toBeGreaterThan(0);
    await shot('trace-token-log-ratio');
    // From a curve point: the dashboard's pick opens ?step=N, which filters to that step.
    await go('#/runs/1/trace?step=2');
    await page.waitForFunction(() => (document.querySelector('input[name="fromStep"]') as HTMLInputElement | null)?.value === '2');
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('tr[data-event] td:first-child')].every((td) => td.textContent === '2') &&
        document.querySelectorAll('tr[data-event]').length > 0,
    );
    await page.selectOption('select[name="kind"]', 'solve');
    await page.click('.filters .apply');
    await page.waitForFunction(() => [...document.querySelectorAll('tr[data-event] td:nth-child(3)')].every((td) => td.textContent === 'solve'));
  });

  it('Compare: overlaid curves, config diff, the eval table with mean ± std over seeds', async () => {
    await go('#/compare?runs=1,2');
    await page.waitForSelector('.eval-table tbody tr');
    const rows = await page.$$eval('.eval-table tbody tr', (els) => els.map((e) => e.textContent ?? ''));
    expect(rows).toHaveLength(1); // same config apart from the seed: one row over two seeds
    expect(rows[0]).toContain('1 2');
    expect(await page.textContent('.eval-table thead')).toContain(presetConfig('math-quick').tasks.eval[0]);
    expect(await page.textContent('.config-diff')).toContain('seed');
    expect(await page.locator('[data-chart="reward/mean"] canvas').count()).toBe(1);
    await shot('compare');
  });

  it('Compare is live: a run training while compared grows its curve without a reload', async () => {
    const { runId } = await service.call('createRun', { preset: 'math-quick', config: { ...TINY_CONFIG, seed: 3 }, start: false });
    await go(`#/compare?runs=1,${runId}`);
    await page.waitForSelector('[data-chart="reward/mean"] .head small');
    // Both lines' point counts, "<run 1> / <new run>" (the new run has none yet).
    const counts = () =>
      page.evaluate(() => (document.querySelector('[data-chart="reward/mean"] .head small')?.textContent ?? '').split(' pts')[0].split(' / ').map(Number));
    await page.waitForFunction(() => /^4 \/ 0 pts/.test(document.querySelector('[data-chart="reward/mean"] .head small')?.textContent ?? ''));
    await service.call('startRun', { runId });
    await page.waitForFunction(() => /^4 \/ [1-3] pts/.test(document.querySelector('[data-chart="reward/mean"] .head small')?.textContent ?? ''), null, {
      timeout: 90_000,
    });
    const mid = await counts();
    await page.waitForFunction(() => /^4 \/ 4 pts/.test(document.querySelector('[data-chart="reward/mean"] .head small')?.textContent ?? ''), null, {
      timeout: 90_000,
    });
    expect(mid[1]).toBeGreaterThan(0);
    expect(mid[1]).toBeLessThan(4);
    expect(await page.locator('[data-chart="reward/mean"] canvas').count()).toBe(1);
    await shot('compare-live');
  }, 150_000);

  it('Dashboard zoom: a zoomed window of a long run is fetched again at full detail', async () => {
    // A synthetic run of 20,000 steps: the overview has one min/max pair per pixel column.
    const store = service.store;
    const runId = store.createRun({
      name: 'zoom-e2e',
      config: resolveRunConfig({ steps: 20_000 }),
      seed: 1,
      workflow: 'math',
      algorithm: 'srpo',
      status: 'completed',
    });
    const insert = store.db.raw.prepare('INSERT INTO metrics (run_id, key, step, value, wall_time) VALUES (?, ?, ?, ?, ?)');
    store.db.raw.transaction(() => {
      for (let step = 0; step < 20_000; step++)
        insert.run(runId, 'reward/mean', step, Math.sin(step / 300) + (step === 12_345 ? 5 : 0), 1_700_000_000_000 + step * 1000);
      store.db.raw.prepare('UPDATE runs SET last_step = ? WHERE id = ?').run(19_999, runId);
    })();
    await go(`#/runs/${runId}`);
    const chart = '[data-chart="reward/mean"]';
    await page.waitForSelector(`${chart} canvas`);
    const overview = Number(((await page.textContent(`${chart} .head small.points`)) ?? '').split(' ')[0]);
    expect(overview).toBeGreaterThan(100);
    expect(overview).toBeLessThan(4000); // downsampled to the chart's width, not 20,000
    const box = (await page.locator(`${chart} canvas`).first().boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    for (let i = 0; i < 40; i++) await page.mouse.wheel(0, -300);
    await page.waitForSelector(`${chart} .zoom-detail`, { timeout: 10_000 });
    const note = (await page.textContent(`${chart} .zoom-detail`)) ?? '';
    const [, from, to, n] = /steps (\d+)–(\d+): (\d+) pts/.exec(note)!.map(Number);
    expect(to - from).toBeLessThan(20_000 / 4);
    // A window of fewer steps than the chart asks points for shows every stored point; a wider one
    // min/max buckets at the chart's width, far denser than the overview was in that window.
    if (to - from + 1 <= overview) expect(n).toBe(to - from + 1);
    else expect(n).toBeGreaterThan((((to - from) * overview) / 20_000) * 4);
    await shot('dashboard-zoom');
    // Zooming back out to the whole run drops the detail.
    for (let i = 0; i < 60; i++) await page.mouse.wheel(0, 300);
    await page.waitForSelector(`${chart} .zoom-detail`, { state: 'detached', timeout: 10_000 });
  }, 60_000);

  it('Reports: HTML, Markdown, CSV of metrics and events, PDF, each with its content', async () => {
    await go('#/reports?runs=1,2');
    await page.waitForSelector('.export-html');
    const download = async (format: string) => {
      const [d] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), page.click(`.export-${format}`)]);
      return { name: d.suggestedFilename(), body: readFileSync((await d.path())!) };
    };
    const html = await download('html');
    expect(html.name).toBe('srpo-runs-1-2.html');
    const text = html.body.toString();
    expect(text).toContain('<svg');
    expect(text).toContain('math-quick-s2');
    expect(text).not.toMatch(/<script/);
    const md = await download('markdown');
    expect(md.body.toString()).toMatch(/## Evaluation/);
    const metrics = await download('csv-metrics');
    expect(metrics.body.toString().split('\n')[0]).toBe('run,step,key,value,wall_time');
    const events = await download('csv-events');
    expect(events.body.toString()).toMatch(/^run,step,event_id/);
    const pdf = await download('pdf');
    expect(pdf.body.subarray(0, 5).toString()).toBe('%PDF-');
    await page.waitForSelector('.last-export');
    await shot('reports');
  }, 120_000);

  it('Runs: delete asks first, then removes the run', async () => {
    await go('#/runs');
    await page.waitForSelector('tr[data-run="2"] .delete');
    await page.click('tr[data-run="2"] .delete');
    await page.waitForSelector('[role="dialog"]');
    await shot('runs-delete-confirm');
    await page.click('[role="dialog"] .confirm');
    await page.waitForFunction(() => !document.querySelector('tr[data-run="2"]'));
    expect(await page.locator('tr[data-run="1"]').count()).toBe(1);
  });

  it('breaks no CSP rule and logs no error', () => {
    expect(problems).toEqual([]);
  });
});
