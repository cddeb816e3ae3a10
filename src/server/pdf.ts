/**
 * PDF printing for web mode: loads an HTML report into headless Chromium (Debian's chromium via
 * playwright-core, both optional) and prints it. `chromiumPdfPrinter()` returns null when either
 * is missing, and the server then answers PDF requests with 'unsupported'. The report HTML is
 * self-contained (no script, nothing fetched), so it is printed from a data-free blank page.
 *
 * One browser for every export (`sharedPdfPrinter`): launched on the first print, reused, and
 * prints are serialized (one page at a time), so concurrent exports never start a Chromium each.
 * It is closed after `idleMs` without prints, when it crashes (the next print relaunches it), and
 * by `close()` on shutdown (`srpo-lab serve`), after which prints are refused.
 *
 * Tested by test/server/pdf.test.ts (a fake browser: one launch, serialized pages, crash, idle,
 * close), test/server/server.test.ts (skips without Chromium) and test/e2e/lab.test.ts.
 */
import { existsSync } from 'node:fs';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Headless Chromium's flags on these machines (docs: TOOLCHAIN): no GPU, no sandbox (root in CI),
 * and no background connections, which a closed network refuses many at a time. Used by the PDF
 * printer, the browser tests and the UI bench.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Prints HTML to PDF bytes; `close()` ends its browser and refuses later prints. */
export interface PdfPrinter {
  (html: string): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** What the printer needs of a page (playwright's Page has these). */
export interface PrintPage {
  setContent(html: string, options: { waitUntil: 'load' }): Promise<unknown>;
  pdf(options: Record<string, unknown>): Promise<Uint8Array>;
  close(): Promise<unknown>;
}

/** What the printer needs of a browser (playwright's Browser has these). */
export interface PrintBrowser {
  newPage(): Promise<PrintPage>;
  close(): Promise<unknown>;
  isConnected(): boolean;
}

const PDF_OPTIONS = { format: 'A4', printBackground: true, margin: { top: '12mm', bottom: '12mm', left: '10mm', right: '10mm' } };

/** A printer over one lazily launched browser, shared and serialized; closed when idle for `idleMs`. */
export function sharedPdfPrinter(launch: () => Promise<PrintBrowser>, { idleMs = 60_000 } = {}): PdfPrinter {
  let browser: Promise<PrintBrowser> | null = null;
  let queue: Promise<unknown> = Promise.resolve();
  let idle: NodeJS.Timeout | null = null;
  let closed = false;

  const shutBrowser = async () => {
    const b = browser;
    browser = null;
    if (b) await b.then((x) => x.close()).catch(() => undefined);
  };

  /** The browser, launched if there is none; a failed launch is not kept (the next print retries). */
  const getBrowser = (): Promise<PrintBrowser> => {
    if (browser) return browser;
    const launching = launch();
    browser = launching;
    launching.catch(() => {
      if (browser === launching) browser = null;
    });
    return launching;
  };

  const printOne = async (html: string): Promise<Uint8Array> => {
    if (closed) throw new Error('the PDF printer is closed');
    if (idle) clearTimeout(idle);
    let current = await getBrowser();
    if (!current.isConnected()) {
      // Crashed or killed since the last print: start a fresh one.
      browser = null;
      current = await getBrowser();
    }
    const page = await current.newPage();
    try {
      await page.setContent(html, { waitUntil: 'load' });
      return await page.pdf(PDF_OPTIONS);
    } finally {
      await page.close().catch(() => undefined);
    }
  };

  const armIdle = () => {
    if (closed || !browser) return;
    if (idle) clearTimeout(idle);
    idle = setTimeout(() => void (queue = queue.then(shutBrowser)), idleMs);
    idle.unref();
  };

  const print = (html: string): Promise<Uint8Array> => {
    const job = queue.then(() => printOne(html));
    queue = job.catch(() => undefined).then(armIdle);
    return job;
  };

  return Object.assign(print, {
    async close() {
      closed = true;
      if (idle) clearTimeout(idle);
      await queue;
      await shutBrowser();
    },
  });
}

export function chromiumPdfPrinter(executablePath = CHROMIUM_PATH): PdfPrinter | null {
  if (!existsSync(executablePath)) return null;
  return sharedPdfPrinter(async () => {
    let pw: typeof import('playwright-core');
    try {
      pw = await import('playwright-core');
    } catch {
      throw new Error('PDF export needs playwright-core (npm i -D playwright-core)');
    }
    return pw.chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  });
}
