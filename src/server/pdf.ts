/**
 * PDF printing for web mode: loads an HTML report into headless Chromium (Debian's chromium via
 * playwright-core, both optional) and prints it. `chromiumPdfPrinter()` returns null when either
 * is missing, and the server then answers PDF requests with 'unsupported'. The report HTML is
 * self-contained (no script, nothing fetched), so it is printed from a data-free blank page.
 *
 * Tested by test/server/server.test.ts (skips without Chromium) and test/e2e/lab.test.ts.
 */
import { existsSync } from 'node:fs';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function chromiumPdfPrinter(executablePath = CHROMIUM_PATH): ((html: string) => Promise<Uint8Array>) | null {
  if (!existsSync(executablePath)) return null;
  return async (html) => {
    let pw: typeof import('playwright-core');
    try {
      pw = await import('playwright-core');
    } catch {
      throw new Error('PDF export needs playwright-core (npm i -D playwright-core)');
    }
    const browser = await pw.chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
    try {
      const page = await browser.newPage();
      await page.setContent(html, { waitUntil: 'load' });
      return await page.pdf({ format: 'A4', printBackground: true, margin: { top: '12mm', bottom: '12mm', left: '10mm', right: '10mm' } });
    } finally {
      await browser.close();
    }
  };
}
