/**
 * The New run form as a user sees it (issue 30, points 8 and 9), in headless Chromium against web
 * mode (the built renderer in out/renderer; no engine is started):
 * - task lists show the preset's tasks (math-quick: arith-chain) and can be edited as lists: a
 *   built-in added, a dataset file added with its fields, a row removed;
 * - `workflow.options` is one field per option of the chosen workflow (a K mode's own fields
 *   while that mode is chosen; another workflow's options when the workflow changes), no JSON box;
 * - every field's help text is on screen, and names break at dots, never inside a word;
 * - "Changes from PRESET" lists every edit, the invalid ones marked, never "none" while edits stand;
 * - LoRA on the lab's own model is refused at its field, with the fix.
 * Screenshots of the form in both themes go to test-artifacts/. Needs `npx electron-vite build`;
 * skips without /usr/bin/chromium.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LabService } from '../../src/core/host/labService';
import { CHROMIUM_PATH } from '../../src/server/pdf';
import type { LabServer } from '../../src/server/server';
import { ART, launchPage, openLab, prepareE2e, startLab } from './harness';

interface El {
  textContent: string | null;
  value?: string;
  getClientRects(): ArrayLike<unknown>;
}
declare const document: { querySelector(s: string): El | null; querySelectorAll(s: string): ArrayLike<El> };
declare const window: { location: { hash: string } };

const hasChromium = existsSync(CHROMIUM_PATH);
const f = (path: string) => `.field[data-path="${path}"]`;

describe.skipIf(!hasChromium)('New run form: every field shown and editable, help visible, every edit counted (headless Chromium)', () => {
  let service: LabService;
  let server: LabServer;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  /** A fresh form on math-quick. */
  async function openForm(): Promise<void> {
    await page.evaluate(() => (window.location.hash = '#/runs'));
    await page.waitForSelector('.runs-view');
    await page.evaluate(() => (window.location.hash = '#/new?preset=math-quick'));
    await page.waitForSelector(`${f('rollout.groupSize')} input`);
    await page.waitForFunction(() => (document.querySelector('.side')?.textContent ?? '').includes('The config is valid'), undefined, { timeout: 30_000 });
  }
  const changeRows = () =>
    page.$$eval('.diff tr', (rows) => rows.map((r) => ({ path: r.getAttribute('data-path'), invalid: r.classList.contains('invalid') })));

  beforeAll(async () => {
    prepareE2e();
    ({ service, server } = await startLab('srpo-e2e-newrun-'));
    ({ browser, page } = await launchPage(problems, { viewport: { width: 1400, height: 900 } }, false));
    await openLab(page, server);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await service?.close();
  });

  it("task lists show the preset's tasks and edit as lists: add a built-in, add a dataset file, remove a row", async () => {
    await openForm();
    const train = f('tasks.train');
    expect(await page.$$eval(`${train} .task-name`, (els) => els.map((e) => (e as unknown as { value: string }).value))).toEqual(['arith-chain']);
    expect(await page.$$eval(`${f('tasks.eval')} .task-name`, (els) => els.map((e) => (e as unknown as { value: string }).value))).toEqual(['arith-chain']);
    // A second built-in task, chosen from the registry's names.
    await page.click(`${train} .add-builtin`);
    await page.locator(`${train} .task-row[data-index="1"] .task-name`).selectOption('kb-single');
    // A dataset file that does not exist: refused at the task list, naming the row's field.
    await page.click(`${train} .add-dataset`);
    await page.locator(`${train} .task-row[data-index="2"] .entry-dataset input`).fill('/nonexistent/gsm8k.jsonl');
    await page.locator(`${train} .task-row[data-index="2"] .entry-limit input`).fill('50');
    await page.waitForFunction((sel) => (document.querySelector(sel)?.textContent ?? '').includes('does not exist'), `${train} .field-error`);
    expect(await page.textContent(`${train} .field-error`)).toMatch(/^2\.dataset: .*does not exist/);
    expect(await page.isDisabled('.start-run')).toBe(true);
    await page.waitForFunction(() => (document.querySelector('.diff')?.textContent ?? '').includes('tasks.train'));
    for (const scheme of ['dark', 'light'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.locator(`fieldset:has(${train})`).screenshot({ path: join(ART, `new-run-tasks-${scheme}.png`) });
    }
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await changeRows()).toEqual([{ path: 'tasks.train', invalid: true }]);
    expect(await page.textContent('.diff tr[data-path="tasks.train"]')).toContain('arith-chain, kb-single, /nonexistent/gsm8k.jsonl');
    // Removing the file row leaves a valid two-task list.
    await page.click(`${train} .task-row[data-index="2"] .remove-task`);
    await page.waitForFunction(() => (document.querySelector('.side')?.textContent ?? '').includes('The config is valid'));
    expect(await changeRows()).toEqual([{ path: 'tasks.train', invalid: false }]);
    expect(await page.textContent('.diff tr[data-path="tasks.train"]')).toContain('→ arith-chain, kb-single');
  });

  it('workflow.options is one field per option of the chosen workflow, no JSON box; a K mode shows its own fields', async () => {
    await openForm();
    expect(await page.$(`${f('workflow.options')}`)).toBeNull();
    expect(await page.$$('.field[data-path^="workflow."] textarea')).toHaveLength(0);
    expect(await page.inputValue(`${f('workflow.options.solvers.mode')} select`)).toBe('fixed');
    expect(await page.inputValue(`${f('workflow.options.solvers.k')} input`)).toBe('2');
    expect(await page.inputValue(`${f('workflow.options.maxLoops')} input`)).toBe('1');
    // Router mode: maxK replaces k (empty until given: the lab says it is needed).
    await page.locator(`${f('workflow.options.solvers.mode')} select`).selectOption('router');
    await page.waitForSelector(`${f('workflow.options.solvers.maxK')} input`);
    expect(await page.$(`${f('workflow.options.solvers.k')}`)).toBeNull();
    await page.waitForSelector(`${f('workflow.options.solvers.maxK')} .field-error`);
    await page.locator(`${f('workflow.options.solvers.maxK')} input`).fill('3');
    await page.waitForFunction(() => (document.querySelector('.side')?.textContent ?? '').includes('The config is valid'));
    // Another workflow: its own options, the math ones gone.
    await page.locator(`${f('workflow.name')} select`).selectOption('search');
    await page.waitForSelector(`${f('workflow.options.searchers.mode')} select`);
    expect(await page.$(`${f('workflow.options.solvers.mode')}`)).toBeNull();
    expect(await page.$(`${f('workflow.options.topK')} input`)).not.toBeNull();
  });

  it('help text is on screen for every field, and names break at dots, never inside a word', async () => {
    await openForm();
    expect(await page.isVisible(`${f('rollout.groupSize')} .help`)).toBe(true);
    expect(await page.textContent(`${f('rollout.groupSize')} .help`)).toMatch(/^Rollouts per task \(G\): the size of each comparison group/);
    const withoutHelp = await page.$$eval('.field', (els) => els.filter((e) => !e.querySelector('.help')).map((e) => e.getAttribute('data-path')));
    expect(withoutHelp).toEqual([]);
    // Every part of every name is on one line (a part may move to the next line whole, after its dot).
    const broken = await page.$$eval('.field .name span', (spans) => spans.filter((s) => s.getClientRects().length > 1).map((s) => s.textContent));
    expect(broken).toEqual([]);
    expect(await page.textContent(`${f('policies.modelOverrides.dModel')} .name`)).toBe('modelOverrides.dModel');
    for (const scheme of ['dark', 'light'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.screenshot({ path: join(ART, `new-run-form-${scheme}.png`), fullPage: false });
      await page.locator(`fieldset:has(${f('policies.modelOverrides.dModel')})`).screenshot({ path: join(ART, `new-run-policies-${scheme}.png`) });
    }
    await page.emulateMedia({ colorScheme: 'dark' });
  });

  it('"Changes from math-quick" counts every edit, valid or not, marking the invalid ones', async () => {
    await openForm();
    expect(await page.textContent('.side')).toContain('Changes from math-quick');
    await page.locator(`${f('rollout.groupSize')} input`).fill('0'); // out of range: the lab refuses it
    await page.locator(`${f('seed')} input`).fill('abc'); // not a number: refused before the lab is asked
    await page.locator(`${f('steps')} input`).fill('7'); // valid
    await page.waitForSelector(`${f('rollout.groupSize')} .field-error`);
    await page.waitForFunction(() => document.querySelectorAll('.diff tr').length === 3);
    expect(await changeRows()).toEqual([
      { path: 'seed', invalid: true },
      { path: 'steps', invalid: false },
      { path: 'rollout.groupSize', invalid: true },
    ]);
    expect(await page.textContent('.change-count')).toContain('3 changes (2 invalid)');
    for (const scheme of ['dark', 'light'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.screenshot({ path: join(ART, `new-run-changes-${scheme}.png`), fullPage: false });
    }
    await page.emulateMedia({ colorScheme: 'dark' });
  });

  it("LoRA on the lab's own model (a Hugging Face folder) is valid; its fields show while it is on", async () => {
    await openForm();
    expect(await page.$(`${f('policies.adapter.r')}`)).toBeNull();
    await page.locator(`${f('policies.adapter.kind')} select`).selectOption('lora');
    await page.waitForSelector(`${f('policies.adapter.r')} input`);
    await page.waitForFunction(() => (document.querySelector('.side')?.textContent ?? '').includes('The config is valid'));
    expect(await page.$(`${f('policies.adapter.kind')} .field-error`)).toBeNull();
    expect(await page.isDisabled('.start-run')).toBe(false);
    // Back to none: valid still, the LoRA fields gone.
    await page.locator(`${f('policies.adapter.kind')} select`).selectOption('');
    await page.waitForFunction(() => (document.querySelector('.side')?.textContent ?? '').includes('The config is valid'));
    expect(await page.$(`${f('policies.adapter.r')}`)).toBeNull();
    expect(problems).toEqual([]);
  });
});
