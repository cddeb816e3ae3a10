/**
 * Runs as a user drives them (issue 17, items 1 and 2): the built renderer in headless Chromium
 * against web mode and real engines (as lab.test.ts).
 * - New run: a config that cannot work (nHeads 3 with dModel 64) is not "valid" and says which
 *   field; "abc" in a number field is one problem in words, not zod text; switching preset with
 *   edits asks, and keeps them (or cancels the switch).
 * - Stop mid-run shows "stopping…" until the engine acknowledges; Resume first says what it will
 *   redo (after a stop: nothing), and the resumed run keeps every committed step; the log panel
 *   holds the engine's lines and the header's last line shows in full on hover.
 * - "Clone and edit" opens New run with the run's config; a run that failed on its config offers
 *   Clone and edit, not Resume.
 * Needs the built renderer (`npm run build`). Skips without /usr/bin/chromium.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveRunConfig } from '../../src/core/config';
import type { LabService } from '../../src/core/host/labService';
import { CHROMIUM_PATH } from '../../src/server/pdf';
import type { LabServer } from '../../src/server/server';
import { ART, launchPage, openLab, prepareE2e, startLab } from './harness';

interface El {
  textContent: string | null;
  getAttribute(name: string): string | null;
}
declare const document: { querySelector(s: string): El | null; querySelectorAll(s: string): ArrayLike<El> };
declare const window: { location: { hash: string }; __statusSeen: string[] };
declare class MutationObserver {
  constructor(cb: () => void);
  observe(target: unknown, opts: { subtree: boolean; childList: boolean; characterData: boolean }): void;
}

const hasChromium = existsSync(CHROMIUM_PATH);
const TINY = {
  policies: { init: null, modelOverrides: { dModel: 32, nLayers: 1, nHeads: 2, contextLength: 192 } },
  rollout: { tasksPerStep: 2, groupSize: 2, maxNewTokens: 8 },
  eval: { every: 2, n: 2, queries: 2 },
  steps: 8,
  checkpointEvery: 10,
};

describe.skipIf(!hasChromium)('runs: stop / resume without loss, honest config validation (headless Chromium)', () => {
  let service: LabService;
  let server: LabServer;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const go = (hash: string) => page.evaluate((h) => (window.location.hash = h), hash);
  const field = (path: string) => page.locator(`.field[data-path="${path}"] input`).first();
  const fieldErrors = (path: string) => page.$$eval(`.field[data-path="${path}"] .field-error`, (els) => els.map((e) => e.textContent ?? ''));

  beforeAll(async () => {
    prepareE2e();
    ({ service, server } = await startLab('srpo-e2e-runs-'));
    ({ browser, page } = await launchPage(problems));
    await openLab(page, server);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await service?.close();
  });

  it('New run: heads that do not divide the width are refused at the field; "abc" is one problem in words', async () => {
    await go('#/new');
    await page.waitForSelector('.field[data-path="policies.modelOverrides.nHeads"] input', { timeout: 60_000 });
    await field('policies.init').fill('');
    await field('policies.modelOverrides.dModel').fill('64');
    await field('policies.modelOverrides.nHeads').fill('3');
    await page.waitForSelector('.field[data-path="policies.modelOverrides.nHeads"] .field-error');
    expect(await fieldErrors('policies.modelOverrides.nHeads')).toEqual(['nHeads (3) must divide dModel (64)']);
    expect(await page.isDisabled('.start-run')).toBe(true);
    expect(await page.textContent('.side')).not.toContain('The config is valid');

    await field('policies.modelOverrides.nHeads').fill('4');
    await field('seed').fill('abc');
    await page.waitForFunction(
      () =>
        !document.querySelector('.field[data-path="policies.modelOverrides.nHeads"] .field-error') &&
        !!document.querySelector('.field[data-path="seed"] .field-error'),
    );
    await page.waitForTimeout(400); // the lab's answer (debounced) must not add a second message
    expect(await fieldErrors('seed')).toEqual(['must be a whole number']);
    expect((await page.textContent('.form-errors'))?.trim()).toMatch(/^1 field to fix/);
    expect(await page.textContent('.side')).not.toMatch(/Invalid input|expected number/);
    await field('seed').fill('7');
    await page.waitForFunction(() => !document.querySelector('.field-error'));
  }, 60_000);

  it('New run: switching preset with edits asks, keeps the edits, or cancels the switch', async () => {
    await field('rollout.groupSize').fill('3');
    await page.waitForFunction(() => (document.querySelector('.diff')?.textContent ?? '').includes('rollout.groupSize'));
    await page.selectOption('.preset-select', 'math-k1');
    await page.waitForSelector('[role="dialog"]');
    const message = await page.textContent('[role="dialog"] p');
    expect(message).toMatch(/Switch to preset “math-k1”\? Your \d+ edits? \(.*rollout\.groupSize.*\) will be kept/);
    await page.click('[role="dialog"] .confirm');
    await page.waitForSelector('[role="dialog"]', { state: 'detached' });
    expect(await field('rollout.groupSize').inputValue()).toBe('3');
    expect(await field('seed').inputValue()).toBe('7');
    expect(await page.inputValue('.preset-select')).toBe('math-k1');
    // Cancel: the preset stays, and so do the edits.
    await page.selectOption('.preset-select', 'math-k3');
    await page.waitForSelector('[role="dialog"]');
    await page.click('[role="dialog"] .cancel');
    await page.waitForSelector('[role="dialog"]', { state: 'detached' });
    expect(await page.inputValue('.preset-select')).toBe('math-k1');
    expect(await field('rollout.groupSize').inputValue()).toBe('3');
    // Reset to preset drops them.
    await page.click('.reset-preset');
    expect(await field('rollout.groupSize').inputValue()).not.toBe('3');
  }, 60_000);

  it('Stop mid-run: "stopping…" until acknowledged; Resume says it redoes nothing and keeps every committed step', async () => {
    const { runId } = await service.call('createRun', { preset: 'math-quick', config: TINY, start: true });
    await go(`#/runs/${runId}`);
    await page.waitForFunction(() => Number(document.querySelector('[data-chart="reward/mean"] .head small')?.textContent?.split(' ')[0]) >= 2, null, {
      timeout: 90_000,
    });
    // Record every status text the header shows from here on.
    await page.evaluate(() => {
      window.__statusSeen = [];
      const el = document.querySelector('.run-status');
      new MutationObserver(() => window.__statusSeen.push(document.querySelector('.run-status')?.textContent ?? '')).observe(el, {
        subtree: true,
        childList: true,
        characterData: true,
      });
    });
    await page.click('.dashboard .stop');
    await page.waitForFunction(() => document.querySelector('.run-status')?.textContent === 'stopped', null, { timeout: 60_000 });
    const seen = await page.evaluate(() => window.__statusSeen);
    expect(seen[0]).toBe('stopping…');
    const kept = service.store.committedSteps(runId);
    expect(kept.length).toBeGreaterThanOrEqual(2);
    expect(kept.length).toBeLessThan(9);
    // The stop checkpointed the last committed step.
    expect(service.store.checkpoints(runId).map((c) => c.step)).toEqual([kept.at(-1)]);
    const keptTimes = service.store.metricSeries(runId, 'time/step').map((p) => [p.step, p.value]);

    // The log panel holds the engine's lines; the header's last line is whole on hover.
    await page.click('.log-panel summary');
    const log = (await page.textContent('.log-panel .log-lines')) ?? '';
    expect(log).toMatch(/stopped (before step \d+|during a step)/);
    expect(log).toContain('saved a checkpoint of the last committed step');
    const last = page.locator('.controls .log');
    expect(await last.getAttribute('title')).toBe(await last.textContent());

    await page.click('.dashboard .resume');
    await page.waitForSelector('[role="dialog"]');
    const plan = (await page.textContent('[role="dialog"] p')) ?? '';
    expect(plan).toContain(
      `Resume continues at step ${kept.length + 1} from the checkpoint of step ${kept.length} (after ${kept.length} updates); nothing committed is redone.`,
    );
    await page.click('[role="dialog"] .confirm');
    await page.waitForFunction(() => document.querySelector('.run-status')?.textContent === 'completed', null, { timeout: 120_000 });
    expect(service.store.committedSteps(runId)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(
      service.store
        .metricSeries(runId, 'time/step')
        .filter((p) => p.step < kept.length)
        .map((p) => [p.step, p.value]),
    ).toEqual(keptTimes);
    await page.waitForFunction(() => document.querySelector('[data-chart="reward/mean"] .head small')?.textContent?.startsWith('8 '), null, {
      timeout: 30_000,
    });
    await page.screenshot({ path: join(ART, 'runs-resumed.png'), fullPage: true });
  }, 300_000);

  it("Clone and edit opens New run with the run's config; a run failed on its config offers no Resume", async () => {
    const bad = service.store.createRun({
      name: 'bad-heads',
      config: resolveRunConfig({ steps: 3, policies: { modelOverrides: { dModel: 64, nHeads: 3 } } }),
      seed: 1,
      workflow: 'math',
      algorithm: 'srpo',
      status: 'failed',
    });
    service.store.updateRun(bad, { error: 'model config: field "nHeads" = 3: nHeads (3) must divide dModel (64)' });
    const broken = service.store.createRun({
      name: 'disk-full',
      config: resolveRunConfig({ steps: 3 }),
      seed: 1,
      workflow: 'math',
      algorithm: 'srpo',
      status: 'failed',
    });
    service.store.updateRun(broken, { error: 'ENOSPC: no space left on device' });
    await go('#/runs');
    await page.reload();
    await page.waitForSelector(`tr[data-run="${bad}"]`);
    expect(await page.locator(`tr[data-run="${bad}"] .resume`).count()).toBe(0);
    expect(await page.locator(`tr[data-run="${bad}"] .clone.primary`).count()).toBe(1);
    expect(await page.locator(`tr[data-run="${broken}"] .resume`).count()).toBe(1);

    const first = 1; // the stopped-and-resumed run of the test above: steps 8, tiny shape
    await page.click(`tr[data-run="${first}"] .clone`);
    await page.waitForSelector('.clone-of', { timeout: 60_000 });
    expect(await page.textContent('.clone-of')).toContain(`copy of run ${first}`);
    await page.waitForFunction(() => (document.querySelector('.field[data-path="steps"] input') as unknown as { value: string } | null)?.value === '8');
    expect(await field('policies.modelOverrides.dModel').inputValue()).toBe('32');
    expect(await field('checkpointEvery').inputValue()).toBe('10');
    expect(await field('name').inputValue()).toBe('');
    await page.waitForFunction(
      () => !document.querySelector('.field-error') && (document.querySelector('.side')?.textContent ?? '').includes('The config is valid'),
    );
    expect(problems).toEqual([]);
  }, 60_000);
});
