/**
 * Issue 30 points 4, 5 and 6 as a user meets them, on real runs (forked engines, web mode,
 * headless Chromium):
 * - one step number (updates done) on every surface of one real 2-step Hugging Face run (tiny
 *   Qwen3, LoRA, evaluation every step): `show`'s checkpoints and final evaluation, `eval
 *   --checkpoint N`'s header and table, `export-model --step N`'s message, the resume plan, the
 *   series API's last x for a training and an evaluation metric, the trace's last training step
 *   and evaluation steps, the dashboard's summary: all say 2;
 * - a run with evaluation off (eval.every = 0): `show` says "off" (no "none yet", no final
 *   evaluation claimed, no eval-only record's time/step), one backend line, a Hugging Face run's
 *   model folder and architecture; the dashboard has no evaluation panels and its summary says
 *   "evaluation off";
 * - health: a random-weight run whose stored groups/zero_std_frac is 1 at every step shows the
 *   "No learning signal" warning with its cause on the dashboard and in `show`.
 * Screenshots of the dashboard summary in both themes: test-artifacts/steps-*.png.
 * Needs `npx electron-vite build` (out/renderer) and /usr/bin/chromium; skips, saying so, without Chromium.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LabService } from '../../src/core/host/labService';
import { resumePlanFor } from '../../src/core/host/runs';
import { CHROMIUM_PATH } from '../../src/server/pdf';
import type { LabServer } from '../../src/server/server';
import type { RunSummary } from '../../src/shared/api';
import { hfRunConfig, tinyQwenFolder } from '../core/train/hfFixture';
import { runCliCaptured } from '../cli/harness';
import { allEvents, ART, launchPage, openLab, prepareE2e, startLab } from './harness';

interface El {
  textContent: string | null;
}
declare const document: { querySelector(s: string): El | null; querySelectorAll(s: string): ArrayLike<El> };

const hasChromium = existsSync(CHROMIUM_PATH);
if (!hasChromium) console.warn(`[e2e] skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`);

/** The lab's tiny random-weight model: every reward of a group equal (no learning signal). */
const TINY_RANDOM = {
  steps: 2,
  seed: 3,
  policies: { init: null, modelOverrides: { dModel: 32, nLayers: 1, nHeads: 2, contextLength: 192 } },
  rollout: { tasksPerStep: 2, groupSize: 3, maxNewTokens: 8 },
  update: { epochs: 1, miniBatches: 1 },
  eval: { every: 0, n: 2, queries: 2 },
};

const cli = runCliCaptured;

