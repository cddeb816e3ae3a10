/**
 * PDF exports share one headless browser (issue: concurrent exports each launched their own
 * Chromium). With a fake browser that records launches and open pages: six concurrent prints
 * launch once and never hold two pages at a time, each gets its own bytes; a crashed browser is
 * replaced on the next print; a failed launch is retried; the browser closes when idle and on
 * close(), after which prints are refused.
 */
import { describe, expect, it } from 'vitest';
import { sharedPdfPrinter, type PrintBrowser, type PrintPage } from '../../src/server/pdf';

class FakeBrowsers {
  launches = 0;
  closes = 0;
  openPages = 0;
  maxOpenPages = 0;
  failNext = false;
  last: (PrintBrowser & { crash(): void }) | null = null;

  launch = async (): Promise<PrintBrowser> => {
    this.launches++;
    await new Promise((r) => setTimeout(r, 5)); // launching takes a while
    if (this.failNext) {
      this.failNext = false;
      throw new Error('chromium would not start');
    }
    let connected = true;
    const browsers = this;
    const browser = {
      isConnected: () => connected,
      crash: () => void (connected = false),
      async close() {
        connected = false;
        browsers.closes++;
      },
      async newPage(): Promise<PrintPage> {
        if (!connected) throw new Error('browser is gone');
        browsers.openPages++;
        browsers.maxOpenPages = Math.max(browsers.maxOpenPages, browsers.openPages);
        let content = '';
        return {
          setContent: async (html: string) => void (content = html),
          pdf: async () => {
            await new Promise((r) => setTimeout(r, 3));
            return new TextEncoder().encode(`%PDF ${content}`);
          },
          close: async () => void browsers.openPages--,
        };
      },
    };
    this.last = browser;
    return browser;
  };
}

const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe('shared PDF printer', () => {
  it('six concurrent exports: one launch, one page at a time, each its own PDF', async () => {
    const fake = new FakeBrowsers();
    const print = sharedPdfPrinter(fake.launch);
    const out = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => print(`report ${i}`)));
    expect(out.map(text)).toEqual([1, 2, 3, 4, 5, 6].map((i) => `%PDF report ${i}`));
    expect(fake.launches).toBe(1);
    expect(fake.maxOpenPages).toBe(1);
    expect(fake.openPages).toBe(0);
    await print.close();
    expect(fake.closes).toBe(1);
  });

  it('refuses prints after close()', async () => {
    const fake = new FakeBrowsers();
    const print = sharedPdfPrinter(fake.launch);
    await print('a');
    await print.close();
    await expect(print('b')).rejects.toThrow(/PDF printer is closed/);
    expect(fake.launches).toBe(1);
  });

  it('replaces a crashed browser and retries a failed launch', async () => {
    const fake = new FakeBrowsers();
    const print = sharedPdfPrinter(fake.launch);
    await print('a');
    fake.last!.crash();
    expect(text(await print('b'))).toBe('%PDF b');
    expect(fake.launches).toBe(2);
    await print.close();

    const failing = new FakeBrowsers();
    failing.failNext = true;
    const print2 = sharedPdfPrinter(failing.launch);
    await expect(print2('x')).rejects.toThrow(/would not start/);
    expect(text(await print2('y'))).toBe('%PDF y');
    expect(failing.launches).toBe(2);
    await print2.close();
  });

  it('closes the browser when idle and relaunches on the next export', async () => {
    const fake = new FakeBrowsers();
    const print = sharedPdfPrinter(fake.launch, { idleMs: 30 });
    await print('a');
    await new Promise((r) => setTimeout(r, 80));
    expect(fake.closes).toBe(1);
    expect(text(await print('b'))).toBe('%PDF b');
    expect(fake.launches).toBe(2);
    await print.close();
    expect(fake.closes).toBe(2);
  });
});
