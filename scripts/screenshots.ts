/**
 * `npx tsx scripts/screenshots.ts`: PNGs of every widget state, at desktop and phone width, light and
 * dark, into screenshots/ (git-ignored). Builds dist/, serves the states gallery of
 * bench/widget-page.ts on the dev stack, and captures it in headless Chromium (puppeteer-core).
 */
import { mkdir } from 'node:fs/promises';
import puppeteer from 'puppeteer-core';
import { build } from 'vite';
import { GALLERY_STATES } from '../bench/widget-page.ts';
import { mountWidgetPages } from '../bench/widget-page.ts';
import { startDevStack } from '../server/dev.ts';
// @ts-expect-error find-chrome.mjs is plain JS without types
import { findChrome } from './find-chrome.mjs';

const VIEWPORTS = {
  desktop: { width: 1024, height: 900, isMobile: false, hasTouch: false },
  phone: { width: 390, height: 844, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
};

await build({ logLevel: 'warn' });
await mkdir('screenshots', { recursive: true });
const browser = await puppeteer.launch({
  executablePath: findChrome() ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
let count = 0;
try {
  for (const state of GALLERY_STATES) {
    for (const [size, viewport] of Object.entries(VIEWPORTS)) {
      for (const scheme of ['light', 'dark'] as const) {
        // A stack per capture: expiring moves the sandbox clock, which must not touch the others.
        const stack = await startDevStack({ mount: mountWidgetPages });
        const page = await browser.newPage();
        try {
          await page.setViewport(viewport);
          await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }]);
          await page.goto(`${stack.url}/gallery?state=${state}`);
          await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true, { timeout: 10_000 });
          const reference = await page.evaluate(() => (window as unknown as { reference?: string }).reference);
          const control = (path: string, body?: unknown) =>
            fetch(`${stack.url}/sandbox/_sandbox/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });
          if (state === 'paid') await control(`payments/${reference}/pay`);
          if (state === 'expired') await control('clock/advance', { seconds: 3600 });
          if (state === 'canceled') await control('clock/advance', { seconds: 7200 });
          if (state === 'paid' || state === 'expired' || state === 'canceled') {
            await page.evaluate(() => window.dispatchEvent(new Event('focus')));
            await page.waitForFunction((s) => document.querySelector('pix-checkout')?.matches(`:state(${s})`), { timeout: 15_000 }, state);
            await new Promise((resolve) => setTimeout(resolve, 200));
          }
          await page.screenshot({ path: `screenshots/${state}-${size}-${scheme}.png`, fullPage: true });
          count++;
        } finally {
          await page.close();
          await stack.close();
        }
      }
    }
  }
} finally {
  await browser.close();
}
console.log(`wrote ${count} screenshots to screenshots/`);
