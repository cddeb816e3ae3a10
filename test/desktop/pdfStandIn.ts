/**
 * What answers `webContents.printToPDF` in the stand-in Electron (electronStandIn.ts): headless
 * Chromium (Debian's, /usr/bin/chromium or CHROMIUM_PATH) through playwright-core, launched on the
 * first print and closed by `close()`. The window's loaded URL is opened in a fresh context with
 * the window's JavaScript setting, then printed with its page size, background and orientation.
 * Chromium's own limits apply as they would in Electron (a data: URL over 2 MB does not load).
 *
 * Used by test/desktop only.
 */
import { existsSync } from 'node:fs';
import type { PrintToPDFOptions } from 'electron';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../src/server/pdf';

/** Prints a loaded URL to PDF with the window's JavaScript setting and printToPDF options. */
export interface PdfRenderer {
  (url: string, options: { javaScriptEnabled: boolean; pdf: PrintToPDFOptions }): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** A printer over one headless Chromium, launched on the first print. */
export function chromiumPrinter(executablePath = CHROMIUM_PATH): PdfRenderer {
  let browser: Promise<import('playwright-core').Browser> | null = null;
  const print = async (url: string, { javaScriptEnabled, pdf }: { javaScriptEnabled: boolean; pdf: PrintToPDFOptions }): Promise<Uint8Array> => {
    if (!existsSync(executablePath)) throw new Error(`printToPDF: no Chromium at ${executablePath}`);
    browser ??= import('playwright-core').then((pw) => pw.chromium.launch({ executablePath, args: CHROMIUM_ARGS }));
    const context = await (await browser).newContext({ javaScriptEnabled });
    try {
      const page = await context.newPage();
      await page.goto(url, { waitUntil: 'load' });
      const format = typeof pdf.pageSize === 'string' ? pdf.pageSize : undefined;
      return await page.pdf({ format, printBackground: pdf.printBackground ?? false, landscape: pdf.landscape ?? false });
    } finally {
      await context.close();
    }
  };
  return Object.assign(print, {
    async close() {
      const b = browser;
      browser = null;
      if (b) await b.then((x) => x.close()).catch(() => undefined);
    },
  });
}
