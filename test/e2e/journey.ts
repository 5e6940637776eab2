/**
 * The demo store's customer journeys, step by step, in headless Chromium (puppeteer-core): shared by
 * the end-to-end test (test/e2e/demo.test.ts), which asserts on what each step returns, and by
 * `npm run screenshots` (scripts/screenshots.ts), which passes `shot` to capture every step.
 * The steps do what a customer (and, in the test panel, the tester) does: click, read the screen.
 */
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { CHROME_ARGS, findChrome } from '../support/find-chrome.mjs';

/** Called after each step with its name; the screenshots script writes a PNG. */
export type Shot = (name: string) => Promise<void>;

export const VIEWPORTS = {
  desktop: { width: 1280, height: 900, isMobile: false, hasTouch: false },
  phone: { width: 390, height: 844, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
} as const;

/** Chromium as the tests and the screenshots run it (see /work/shared/notes/toolchain.md). */
export function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: findChrome() ?? '/usr/bin/chromium',
    headless: true,
    args: CHROME_ARGS,
  });
}

/** What the customer sees in a <pix-checkout> (its shadow root). */
export interface WidgetView {
  screen: string;
  /** The copy-and-paste code, on the pending screen. */
  code: string | null;
  /** The QR is drawn as an inline SVG with a path. */
  qrSvg: boolean;
  status: string | null;
  renewButton: string | null;
}

const WAIT = { timeout: 20_000 };

export async function readWidget(page: Page, selector = '#shop-checkout'): Promise<WidgetView> {
  return page.$eval(selector, (el) => {
    const root = el.shadowRoot!;
    const code = root.querySelector<HTMLTextAreaElement>('[part=code]');
    const path = root.querySelector('svg[part=qr] path');
    return {
      screen: (el as unknown as { screen: string }).screen,
      code: code ? code.value : null,
      qrSvg: !!path && (path.getAttribute('d') ?? '').length > 0,
      status: root.querySelector('[part=status]')?.textContent?.trim() ?? null,
      renewButton: root.querySelector('[part=renew-button]')?.textContent?.trim() ?? null,
    };
  });
}

export async function waitForScreen(page: Page, screen: string, selector = '#shop-checkout'): Promise<WidgetView> {
  await page.waitForFunction((s, sel) => (document.querySelector(sel) as unknown as { screen?: string } | null)?.screen === s, WAIT, screen, selector);
  // The screen's content renders with the element's next update.
  await page.$eval(selector, (el) => (el as unknown as { updateComplete: Promise<unknown> }).updateComplete);
  return readWidget(page, selector);
}

/** Opens the store and waits until its products (and, in test mode, the panel) are there. */
export async function openStore(page: Page, url: string, shot?: Shot): Promise<void> {
  await page.goto(url);
  await page.waitForSelector('html[data-ready="true"]', WAIT);
  await shot?.('store');
}

/** Adds products to the cart by clicking their "Adicionar" buttons; answers the cart's total as shown. */
export async function addToCart(page: Page, items: Record<string, number>, shot?: Shot): Promise<string> {
  for (const [product, times] of Object.entries(items)) {
    for (let i = 0; i < times; i++) {
      const before = await page.$eval('#cart-count', (el) => Number(el.textContent));
      await page.click(`[data-add="${product}"]`);
      await page.waitForFunction((n) => Number(document.querySelector('#cart-count')!.textContent) === n, WAIT, before + 1);
    }
  }
  await shot?.('cart');
  return page.$eval('#cart-total', (el) => el.textContent ?? '');
}

export interface PaymentStep {
  orderId: string;
  /** The copy-and-paste code on screen. */
  code: string;
  widget: WidgetView;
}

/** "Pagar com Pix": the shop creates the order and its checkout; waits for the QR and the code. */
export async function goToPayment(page: Page, shot?: Shot): Promise<PaymentStep> {
  await page.click('#pay');
  await page.waitForSelector('#step-payment:not([hidden]) #shop-checkout', WAIT);
  const widget = await waitForScreen(page, 'pending');
  // The test panel learns the payment from the widget's pix-created event.
  if (await page.$('#test-panel:not([hidden])')) await page.waitForSelector('#sim-paid:not([disabled])', WAIT);
  const orderId = await page.$eval('#payment-order', (el) => el.textContent ?? '');
  await shot?.('payment');
  return { orderId, code: widget.code ?? '', widget };
}