describe.skipIf(!hasChromium)('one step number, evaluation off, health warnings (real runs, web mode)', () => {
  let service: LabService;
  let server: LabServer;
  let browser: Browser;
  let page: Page;
  let dbPath: string;
  let hfDir: string;
  let hf: number;
  let hfOff: number;
  let random: number;
  const problems: string[] = [];
  const go = (hash: string) => page.evaluate((h) => ((globalThis as unknown as { location: { hash: string } }).location.hash = h), hash);

  async function waitDone(id: number): Promise<RunSummary> {
    const until = Date.now() + 400_000;
    for (;;) {
      const r = (await service.call('listRuns', {})).find((x) => x.id === id)!;
      if (r.status === 'completed') return r;
      if (r.status === 'failed') throw new Error(`run ${id} failed: ${r.error}`);
      if (Date.now() > until) throw new Error(`run ${id}: timed out (status ${r.status}, lastStep ${r.lastStep})`);
      await new Promise((ok) => setTimeout(ok, 250));
    }
  }

  beforeAll(async () => {
    prepareE2e();
    ({ dbPath, service, server } = await startLab('srpo-e2e-steps-'));
    hfDir = tinyQwenFolder();
    // A 2-step Hugging Face run evaluated before each update and at the end (steps 0, 1, 2).
    const evaluated = hfRunConfig(hfDir, { steps: 2, eval: { every: 1, n: 2, queries: 2 } }) as unknown as Record<string, unknown>;
    ({ runId: hf } = await service.call('createRun', { preset: 'math-quick', config: { ...evaluated, name: 'hf-eval' }, start: true }));
    await waitDone(hf);
    // The same with evaluation off (hfRunConfig's default), and the lab's random-weight tiny model.
    const off = hfRunConfig(hfDir, { steps: 2 }) as unknown as Record<string, unknown>;
    ({ runId: hfOff } = await service.call('createRun', { preset: 'math-quick', config: { ...off, name: 'hf-eval-off' }, start: true }));
    await waitDone(hfOff);
    ({ runId: random } = await service.call('createRun', { preset: 'math-quick', config: { ...TINY_RANDOM, name: 'random-tiny' }, start: true }));
    await waitDone(random);
    ({ browser, page } = await launchPage(problems, { viewport: { width: 1400, height: 900 } }));
    await openLab(page, server);
  }, 900_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await service?.close();
  });

  it('a 2-step run says 2 everywhere: show, eval --checkpoint 2, export-model --step 2, the resume plan, the series and the trace', async () => {
    const db = ['--db', dbPath];
    const show = await cli(['show', String(hf), ...db]);
    expect(show.code, show.err).toBe(0);
    expect(show.out).toMatch(/progress\s+2\/2 steps \(updates committed and the final evaluation\)/);
    expect(show.out).toMatch(/checkpoints steps 1, 2 \(the updates each holds; eval --checkpoint N and export-model --step N take these\)/);
    expect(show.out).toMatch(/final eval Avg@2 \S+, Pass@2 \S+ at step 2 \(after 2 updates\)/);

    const ev = await cli(['eval', String(hf), '--checkpoint', '2', ...db]);
    expect(ev.code, ev.err).toBe(0);
    expect(ev.out).toMatch(/^run \d+, checkpoint of step 2 /);
    expect(ev.out).toMatch(/\n\s*2\s+arith-easy\s/); // the table's step label: 2, as show lists it
    const refused = await cli(['eval', String(hf), '--checkpoint', '3', ...db]);
    expect(refused.err).toMatch(/has no checkpoint at step 3 \(--checkpoint\); checkpoints at steps 1, 2/);

    const out = join(dbPath, '..', 'adapter-2');
    const ex = await cli(['export-model', String(hf), '--step', '2', '--out', out, ...db]);
    expect(ex.code, ex.err).toBe(0);
    expect(ex.out).toMatch(/^wrote the LoRA adapter of policy "shared" of the checkpoint of step 2 \(after 2 updates\)/);

    const plan = resumePlanFor(service.store, hf);
    expect(plan.checkpointStep).toBe(2);
    expect(plan.text).toMatch(/from the checkpoint of step 2 \(after 2 updates\)/);

    const series = await service.call('metricSeries', { runId: hf, keys: ['reward/mean', 'eval/macro/avg', 'time/step'] });
    expect(series['reward/mean'].map((p) => p.step)).toEqual([1, 2]); // updates 1 and 2
    expect(series['eval/macro/avg'].map((p) => p.step)).toEqual([0, 1, 2]); // after 0, 1 and 2 updates
    expect(series['time/step'].at(-1)!.step).toBe(2); // the eval-only record's time is no update's

    const train = await allEvents(service, hf, { split: 'train' });
    expect(Math.min(...train.map((e) => e.step))).toBe(1);
    expect(Math.max(...train.map((e) => e.step))).toBe(2);
    expect([...new Set((await allEvents(service, hf, { split: 'eval' })).map((e) => e.step))]).toEqual([0, 1, 2]);
    // The trace's step filter takes the same number: step 2's training events are the last update's.
    const step2 = await allEvents(service, hf, { split: 'train', fromStep: 2, toStep: 2 });
    expect(step2.length).toBeGreaterThan(0);
    expect(step2.every((e) => e.step === 2)).toBe(true);

    await go(`#/runs/${hf}`);
    await page.waitForSelector('.run-summary [data-outcome="final eval"]');
    await page.waitForFunction(() =>
      /at step 2 \(after 2 updates\)/.test(document.querySelector('.run-summary [data-outcome="final eval"]')?.textContent ?? ''),
    );
    expect(await page.textContent('.run-summary [data-outcome="ended by"]')).toBe('its step count (2 steps done)');
  }, 300_000);

  it('evaluation off: show says off, one backend line, the HF model folder; the dashboard has no evaluation panels', async () => {
    const show = await cli(['show', String(hfOff), '--db', dbPath]);
    expect(show.code, show.err).toBe(0);
    expect(show.out).toMatch(/progress\s+2\/2 steps \(updates committed; evaluation off\)/);
    expect(show.out).toMatch(/eval\s+off \(eval\.every = 0\)/);
    expect(show.out).toMatch(/final eval evaluation off \(eval\.every = 0\)/);
    expect(show.out).toMatch(/evaluations: off \(eval\.every = 0\)/);
    expect(show.out).not.toMatch(/none yet|and the final evaluation/);
    expect(show.out).toMatch(new RegExp(`policies\\s+shared, Hugging Face model ${hfDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(qwen3\\), LoRA r 2`));
    expect(show.out).not.toMatch(/model tiny/);
    expect(show.out.match(/backend /g)).toHaveLength(1);
    expect(show.out).toMatch(/preset\s+math-quick; backend wasm\n/);
    expect(show.out).not.toMatch(/time\/step\s+\S+\s+\(step 3\)/); // no stray eval-only record

    await go(`#/runs/${hfOff}`);
    await page.waitForSelector('.run-summary [data-outcome="final eval"]');
    expect(await page.textContent('.run-summary [data-outcome="final eval"]')).toBe('evaluation off (eval.every = 0)');
    await page.waitForSelector('[data-chart="reward/mean"]');
    expect(await page.locator('[data-chart^="eval "]').count()).toBe(0);
  }, 120_000);

  it('no learning signal: the dashboard and show warn, saying what was measured and the usual cause (both themes)', async () => {
    const zeroStd = service.store.metricSeries(random, 'groups/zero_std_frac').map((p) => p.value);
    expect(zeroStd.length).toBe(2);
    // A random-weight model: every group's rewards are equal at both steps (what the warning reads).
    expect(zeroStd).toEqual([1, 1]);
    const show = await cli(['show', String(random), '--db', dbPath]);
    expect(show.out).toMatch(/health:\n\s+warning: No learning signal: groups\/zero_std_frac = 1 for 2 consecutive steps \(1-2\)/);
    await go(`#/runs/${random}`);
    await page.waitForSelector('.health-warning[data-check="no-signal"]');
    expect(await page.textContent('.health-warning[data-check="no-signal"] .cause')).toMatch(/random-weight model gives every episode the same reward/);
    for (const scheme of ['dark', 'light'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.waitForTimeout(300);
      await page.screenshot({ path: join(ART, `steps-summary-health-${scheme}.png`), clip: { x: 0, y: 0, width: 1400, height: 520 } });
    }
    await go(`#/runs/${hf}`);
    await page.waitForSelector('.run-summary [data-outcome="final eval"]');
    for (const scheme of ['dark', 'light'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.waitForTimeout(300);
      await page.screenshot({ path: join(ART, `steps-summary-${scheme}.png`), clip: { x: 0, y: 0, width: 1400, height: 520 } });
    }
    await page.emulateMedia({ colorScheme: 'dark' });
  }, 60_000);

  it('logs no error in the page', () => {
    expect(problems).toEqual([]);
  });
});
