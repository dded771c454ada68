/**
 * Real Chromium for the HTML report's tests and benchmark: Debian's
 * `chromium` driven by puppeteer-core, with the network refused.
 */

import type { Browser, Page } from "puppeteer-core";

/** Where Debian's package puts Chromium. */
export const CHROMIUM = "/usr/bin/chromium";

/** Starts headless Chromium; as root it needs `--no-sandbox`. */
export async function launch(): Promise<Browser> {
  const { default: puppeteer } = await import("puppeteer-core");
  return await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--disable-background-networking",
      "--no-first-run",
      // Belt and braces beside the interception: nothing can reach a host.
      "--proxy-server=127.0.0.1:9",
    ],
  });
}

/** What a page did that it must not: requests off file:, dialogs, errors. */
export interface Watch {
  refused: string[];
  dialogs: string[];
  errors: string[];
}

/** A new page that may load `file:` URLs only, watched for dialogs and errors. */
export async function watchedPage(browser: Browser): Promise<[Page, Watch]> {
  const page = await browser.newPage();
  const watch: Watch = { refused: [], dialogs: [], errors: [] };
  await page.setRequestInterception(true);
  page.on("request", (request) => {
    const url = request.url();
    if (url.startsWith("file:")) {
      request.continue();
    } else {
      watch.refused.push(url);
      request.abort();
    }
  });
  page.on("dialog", (dialog) => {
    watch.dialogs.push(dialog.message());
    dialog.dismiss();
  });
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warn") {
      watch.errors.push(message.text());
    }
  });
  page.on("pageerror", (error) => watch.errors.push(String(error)));
  return [page, watch];
}