/** A test-panel button; waits until it is enabled (the panel knows the payment on screen). */
export async function clickPanel(page: Page, id: string): Promise<void> {
  const before = await page.$eval('#test-result', (el) => (el as HTMLElement).dataset.done ?? '0');
  await page.waitForSelector(`#${id}:not([disabled])`, WAIT);
  await page.click(`#${id}`);
  // Done when the panel has finished one more action (its count, not its sentence: two actions in
  // a row may say the same thing).
  await page.waitForFunction((done) => ((document.querySelector('#test-result') as HTMLElement).dataset.done ?? '0') !== done, WAIT, before);
}

export const simulatePaid = (page: Page) => clickPanel(page, 'sim-paid');
export const simulateExpired = (page: Page) => clickPanel(page, 'sim-expired');
export const simulateCanceled = (page: Page) => clickPanel(page, 'sim-canceled');

export interface Confirmation {
  title: string;
  orderId: string;
  items: string[];
  total: string;
}

/** Waits for "Pedido confirmado" (shown only after the shop's backend said paid). */
export async function waitForConfirmation(page: Page, shot?: Shot): Promise<Confirmation> {
  await page.waitForSelector('#step-confirmed:not([hidden])', WAIT);
  const confirmation = await page.evaluate(() => ({
    title: document.querySelector('#confirmed-title')!.textContent ?? '',
    orderId: document.querySelector('#confirmed-order')!.textContent ?? '',
    items: [...document.querySelectorAll('#confirmed-items li')].map((li) => li.textContent ?? ''),
    total: document.querySelector('#confirmed-total')!.textContent ?? '',
  }));
  await shot?.('confirmed');
  return confirmation;
}

/** On the expired screen: "Gerar novo código", then the new code once it is on screen. */
export async function renewCode(page: Page, previousCode: string, shot?: Shot): Promise<WidgetView> {
  await page.$eval('#shop-checkout', (el) => el.shadowRoot!.querySelector<HTMLButtonElement>('[part=renew-button]')!.click());
  await page.waitForFunction(
    (old) => {
      const el = document.querySelector<HTMLElement & { screen: string }>('#shop-checkout');
      const code = el?.shadowRoot?.querySelector<HTMLTextAreaElement>('[part=code]')?.value;
      return el?.screen === 'pending' && !!code && code !== old;
    },
    WAIT,
    previousCode,
  );
  // A renewal is a new pix-created: the panel follows the new payment.
  await page.waitForSelector('#sim-paid:not([disabled])', WAIT);
  await shot?.('renewed');
  return readWidget(page);
}

/** The whole happy path: store, cart, payment, paid, confirmed. */
export async function payJourney(page: Page, url: string, shot?: Shot) {
  await openStore(page, url, shot);
  const cartTotal = await addToCart(page, { 'cafe-especial': 2, 'goiabada-cascao': 1 }, shot);
  const payment = await goToPayment(page, shot);
  await simulatePaid(page);
  const confirmation = await waitForConfirmation(page, shot);
  return { cartTotal, payment, confirmation };
}

/** A code that expires: the expired screen, a new code, paid, confirmed. */
export async function expiredJourney(page: Page, url: string, shot?: Shot) {
  await openStore(page, url);
  await addToCart(page, { 'queijo-canastra': 1, 'doce-de-leite': 2 });
  const payment = await goToPayment(page);
  await simulateExpired(page);
  const expired = await waitForScreen(page, 'expired');
  await shot?.('expired');
  const renewed = await renewCode(page, payment.code, shot);
  await simulatePaid(page);
  const confirmation = await waitForConfirmation(page);
  return { payment, expired, renewed, confirmation };
}

/** The playground: the open-amount widget, then a few controls changed. */
export async function playgroundJourney(page: Page, url: string, shot?: Shot) {
  await page.goto(`${url}/#playground`);
  await page.waitForSelector('html[data-ready="true"]', WAIT);
  await page.waitForSelector('#pg-widget', WAIT);
  const first = await waitForScreen(page, 'pending', '#pg-widget');
  await shot?.('playground');
  // Dark theme and a custom accent, as a merchant would try them.
  await page.select('#pg-theme', 'dark');
  await page.$eval('#pg-accent', (input) => {
    (input as HTMLInputElement).value = '#f2b84b';
    input.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await page.$eval('#pg-on-accent', (input) => {
    (input as HTMLInputElement).value = '#1a1f24';
    input.dispatchEvent(new Event('input', { bubbles: true }));
  });
  const snippet = await page.$eval('#pg-snippet', (el) => el.textContent ?? '');
  await shot?.('playground-dark');
  return { first, snippet };
}
