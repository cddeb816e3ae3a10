/**
 * The chart workspace and the reports as a user drives them: the built renderer in headless
 * Chromium (Debian's chromium + playwright-core, as lab.test.ts) against web mode, over runs
 * written straight into the store (no engine: the data are what is under test). Dashboard:
 * metric search adds a panel, smoothing / x axis / log scale / panels go into the URL, a fresh
 * tab opened on that URL shows the same view, leaving and coming back keeps it, per-panel CSV and
 * PNG downloads, s/step, the light theme under prefers-color-scheme: light, an open's User Timing
 * marks in order (support/viewTiming). Compare: evaluation
 * curves drawn raw (the tooltip shows the stored 0.388, no EMA), a stopped run's step-0
 * evaluation marked "not final", any metric added by search, a legend click hiding a run's raw
 * line and its EMA together. Reports: the HTML report laid out for print (A4) in Chromium and
 * screenshotted (test-artifacts/report-print.png, looked at by hand; no PDF rasteriser on the
 * build machines), with its figure structure checked. Skips without /usr/bin/chromium.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveRunConfig } from '../../src/core/config';
import type { LabService } from '../../src/core/host/labService';
import type { EvaluationRecord } from '../../src/core/store/records';
import { CHROMIUM_PATH } from '../../src/server/pdf';
import type { LabServer } from '../../src/server/server';
import { ART, launchPage, openLab, prepareE2e, startLab } from './harness';

// Browser globals used inside page callbacks (this file is type-checked without the DOM lib).
interface El {
  textContent: string | null;
  value: string;
}
declare const document: { querySelector(s: string): El | null; querySelectorAll(s: string): ArrayLike<El> & Iterable<El>; body: El };
declare const window: { location: { hash: string }; getComputedStyle(e: El): { backgroundColor: string; color: string } };

/** sRGB channels in [0, 1] of a computed colour: `rgb(r, g, b)`, `rgba(...)` or `color(srgb r g b)` (what color-mix computes to). */
function srgb(css: string): [number, number, number] {
  const m = /^rgba?\(([^)]+)\)$/.exec(css);
  if (m)
    return m[1]
      .split(',')
      .slice(0, 3)
      .map((v) => Number(v) / 255) as [number, number, number];
  const c = /^color\(srgb ([\d.e-]+) ([\d.e-]+) ([\d.e-]+)/.exec(css);
  if (c) return [Number(c[1]), Number(c[2]), Number(c[3])];
  throw new Error(`unparsed colour ${css}`);
}

