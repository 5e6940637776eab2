/**
 * The languages loaded on demand (src/locales/index.ts), from the built script-tag bundle in headless
 * Chromium, as a merchant's page loads it: an English page never paints a Portuguese word, and a page
 * whose English texts cannot be loaded still lets the customer pay, in pt-BR.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'puppeteer-core';
import { build } from 'vite';
import { startDevStack, type DevStack } from '../../server/dev-stack.ts';
import { createLogger } from '../../server/log.ts';
import { mountWidgetPages } from '../support/widget-page.ts';
import { launchBrowser, readWidget, waitForScreen } from './journey.ts';

let browser: Browser;
let stack: DevStack;

before(async () => {
  // The page loads dist/pix-checkout.js and its language files beside it.
  await build({ logLevel: 'warn' });
  stack = await startDevStack({ mount: mountWidgetPages, logger: createLogger({ level: 'silent' }) });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.close();
});

/** Every text the widget painted, one sample per frame, from before it is connected until it shows the payment. */
async function paintedTexts(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { painted: string[] }).painted);
}

async function newPage(): Promise<Page> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  // A page in front: a hidden one gets no animation frames (nothing is painted, nothing sampled).
  await page.bringToFront();
  // As text: tsx would wrap the named function in a helper the page does not have.
  await page.evaluateOnNewDocument(`
    const painted = (window.painted = []);
    requestAnimationFrame(function sample() {
      const root = document.getElementById('widget')?.shadowRoot;
      const text = (root?.textContent ?? '').replace(/\\s+/g, ' ').trim();
      if (text && painted.at(-1) !== text) painted.push(text);
      requestAnimationFrame(sample);
    });
  `);
  return page;
}

const PORTUGUESE = /Gerando|Aguardando|Copiar|Expira|Escaneie|Pague/;

describe('languages loaded on demand', () => {
  test('an English page paints no Portuguese word before its texts arrive, then English throughout', async () => {
    const page = await newPage();
    const requested: string[] = [];
    page.on('request', (request) => requested.push(new URL(request.url()).pathname));
    try {
      await page.goto(`${stack.url}/bench?locale=en`);
      const view = await waitForScreen(page, 'pending', '#widget');
      assert.equal(view.status, 'Waiting for payment', JSON.stringify(view));
      assert.ok(view.qrSvg, 'the QR is drawn');
      const painted = await paintedTexts(page);
      assert.ok(painted.length > 0, 'frames were sampled');
      for (const text of painted) assert.doesNotMatch(text, PORTUGUESE, `a painted frame in Portuguese: ${text}`);
      assert.ok(
        painted.some((text) => text.includes('Copy code')),
        `English on screen: ${JSON.stringify(painted)}`,
      );
      assert.ok(requested.includes('/dist/pix-checkout.en.js'), `the English file was loaded: ${JSON.stringify(requested)}`);
      assert.ok(!requested.includes('/dist/pix-checkout.es.js'), 'not the Spanish one');
    } finally {
      await page.browserContext().close();
    }
  });

  test('a Brazilian page loads no language file', async () => {
    const page = await newPage();
    const requested: string[] = [];
    page.on('request', (request) => requested.push(new URL(request.url()).pathname));
    try {
      await page.goto(`${stack.url}/bench`);
      const view = await waitForScreen(page, 'pending', '#widget');
      assert.equal(view.status, 'Aguardando pagamento', JSON.stringify(view));
      // The script, then (once the QR is on screen) the later chunks; no language file.
      assert.deepEqual(
        requested.filter((path) => path.startsWith('/dist/') && path !== '/dist/pix-checkout.later.js' && path !== '/dist/pix-checkout.status.js'),
        ['/dist/pix-checkout.js'],
        'one script and the later chunks, nothing else from dist/',
      );
    } finally {
      await page.browserContext().close();
    }
  });

  test('English texts that cannot be loaded: the customer still pays, in pt-BR, and the page is warned', async () => {
    const page = await newPage();
    const warnings: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'warn') warnings.push(message.text());
    });
    await page.setRequestInterception(true);
    page.on(
      'request',
      (request) => void (new URL(request.url()).pathname.endsWith('/pix-checkout.en.js') ? request.abort('connectionrefused') : request.continue()),
    );
    try {
      await page.goto(`${stack.url}/bench?locale=en`);
      const view = await waitForScreen(page, 'pending', '#widget');
      assert.equal(view.status, 'Aguardando pagamento', JSON.stringify(view));
      assert.ok(view.qrSvg, 'the QR is drawn');
      assert.ok((view.code ?? '').startsWith('000201'), 'the copy-and-paste code is there');
      assert.ok(
        warnings.some((text) => text.includes('"en" texts could not be loaded')),
        `warned: ${JSON.stringify(warnings)}`,
      );
      const again = await readWidget(page, '#widget');
      assert.equal(again.screen, 'pending', 'still payable');
    } finally {
      await page.browserContext().close();
    }
  });
});
