/**
 * `npm run screenshots`: every picture in one command, into screenshots/ (git-ignored):
 * - the widget's states gallery (bench/widget-page.ts): every state at desktop and phone width, light
 *   and dark: `<state>-<size>-<scheme>.png`;
 * - the demo store's customer journeys (test/e2e/journey.ts, the same steps the end-to-end test
 *   drives) at phone and desktop width: `demo-<size>-<nn>-<step>.png`;
 * and, with `--readme` (`npm run screenshots -- --readme`), the README's two pictures of the widget
 * with a pending payment, docs/images/widget-phone.png and docs/images/widget-desktop.png (element
 * screenshots; committed, so not rewritten on every run: each holds a fresh random code). Builds
 * dist/ first; headless Chromium through puppeteer-core.
 */
import { mkdir, stat } from 'node:fs/promises';
import type { Page } from 'puppeteer-core';
import { build } from 'vite';
import { GALLERY_STATES, mountWidgetPages } from '../test/support/widget-page.ts';
import { startDemo } from '../demo/server.ts';
import { startDevStack } from '../server/dev-stack.ts';
import { VIEWPORTS, expiredJourney, launchBrowser, payJourney, playgroundJourney, type Shot } from '../test/e2e/journey.ts';

/** The gallery's sizes (its pictures keep the widths they always had). */
const GALLERY_VIEWPORTS = {
  desktop: { width: 1024, height: 900, isMobile: false, hasTouch: false },
  phone: VIEWPORTS.phone,
};

await build({ logLevel: 'warn' });
await mkdir('screenshots', { recursive: true });
const readme = process.argv.includes('--readme');
if (readme) await mkdir('docs/images', { recursive: true });
const browser = await launchBrowser();
let count = 0;

/** Opens the gallery page in `state` on a fresh stack and brings the widget to that state. */
async function galleryPage(page: Page, url: string, state: string): Promise<void> {
  await page.goto(`${url}/gallery?state=${state}`);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true, { timeout: 10_000 });
  const reference = await page.evaluate(() => (window as unknown as { reference?: string }).reference);
  const control = (path: string, body?: unknown) =>
    fetch(`${url}/sandbox/_sandbox/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });
  if (state === 'paid') await control(`payments/${reference}/pay`);
  // The code's last two minutes (the gallery page shortens it): "I need more time" is offered.
  if (state === 'more-time') {
    await page.waitForFunction(() => !!document.querySelector('pix-checkout')?.shadowRoot?.querySelector('[part=more-time-button]'), { timeout: 15_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  if (state === 'expired') await control('clock/advance', { seconds: 3600 });
  if (state === 'canceled') await control('clock/advance', { seconds: 7200 });
  if (state === 'paid' || state === 'expired' || state === 'canceled') {
    await page.evaluate(() => window.dispatchEvent(new Event('focus')));
    await page.waitForFunction((s) => document.querySelector('pix-checkout')?.matches(`:state(${s})`), { timeout: 15_000 }, state);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

try {
  for (const state of GALLERY_STATES) {
    for (const [size, viewport] of Object.entries(GALLERY_VIEWPORTS)) {
      for (const scheme of ['light', 'dark'] as const) {
        // A stack per capture: expiring moves the sandbox clock, which must not touch the others.
        const stack = await startDevStack({ mount: mountWidgetPages });
        // Its own context: closing it closes its sockets, so the stack closes at once.
        const context = await browser.createBrowserContext();
        const page = await context.newPage();
        try {
          await page.setViewport(viewport);
          await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }]);
          await galleryPage(page, stack.url, state);
          await page.screenshot({ path: `screenshots/${state}-${size}-${scheme}.png`, fullPage: true });
          count++;
          // The README's pictures: the pending widget alone, light.
          if (readme && state === 'pending' && scheme === 'light') {
            const path = `docs/images/widget-${size}.png` as const;
            await (await page.$('pix-checkout'))!.screenshot({ path });
            console.log(`wrote ${path} (${Math.round((await stat(path)).size / 1024)} KB)`);
          }
        } finally {
          await context.close();
          await stack.close();
        }
      }
    }
  }

  // The store, as the end-to-end test walks it: one demo per width (expiring moves its clock).
  for (const [size, viewport] of Object.entries(VIEWPORTS)) {
    const demo = await startDemo();
    let step = 0;
    try {
      for (const journey of [payJourney, expiredJourney, playgroundJourney]) {
        // A context per journey: no order in its session, and its sockets close with it.
        const context = await browser.createBrowserContext();
        const page = await context.newPage();
        try {
          await page.setViewport(viewport);
          await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
          const shot: Shot = async (name) => {
            // Let the last change paint (focus rings, the countdown's first tick).
            await new Promise((resolve) => setTimeout(resolve, 150));
            await page.screenshot({ path: `screenshots/demo-${size}-${String(++step).padStart(2, '0')}-${name}.png`, fullPage: true });
            count++;
          };
          await journey(page, demo.url, shot);
        } finally {
          await context.close();
        }
      }
    } finally {
      await demo.close();
    }
  }
} finally {
  await browser.close();
}
console.log(`wrote ${count} screenshots to screenshots/`);
