/**
 * The customer's journeys through the demo store (test/e2e/journey.ts, unchanged) in the two other
 * engines customers pay with: Firefox (puppeteer-core over WebDriver BiDi) and WebKit (WebKitGTK over
 * WebDriver, test/support/webdriver-page.ts). demo.test.ts runs them in Chromium with more checks.
 * One browser per engine; each journey gets its own demo (its own origin, so its own storage) and a
 * customer with no cookies. `ENGINES=` leaves engines out; a line per engine says how it went.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import '../support/bidi-compat.mjs';
import { build } from 'vite';
import { CATALOG } from '../../demo/shop-backend.ts';
import { startDemo, type RunningDemo } from '../../demo/server.ts';
import { createLogger } from '../../server/log.ts';
import { findFirefoxes, missingEngineHints, selectedEngines, type Engine } from '../support/find-browsers.mjs';
import { WebDriverPage } from '../support/webdriver-page.ts';
import { expiredJourney, payJourney, playgroundJourney, VIEWPORTS } from './journey.ts';
import { checkExpiredJourney } from './journey-checks.ts';

/** A browser of one engine, opening a page for a new customer and closing it after the journey. */
interface EngineDriver {
  version: string;
  withPage(run: (page: Page) => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

async function firefox(executablePath: string): Promise<EngineDriver> {
  // timeout: the start's limit, generous for 2 busy cores (about 7 s idle).
  const browser: Browser = await puppeteer.launch({ browser: 'firefox', executablePath, headless: true, timeout: 90_000 });
  return {
    version: await browser.version(),
    async withPage(run) {
      const context = await browser.createBrowserContext();
      try {
        const page = await context.newPage();
        page.setDefaultTimeout(20_000);
        await page.setViewport(VIEWPORTS.desktop);
        await run(page);
      } finally {
        await context.close();
      }
    },
    close: () => browser.close(),
  };
}

async function webkit(): Promise<EngineDriver> {
  const webdriver = await WebDriverPage.launch();
  const page = webdriver.asPuppeteerPage();
  page.setDefaultTimeout(20_000);
  await page.setViewport(VIEWPORTS.desktop);
  return {
    version: webdriver.browserVersion,
    async withPage(run) {
      try {
        await run(page);
      } finally {
        // Cookies are per host, not per port: the next demo's shop must not see this customer's.
        await webdriver.deleteCookies().catch(() => {});
      }
    },
    close: () => webdriver.close(),
  };
}

/** The engines' browsers: every Firefox found (find-browsers.mjs: each ESR under .browsers/ too), and WebKit. */
const firefoxes = findFirefoxes();
const BROWSERS: { engine: Exclude<Engine, 'chromium'>; name: string; open: () => Promise<EngineDriver> }[] = [
  ...(firefoxes.length
    ? firefoxes.map(({ path, version }) => ({
        engine: 'firefox' as const,
        name: firefoxes.length > 1 ? `Firefox ${version.split('.')[0]}` : 'Firefox',
        open: () => firefox(path),
      }))
    : [{ engine: 'firefox' as const, name: 'Firefox', open: () => firefox('firefox-esr') }]),
  { engine: 'webkit', name: 'WebKit', open: webkit },
];

const selected = selectedEngines();
const priceOf = (id: string) => CATALOG.find((p) => p.id === id)!.priceCents;
/** Intl writes a no-break space after R$. */
const spaces = (text: string) => text.replace(/\s+/g, ' ');
const brl = (cents: number) => new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' }).format(cents / 100);

before(async () => {
  // The page loads the script-tag bundle: build it when it is not there yet.
  if (!existsSync('dist/pix-checkout.js')) await build({ logLevel: 'warn' });
});

for (const { engine, name, open } of BROWSERS) {
  const skip = selected.includes(engine) ? false : `${engine} is not in ENGINES=${process.env.ENGINES}`;

  describe(`the customer's journeys in ${name}`, { skip }, () => {
    let driver: EngineDriver | undefined;
    let startedAt = 0;
    const outcomes: boolean[] = [];

    before(async () => {
      startedAt = Date.now();
      const [hint] = missingEngineHints([engine]);
      if (hint) throw new Error(hint);
      driver = await open();
    });

    after(async () => {
      await driver?.close();
      const passed = outcomes.filter(Boolean).length;
      const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
      console.log(`${name} (${driver?.version ?? 'did not start'}): ${passed} journeys passed, ${outcomes.length - passed} failed, ${seconds} s`);
    });

    /** A journey against a demo of its own, closed whatever happens; counted for the engine's line. */
    const journey = (title: string, run: (demo: RunningDemo, page: Page) => Promise<void>): void => {
      test(title, { timeout: 60_000 }, async () => {
        let ok = false;
        try {
          assert.ok(driver, `${name} did not start`);
          const demo = await startDemo({ logger: createLogger({ level: 'silent' }) });
          try {
            await driver.withPage((page) => run(demo, page));
          } finally {
            await demo.close();
          }
          ok = true;
        } finally {
          outcomes.push(ok);
        }
      });
    };

    journey('fills a cart, pays with Pix, and sees the order confirmed', async (demo, page) => {
      const { cartTotal, payment, confirmation } = await payJourney(page, demo.url);
      assert.equal(spaces(cartTotal), spaces(brl(2 * priceOf('cafe-especial') + priceOf('goiabada-cascao'))));
      assert.equal(payment.widget.screen, 'pending');
      assert.ok(payment.widget.qrSvg, 'the QR is drawn');
      assert.match(payment.code, /^000201/);
      assert.equal(confirmation.title, 'Pedido confirmado');
      assert.equal(confirmation.orderId, payment.orderId);
      assert.equal(demo.shop.order(payment.orderId)?.status, 'paid', 'confirmed by the shop, not by the page');
    });

    journey('a code that expires: a new one, paid, and the order confirmed', async (demo, page) => {
      const result = await expiredJourney(page, demo.url);
      checkExpiredJourney(result);
      assert.equal(demo.shop.order(result.payment.orderId)?.status, 'paid');
    });

    journey('the playground: its widget shows a code, and the snippet follows the controls', async (demo, page) => {
      const { first, snippet } = await playgroundJourney(page, demo.url);
      assert.equal(first.screen, 'pending');
      assert.ok(first.qrSvg);
      assert.match(snippet, /theme="dark"/);
    });
  });
}
