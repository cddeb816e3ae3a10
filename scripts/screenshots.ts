/**
 * The README's screenshots, from a real run in a lab database:
 *
 *   npm run build && npx tsx scripts/screenshots.ts --db lab.db --run 1 [--out docs/screenshots] [--step 20]
 *
 * Serves the built renderer over web mode (read-only use: no engine is started), opens the run's
 * dashboard and its trace viewer (at `--step`, default the middle training step) in headless
 * Chromium (Debian's `chromium`, or CHROMIUM_PATH) and writes dashboard.png and trace.png.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { LabService } from '../src/core/host/labService';
import { NodeForkLauncher } from '../src/core/host/launcher';
import { CHROMIUM_PATH } from '../src/server/pdf';
import { startLabServer } from '../src/server/server';

declare const window: { location: { hash: string } }; // inside page.evaluate (no DOM lib here)

function option(name: string, fallback?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? process.argv[i + 1] : fallback;
  if (v === undefined) throw new Error(`screenshots: --${name} is required (usage: --db PATH --run ID [--out DIR] [--step N])`);
  return v;
}

async function main(): Promise<void> {
  const dbPath = option('db');
  const runId = Number(option('run'));
  const out = option('out', 'docs/screenshots');
  mkdirSync(out, { recursive: true });
  const service = new LabService({ dbPath, launcher: new NodeForkLauncher() });
  const run = await service.call('getRun', { runId }); // throws, naming the run, when it is not there
  const step = Number(option('step', String(Math.floor(Number(run.config.steps) / 2))));
  const server = await startLabServer({ service });
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(`${server.url}#/runs/${runId}`);
    await page.waitForSelector('[data-chart="reward/mean"] canvas');
    await page.waitForTimeout(1500); // charts settle
    await page.screenshot({ path: join(out, 'dashboard.png') });
    await page.evaluate((h) => (window.location.hash = h), `#/runs/${runId}/trace?step=${step}`);
    await page.waitForSelector('.trace-event');
    await page.waitForTimeout(800);
    await page.screenshot({ path: join(out, 'trace.png') });
    console.log(`wrote ${join(out, 'dashboard.png')} and ${join(out, 'trace.png')} (run ${runId}, trace at step ${step})`);
  } finally {
    await browser.close();
    await server.close();
    await service.close();
  }
}

main().catch((err) => {
  console.error((err as Error).message);
  process.exit(1);
});