/** WCAG 2 contrast ratio of two computed colours (1 to 21). */
function contrast(a: string, b: string): number {
  const lum = (rgb: [number, number, number]) => {
    const [r, g, bl] = rgb.map((v) => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(srgb(a)), lum(srgb(b))].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

const hasChromium = existsSync(CHROMIUM_PATH);
const STEPS = 8;
/** Metric keys of the synthetic runs besides the dashboard's own (the search has something to find). */
const EXTRA_KEYS = Array.from({ length: 60 }, (_, i) => `time/phase_${String(i).padStart(2, '0')}`);

const evaluation = (avg: number): EvaluationRecord => ({
  benchmark: 'arith-chain',
  n: 4,
  queries: 40,
  avgAtN: avg,
  passAtN: Math.min(1, avg + 0.2),
  tokensPerQuery: 30,
  callsPerQuery: 1,
  toolCallsPerQuery: 0,
  successesPerMTok: 1,
  latencyP50Ms: 5,
  latencyP95Ms: 9,
});

describe.skipIf(!hasChromium)('charts and reports in headless Chromium (web mode, synthetic runs)', () => {
  let service: LabService;
  let server: LabServer;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const runs: Record<'a' | 'b' | 'c', number> = { a: 0, b: 0, c: 0 };
  const go = (p: Page, hash: string) => p.evaluate((h) => (window.location.hash = h), hash);
  const download = async (p: Page, selector: string) => {
    const [d] = await Promise.all([p.waitForEvent('download', { timeout: 30_000 }), p.click(selector)]);
    return { name: d.suggestedFilename(), body: readFileSync((await d.path())!) };
  };

  /**
   * A run of STEPS training steps 60 s apart (so its wall-time axis spans minutes), evaluated at
   * `evals` (step -> Avg@4); `stoppedAt`: the run stopped after that many steps.
   */
  function writeRun(name: string, seed: number, evals: Record<number, number>, stoppedAt = STEPS, queries = 40): number {
    const store = service.store;
    const runId = store.createRun({
      name,
      config: resolveRunConfig({ steps: STEPS, seed, eval: { every: 4, n: 4, queries } }),
      seed,
      workflow: 'math',
      algorithm: 'srpo',
      status: stoppedAt < STEPS ? 'stopped' : 'completed',
    });
    for (let step = 0; step <= Math.min(stoppedAt, STEPS); step++) {
      const metrics: Record<string, number> = {};
      if (step < Math.min(stoppedAt, STEPS)) {
        metrics['reward/mean'] = 0.1 + 0.05 * step + 0.02 * seed + (step % 2 ? 0.08 : -0.08);
        metrics['grad/norm'] = 1 / (step + 1);
        metrics['clip/frac_high'] = 0.01 * step;
        metrics['loss/total'] = 0.5 - 0.03 * step;
        for (const k of EXTRA_KEYS) metrics[k] = step;
      }
      const ev = evals[step];
      if (ev !== undefined) {
        metrics['eval/macro/avg'] = ev;
        metrics['eval/arith-chain/avg'] = ev;
      }
      if (!Object.keys(metrics).length) continue;
      store.writeStep(runId, {
        step,
        wallTime: 1_700_000_000_000 + seed * 7 + step * 60_000,
        metrics,
        episodes: [],
        tokens: false,
        evaluations: ev === undefined ? [] : [evaluation(ev)],
      });
    }
    return runId;
  }

  beforeAll(async () => {
    prepareE2e();
    ({ service, server } = await startLab('srpo-e2e-charts-'));
    // Two seeds of one config (completed, evaluated at 0, 4 and 8) and a stopped run evaluated only at step 0.
    runs.a = writeRun('quick-s1', 1, { 0: 0.1, 4: 0.2, 8: 0.388 });
    runs.b = writeRun('quick-s2', 2, { 0: 0.12, 4: 0.25, 8: 0.3 });
    runs.c = writeRun('stopped-s1', 3, { 0: 0.05 }, 3, 41); // another config (eval.queries): its own table row
    ({ browser, page } = await launchPage(problems, { acceptDownloads: true, colorScheme: 'dark' }));
    await openLab(page, server);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await service?.close();
  });

  it('Dashboard: the metric search finds a key among ~70 and adds its panel', async () => {
    await go(page, `#/runs/${runs.a}`);
    await page.waitForSelector('[data-chart="reward/mean"] canvas');
    await page.click('.metric-search-input');
    await page.fill('.metric-search-input', 'phase 4');
    await page.waitForSelector('.metric-matches li');
    const listed = await page.$$eval('.metric-matches li', (els) => els.map((e) => e.textContent));
    expect(listed).toContain('time/phase_04');
    expect(listed.every((k) => k!.includes('phase') && k!.includes('4'))).toBe(true);
    await page.click('.metric-matches li[data-key="time/phase_42"]');
    await page.waitForSelector('[data-chart="time/phase_42"] canvas');
    expect(await page.textContent('[data-chart="time/phase_42"] .head small.points')).toMatch(/^8 pts/);
    // A readable title from the metric catalogue, the key beside it and the unit of its y axis.
    expect(await page.textContent('[data-chart="time/phase_42"] .head .title')).toBe('Time: phase_42');
    expect(await page.textContent('[data-chart="time/phase_42"] .head .unit')).toMatch(/· s$/);
    expect(await page.textContent('[data-chart="reward/mean"] .head .title')).toBe('Training reward (mean per episode)');
    // Every panel's head is one line: a long key list gives way (ellipsis), the unit, the counts and the buttons never wrap.
    const heads = await page.$$eval('[data-chart] .head', (els) => els.map((e) => e.getBoundingClientRect().height));
    expect(heads.length).toBeGreaterThan(8);
    expect(Math.max(...heads) - Math.min(...heads), JSON.stringify(heads)).toBeLessThan(1);
    // A metric that already has a panel of its own is not offered again.
    await page.fill('.metric-search-input', 'reward');
    await page.waitForTimeout(100);
    expect(await page.$$eval('.metric-matches li', (els) => els.map((e) => e.textContent))).not.toContain('reward/mean');
    // Enter adds the first match.
    await page.fill('.metric-search-input', 'frac_high');
    await page.press('.metric-search-input', 'Enter');
    await page.waitForSelector('[data-chart="clip/frac_high"] canvas');
  });

  it('Dashboard: a panel without points says so and counts nothing; a panel with points counts them', async () => {
    await go(page, `#/runs/${runs.a}`);
    await page.waitForSelector('[data-chart="reward/mean"] canvas');
    // The synthetic run records no entropy: its panel is empty (decision 081: no count, no layer of its own).
    expect(await page.textContent('[data-chart="entropy"] .empty')).toBe('no data yet');
    expect(await page.$$('[data-chart="entropy"] .head small.points')).toHaveLength(0);
    expect(await page.$$('[data-chart="entropy"] canvas')).toHaveLength(0);
    expect(await page.textContent('[data-chart="reward/mean"] .head small.points')).toBe(`${STEPS} pts`);
  });

  it("Dashboard: an open's User Timing marks come in order: the route, the view mounted, the charts' first draw", async () => {
    await go(page, '#/runs');
    await page.waitForSelector('.runs-view');
    await page.evaluate('performance.clearMarks(); performance.clearMeasures()');
    await go(page, `#/runs/${runs.a}`);
    await page.waitForSelector('[data-chart="reward/mean"] canvas');
    // [name, detail] of the marks and measures an open leaves, in time order (support/viewTiming, charts/firstDraw;
    // not the idle-time chart warm-up's, which may come at any moment).
    const names = ['srpo-lab:route', 'srpo-lab:view-mounted', 'srpo-lab:first-draw'];
    const entries = (await page.evaluate(
      `[...performance.getEntriesByType('mark'), ...performance.getEntriesByType('measure')].filter((e) => ${JSON.stringify(names)}.includes(e.name)).sort((a, b) => a.startTime - b.startTime).map((e) => [e.name, e.detail])`,
    )) as [string, Record<string, unknown>][];
    // A first open can draw in more than one batch (panels whose series come later); only draws follow the mount.
    expect(entries.slice(0, 3).map(([name]) => name)).toEqual(names);
    expect(new Set(entries.slice(3).map(([name]) => name))).toEqual(new Set(entries.length > 3 ? ['srpo-lab:first-draw'] : []));
    expect(entries[0][1]).toEqual({ path: `/runs/${runs.a}` });
    expect(entries[1][1]).toEqual({ view: 'dashboard' });
  });

  it('Dashboard: smoothing, axes and panels are in the URL, reproduced by a fresh tab, kept when leaving', async () => {
    await page.selectOption('.x-axis', 'time');
    await page.selectOption('.y-scale', 'log');
    await page.$eval('.smoothing', (e) => {
      const input = e as unknown as { value: string; dispatchEvent(ev: unknown): void };
      input.value = '0.85';
      input.dispatchEvent(new (globalThis as unknown as { Event: new (t: string) => unknown }).Event('input'));
    });
    await page.waitForFunction(() => window.location.hash.includes('smooth=0.85'));
    const hash = await page.evaluate(() => window.location.hash);
    const q = new URLSearchParams(hash.split('?')[1]);
    expect(q.get('x')).toBe('time');
    expect(q.get('y')).toBe('log');
    expect(q.get('panels')).toBe('time/phase_42,clip/frac_high');
    await page.screenshot({ path: join(ART, 'dashboard-workspace.png'), fullPage: true });
    // A shared link: a fresh tab with nothing remembered (a new context) shows the same view.
    const other = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const tab = await other.newPage();
    await tab.goto(`${server.url}${hash}`);
    await tab.waitForSelector('[data-chart="clip/frac_high"] canvas', { timeout: 30_000 });
    expect(await tab.$eval('.x-axis', (e) => e.value)).toBe('time');
    expect(await tab.$eval('.y-scale', (e) => e.value)).toBe('log');
    expect(await tab.$eval('.smoothing', (e) => e.value)).toBe('0.85');
    await other.close();
    // Leaving the view and opening it again without parameters keeps the view.
    await go(page, '#/runs');
    await page.waitForSelector('.runs-view');
    await go(page, `#/runs/${runs.b}`);
    await page.waitForSelector('[data-chart="time/phase_42"] canvas');
    expect(await page.$eval('.x-axis', (e) => e.value)).toBe('time');
    expect(await page.evaluate(() => window.location.hash)).toContain('panels=');
    // Back to the defaults for the next tests.
    await page.selectOption('.x-axis', 'step');
    await page.selectOption('.y-scale', 'linear');
  });

  it('Dashboard: each panel downloads its points as CSV and itself as PNG; s/step shown', async () => {
    await page.hover('[data-chart="reward/mean"]');
    const csv = await download(page, '[data-chart="reward/mean"] .download-csv');
    expect(csv.name).toBe('reward-mean.csv');
    const lines = csv.body.toString().trim().split('\n');
    expect(lines[0]).toBe('run,step,key,value,wall_time');
    expect(lines).toHaveLength(1 + STEPS);
    // step: updates done, as on the chart: the first update's reward is step 1 (store record 0).
    expect(lines[1].split(',').slice(0, 3)).toEqual([String(runs.b), '1', 'reward/mean']);
    const png = await download(page, '[data-chart="reward/mean"] .download-png');
    expect(png.name).toBe('reward-mean.png');
    expect([...png.body.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(png.body.length).toBeGreaterThan(5000);
    // Steps 60 s apart.
    expect(await page.textContent('.pace')).toMatch(/^60 s\/step/);
  });

  it('follows the system colour scheme: a light page under prefers-color-scheme: light', async () => {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.waitForFunction(() => window.getComputedStyle(document.body).backgroundColor === 'rgb(244, 246, 249)');
    await page.screenshot({ path: join(ART, 'dashboard-light.png'), fullPage: true });
    // The run picker of Compare and Reports: the run's name readable in both themes (it once sat on a fixed dark chip).
    await go(page, `#/compare?runs=${runs.a}`);
    const pickColours = () =>
      page.$eval(`.pick[data-pick="${runs.a}"]`, (e) => {
        const st = window.getComputedStyle(e as unknown as El);
        return { text: (e as unknown as El).textContent ?? '', color: st.color, background: st.backgroundColor };
      });
    const light = await pickColours();
    expect(light.text).toContain('quick-s1');
    expect(contrast(light.color, light.background), JSON.stringify(light)).toBeGreaterThanOrEqual(4.5);
    await page.screenshot({ path: join(ART, 'compare-picker-light.png') });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForFunction(() => window.getComputedStyle(document.body).backgroundColor === 'rgb(16, 19, 26)');
    const dark = await pickColours();
    expect(contrast(dark.color, dark.background), JSON.stringify(dark)).toBeGreaterThanOrEqual(4.5);
    await page.screenshot({ path: join(ART, 'compare-picker-dark.png') });
  });

  it('Compare: evaluations drawn raw, a stopped run not "final", any metric, the legend hides raw and EMA together', async () => {
    await go(page, `#/compare?runs=${runs.a},${runs.c}`);
    // Each run's evaluations arrive on their own; wait until both runs have a row.
    await page.waitForFunction(() => {
      const texts = [...document.querySelectorAll('.eval-table tbody tr')].map((e) => e.textContent ?? '');
      return texts.some((t) => t.includes('stopped')) && texts.some((t) => t.includes('quick'));
    });
    const rows = await page.$$eval('.eval-table tbody tr', (els) => els.map((e) => e.textContent ?? ''));
    expect(rows.find((r) => r.includes('stopped'))).toContain('step 0 (not final)');
    expect(rows.find((r) => r.includes('quick'))).toContain('final');
    // The eval curve's last point, under the pointer at the plot's right edge: the stored value.
    const evalChart = '[data-chart="eval/macro/avg"]';
    await page.waitForSelector(`${evalChart} canvas`);
    const box = (await page.locator(`${evalChart} canvas`).first().boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.move(box.x + box.width - 47, box.y + box.height / 2);
    await page.waitForSelector(`${evalChart} div[style*="position: absolute"]:has-text("step 8")`, { timeout: 10_000 });
    const tip = (await page.locator(`${evalChart} div:has-text("step 8")`).last().textContent()) ?? '';
    expect(tip).toContain('0.388');
    expect(tip).not.toContain('EMA');
    // Any metric: one of the runs' own keys, found by search.
    await page.fill('.metric-search-input', 'phase_07');
    await page.press('.metric-search-input', 'Enter');
    await page.waitForSelector('[data-chart="time/phase_07"] canvas');
    expect(await page.textContent('[data-chart="time/phase_07"] .head small.points')).toMatch(/^8 \/ 3 pts/);
    await page.screenshot({ path: join(ART, 'compare-workspace.png'), fullPage: true });
    // The legend: a click on run 1's entry hides its raw line and its EMA (the tooltip lists neither).
    const reward = '[data-chart="reward/mean"]';
    const rbox = (await page.locator(`${reward} canvas`).first().boundingBox())!;
    const tipRows = async () => {
      await page.mouse.move(rbox.x + rbox.width / 2, rbox.y + rbox.height / 2);
      await page.mouse.move(rbox.x + rbox.width / 2 + 3, rbox.y + rbox.height / 2 + 3);
      await page.waitForTimeout(300);
      return (await page.locator(`${reward} div:has-text("step ")`).last().textContent()) ?? '';
    };
    const before = await tipRows();
    expect(before.match(new RegExp(`${runs.a} quick-s1`, 'g'))?.length).toBe(2); // raw and EMA
    expect(before).toContain('(EMA)');
    // The legend sits centred in the top 20 px: click along it until run 1's entry toggles.
    let toggled = false;
    for (let x = rbox.x + rbox.width * 0.2; x < rbox.x + rbox.width * 0.8 && !toggled; x += 12) {
      await page.mouse.click(x, rbox.y + 7);
      const now = await tipRows();
      if (!now.includes(`${runs.a} quick-s1`)) toggled = true;
      else if (!now.includes(`${runs.c} stopped-s1`)) await page.mouse.click(x, rbox.y + 7); // the other entry: undo
    }
    expect(toggled).toBe(true);
    const after = await tipRows();
    expect(after).not.toContain(`${runs.a} quick-s1`);
    expect(after).toContain(`${runs.c} stopped-s1`);
  }, 60_000);

  it('Reports: figures with axes, gridlines, legend beside the plot, seeds as a band, percentages; laid out for print', async () => {
    const runIds = [runs.a, runs.b, runs.c];
    // A run name as long as real ones get: it must stay on one line in the printed runs table.
    service.store.db.raw.prepare('UPDATE runs SET name = ? WHERE id = ?').run('stopped-ablation-no-kl-lr5e-4-groups-8-long-name-s1', runs.c);
    const file = await service.call('exportReport', { runIds, format: 'html' });
    const html = file.content;
    expect(html).toContain('arith-chain Avg@4');
    expect(html).toContain('step 0 (not final)');
    expect(html).toContain('quick (2 seeds)');
    expect(html).toMatch(/class="band"/);
    expect(html).toContain('eval/macro/avg (%)');
    expect(html).toContain('class="legend-entry"');
    // The printable width of A4 with the report's 10 mm margins: 190 mm = 718 CSS px.
    const print = await browser.newPage({ viewport: { width: 718, height: 1123 } });
    await print.setContent(html, { waitUntil: 'load' });
    await print.emulateMedia({ media: 'print' });
    await print.screenshot({ path: join(ART, 'report-print.png'), fullPage: true });
    // Run names on one line in the runs table (as printed).
    const heights = await print.$$eval('.nowrap table tbody tr', (trs) =>
      trs.map((tr) => (tr as unknown as { getBoundingClientRect(): { height: number } }).getBoundingClientRect().height),
    );
    expect(Math.max(...heights)).toBeLessThan(24);
    // ... and the tables still fit the page.
    const widths = await print.$$eval('.nowrap table', (ts) =>
      ts.map((t) => (t as unknown as { getBoundingClientRect(): { width: number } }).getBoundingClientRect().width),
    );
    for (const w of widths) expect(w).toBeLessThanOrEqual(718);
    await print.close();
  }, 60_000);

  it('Dashboard: a reopen draws what it last showed at once, and reads it again once its first frame is on screen', async () => {
    const runId = writeRun('reopened', 4, {}, 3);
    const count = '[data-chart="reward/mean"] .head small';
    await go(page, `#/runs/${runId}`);
    await page.waitForFunction((sel) => document.querySelector(sel)?.textContent === '3 pts', count);
    await go(page, '#/runs');
    await page.waitForSelector('.runs-view');
    // A step committed while the dashboard was closed.
    service.store.writeStep(runId, {
      step: 3,
      wallTime: 1_700_000_000_000 + 28 + 3 * 60_000,
      metrics: { 'reward/mean': 0.9 },
      episodes: [],
      tokens: false,
      evaluations: [],
    });
    // In the page: the count the chart first shows, when its text became 4 pts, and the title's
    // mark with its Element Timing entry (when the first frame was presented).
    const seen = (await page.evaluate(`new Promise((resolve, reject) => {
      const marks = new Map();
      new PerformanceObserver((l) => { for (const e of l.getEntries()) marks.set(e.identifier, e.renderTime); }).observe({ type: 'element', buffered: true });
      let first = null;
      const check = () => {
        const text = document.querySelector(${JSON.stringify(count)})?.textContent ?? null;
        if (text && first === null) first = text;
        if (text !== '4 pts') return;
        observer.disconnect();
        const at = performance.now();
        const mark = document.querySelector('.dashboard h2')?.getAttribute('elementtiming') ?? '';
        setTimeout(() => resolve({ first, at, mark, presented: marks.get(mark) ?? null }), 50);
      };
      const observer = new MutationObserver(check);
      observer.observe(document.body, { subtree: true, childList: true, characterData: true });
      setTimeout(() => reject(new Error('the reopened dashboard never showed 4 pts')), 20000);
      window.location.hash = '#/runs/${runId}';
    })`)) as { first: string; at: number; mark: string; presented: number | null };
    expect(seen.first).toBe('3 pts'); // drawn from the last open, before any request
    expect(seen.mark).toMatch(/^srpo-view-\d+$/);
    expect(seen.presented).not.toBeNull(); // the browser reported the title's first paint ...
    expect(seen.at).toBeGreaterThan(seen.presented!); // ... and the new point came after it
  });

  it('logs no error and breaks no CSP rule', () => {
    expect(problems).toEqual([]);
  });
});
