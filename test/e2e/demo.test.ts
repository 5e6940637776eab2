/**
 * The demo store end to end, in headless Chromium, as a customer uses it (test/e2e/journey.ts holds
 * the steps; `npm run screenshots` captures the same ones). Each test starts its own demo on a free
 * port (its own sandbox, proxy and shop backend) and closes it; one browser for the file.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { Browser, Page } from 'puppeteer-core';
import { build } from 'vite';
import { CATALOG, REFUND_CUSTOMERS, createShop } from '../../demo/shop-backend.ts';
import { startDemo, type DemoOptions, type RunningDemo } from '../../demo/server.ts';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhook } from '../../server/index.ts';
import { createLogger } from '../../server/log.ts';
import { TEST_CUSTOMERS } from '../../server/sandbox/customers.ts';
import { stackControl, waitFor } from '../support/checks.ts';
import {
  addToCart,
  clickPanel,
  expiredJourney,
  playgroundJourney,
  goToPayment,
  launchBrowser,
  openStore,
  simulatePaid,
  VIEWPORTS,
  waitForConfirmation,
} from './journey.ts';
import { checkExpiredJourney } from './journey-checks.ts';
import { jsQR } from '../support/jsqr.ts';

let browser: Browser;

before(async () => {
  // The page loads the script-tag bundle: build it when it is not there yet.
  if (!existsSync('dist/pix-checkout.js')) await build({ logLevel: 'warn' });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
});

/** A demo and a page for one test, both closed whatever happens. */
async function withDemo(options: DemoOptions, run: (demo: RunningDemo, page: Page) => Promise<void>): Promise<void> {
  const demo = await startDemo({ logger: createLogger({ level: 'silent' }), ...options });
  // A context of its own: fresh storage, and closing it closes its sockets (Chromium keeps spare
  // ones open to an origin, which would hold up the demo's graceful close).
  const context = await browser.createBrowserContext().catch(async (error) => {
    await demo.close();
    throw error;
  });
  try {
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.setViewport(VIEWPORTS.desktop);
    await run(demo, page);
  } finally {
    await context.close();
    await demo.close();
  }
}

/** axe-core's browser build (a dependency of @open-wc/testing's chai-a11y-axe). */
const AXE_SCRIPT = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

const isHidden = (page: Page, selector: string) => page.$eval(selector, (el) => (el as HTMLElement).hidden);

async function getJson(url: string, init?: RequestInit): Promise<{ status: number; body: any }> {
  const res = await fetch(url, init);
  return { status: res.status, body: await res.json() };
}

/** The shop's answer about an order, asked by the customer's browser (it holds the order's session). */
async function orderAsSeenBy(page: Page, orderId: string): Promise<{ status: number; body: any }> {
  return page.evaluate(async (id) => {
    const res = await fetch(`/shop/orders/${id}`);
    return { status: res.status, body: await res.json() };
  }, orderId);
}

/** The shop's answer about an order, asked with the session cookie of the client that placed it. */
const orderOf = (demo: RunningDemo, id: string, cookie: string) => getJson(`${demo.url}/shop/orders/${id}`, { headers: { cookie } });

/** Waits for the shop's answer about an order to pass `check` (asking a few times a second). */
async function orderUntil(demo: RunningDemo, id: string, cookie: string, what: string, check: (order: any) => boolean): Promise<any> {
  return waitFor(what, async () => {
    const { body } = await orderOf(demo, id, cookie);
    if (check(body)) return body;
    await new Promise((resolve) => setTimeout(resolve, 100));
    return undefined;
  });
}

/** The panel's refund route, as its button calls it (with the order's session). */
const refund = (demo: RunningDemo, id: string, cookie: string, body: unknown) =>
  getJson(`${demo.url}/shop/test/orders/${id}/refunds`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify(body),
  });

/** Places an order over HTTP, as the page does; answers its id, total and the session cookie. */
async function placeOrder(demo: RunningDemo, items: Record<string, number>): Promise<{ id: string; checkoutId: string; total: number; cookie: string }> {
  const placed = await fetch(`${demo.url}/shop/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ items: Object.entries(items).map(([product_id, quantity]) => ({ product_id, quantity })) }),
  });
  assert.equal(placed.status, 201);
  const order = (await placed.json()) as { order_id: string; checkout_id: string; total: number };
  return { id: order.order_id, checkoutId: order.checkout_id, total: order.total, cookie: placed.headers.get('set-cookie')!.split(';')[0]! };
}

/** Pays an order as the widget and the customer's bank do, then waits for the shop's confirmation. */
async function payOrder(demo: RunningDemo, order: { id: string; checkoutId: string; cookie: string }): Promise<void> {
  // The widget asks for the checkout's payment (no key, no amount): the one issued with the order
  // (the shop creates its checkouts with issue_payment), so 200, not a new one...
  const payment = await getJson(`${demo.stack.apiUrl}/checkouts/${order.checkoutId}/payment`, { method: 'POST' });
  assert.equal(payment.status, 200, JSON.stringify(payment.body));
  // ...and the customer's bank pays it.
  await stackControl(demo.stack, 'POST', `/payments/${encodeURIComponent(payment.body.reference)}/pay`);
  await orderUntil(demo, order.id, order.cookie, `order ${order.id} paid`, (o) => o.status === 'paid');
}

const priceOf = (id: string) => CATALOG.find((p) => p.id === id)!.priceCents;
/** Intl writes a no-break space after R$. */
const spaces = (text: string) => text.replace(/\s+/g, ' ');
const brl = (cents: number) => new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' }).format(cents / 100);

describe('the demo store, as a customer uses it', () => {
  test('fills a cart, pays with Pix, and sees the order confirmed once the shop confirmed it', { timeout: 60_000 }, async () => {
    await withDemo({}, async (demo, page) => {
      await openStore(page, demo.url);
      const cartTotal = await addToCart(page, { 'cafe-especial': 2, 'goiabada-cascao': 1 });
      const expectedCents = 2 * priceOf('cafe-especial') + priceOf('goiabada-cascao');
      assert.equal(spaces(cartTotal), spaces(brl(expectedCents)));

      const payment = await goToPayment(page);
      assert.equal(payment.widget.screen, 'pending');
      assert.ok(payment.widget.qrSvg, 'the QR is drawn as an inline SVG in the shadow root');
      assert.match(payment.code, /^000201/);
      // The shop priced the order itself, and has not confirmed anything yet.
      const before = demo.shop.order(payment.orderId)!;
      assert.equal(before.total * 100, expectedCents);
      assert.equal(before.status, 'awaiting_payment');
      assert.equal(await isHidden(page, '#step-confirmed'), true);

      await simulatePaid(page);
      const confirmation = await waitForConfirmation(page);
      assert.equal(confirmation.title, 'Pedido confirmado');
      assert.equal(confirmation.orderId, payment.orderId);
      assert.deepEqual(
        confirmation.items.map(spaces),
        [`2 × Café especial Serra Azul${brl(2 * priceOf('cafe-especial'))}`, `1 × Goiabada cascão${brl(priceOf('goiabada-cascao'))}`].map(spaces),
        'the items as the shop priced them',
      );

      // Shown because the shop's backend says paid, confirmed server side...
      const order = await orderAsSeenBy(page, payment.orderId);
      assert.equal(order.status, 200);
      assert.equal(order.body.status, 'paid');
      assert.ok(['webhook', 'proxy'].includes(order.body.confirmed_by), `confirmed_by ${order.body.confirmed_by}`);
      assert.ok(order.body.paid_at);
      // ...and the proxy agrees (what the shop asks with its API key).
      const checkout = await getJson(`${demo.stack.apiUrl}/checkouts/${order.body.checkout_id}`, { headers: { authorization: `Bearer ${demo.stack.apiKey}` } });
      assert.equal(checkout.body.status, 'paid');
      assert.equal(checkout.body.order_id, payment.orderId);

      // The test panel's server log: the partner's notification first, then what it caused.
      const log = await getJson(`${demo.url}/shop/test/log`);
      const kinds = log.body.entries.map((e: { kind: string }) => e.kind);
      assert.equal(kinds[0], 'partner_webhook');
      assert.equal(log.body.entries[0].delivery.outcome, 'approved');
      assert.ok(kinds.includes('confirmation'), kinds.join());

      // The test panel refunds the whole order to Ana (the customer by default, no value: the rest);
      // the order's page lists it, pending, then done once her bank approved it.
      assert.equal(await isHidden(page, '#refunds'), true, 'no refunds yet: no list');
      await clickPanel(page, 'refund');
      await page.waitForSelector('#refund-list li[data-status="pending"]');
      const pending = await page.$eval('#refund-list li', (li) => li.textContent ?? '');
      assert.equal(spaces(pending), spaces(`${brl(expectedCents)}pendentepara a chave Pix a***@cliente.example`));
      assert.equal(await isHidden(page, '#refunds'), false);
      // The bank's 5 s, skipped: the page asks again while a refund is pending.
      await stackControl(demo.stack, 'POST', '/clock/advance', { seconds: 6 });
      await page.waitForSelector('#refund-list li[data-status="approved"]');
      assert.match(await page.$eval('#refund-list li', (li) => li.textContent ?? ''), /concluído/);
      assert.equal(
        spaces(await page.$eval('#refund-summary', (el) => el.textContent ?? '')),
        spaces(`Devolvido: ${brl(expectedCents)} de ${brl(expectedCents)}.`),
      );
      // The panel's server log: the shop's request, then the signed transfer.approved naming the order.
      await page.waitForFunction(
        (id) =>
          [...document.querySelectorAll('#server-log li')].some(
            (li) => li.textContent?.includes('transfer.approved') && li.textContent.includes(`pedido ${id}`),
          ),
        {},
        payment.orderId,
      );
    });
  });

  test("the order's page without JavaScript: the QR scans from the screen and the code is there to copy", { timeout: 60_000 }, async () => {
    await withDemo({}, async (demo, page) => {
      const order = await placeOrder(demo, { 'cafe-especial': 1 });
      const { body: checkout } = await getJson(new URL(`/shop/orders/${order.id}?checkout=${order.checkoutId}`, demo.url).href);
      assert.equal(checkout.checkout_id, order.checkoutId);
      // A phone, with no script at all: what the server sent is all there is.
      await page.setViewport(VIEWPORTS.phone);
      await page.setJavaScriptEnabled(false);
      await page.goto(new URL(`/pagamento/${order.checkoutId}`, demo.url).href);
      const qr = await page.$('pix-checkout >>> svg[part~="qr"]');
      assert.ok(qr, 'the QR is on the page');
      const shot = await qr.screenshot({ encoding: 'base64' });
      const field = await page.$('pix-checkout >>> textarea[part~="code"]');
      const code = await field!.evaluate((el) => el.value);
      // A customer's long press: the field is a readonly textarea, selectable.
      const selectable = await field!.evaluate((el) => getComputedStyle(el).userSelect !== 'none' && el.readOnly);
      assert.equal(selectable, true);
      // The screenshot read by jsQR (not our encoder), in a page of its own with scripts on.
      const reader = await page.browserContext().newPage();
      await reader.setContent('<canvas></canvas>');
      const pixels = await reader.evaluate(async (png) => {
        const img = new Image();
        img.src = `data:image/png;base64,${png}`;
        await img.decode();
        const canvas = document.querySelector('canvas')!;
        Object.assign(canvas, { width: img.width, height: img.height });
        const context = canvas.getContext('2d')!;
        context.drawImage(img, 0, 0);
        const data = context.getImageData(0, 0, img.width, img.height);
        return { width: data.width, height: data.height, rgba: Array.from(data.data) };
      }, shot);
      const read = jsQR(Uint8ClampedArray.from(pixels.rgba), pixels.width, pixels.height);
      assert.ok(read, 'jsQR reads the QR in the screenshot');
      assert.equal(read.data, code);
      assert.match(code, /^000201/);
      assert.match(code, /6304[0-9A-F]{4}$/);
    });
  });

  test('a pix-paid event faked in the browser confirms nothing', { timeout: 60_000 }, async () => {
    await withDemo({}, async (demo, page) => {
      await openStore(page, demo.url);
      await addToCart(page, { 'pao-de-queijo': 1 });
      const payment = await goToPayment(page);
      const checks = () => page.$eval('body', (body) => Number(body.dataset.orderChecks ?? 0));
      const before = await checks();

      // What anyone can do in their own browser's console.
      await page.$eval('#shop-checkout', (el) => {
        el.dispatchEvent(new CustomEvent('pix-paid', { bubbles: true, composed: true, detail: { payment: { status: 'paid' } } }));
      });
      await page.waitForSelector('#payment-note[data-state="waiting"]');
      // Two more answers from the shop after the fake event: still not paid, still no confirmation.
      await page.waitForFunction((n) => Number(document.body.dataset.orderChecks ?? 0) >= n, {}, before + 2);
      assert.equal(await isHidden(page, '#step-confirmed'), true);
      assert.equal(await isHidden(page, '#step-payment'), false);
      assert.match(await page.$eval('#payment-note', (el) => el.textContent ?? ''), /ainda não o confirmou/);
      assert.equal(demo.shop.order(payment.orderId)!.status, 'awaiting_payment');
      assert.equal((await orderAsSeenBy(page, payment.orderId)).body.status, 'awaiting_payment');

      // The real payment, afterwards, still confirms it.
      await simulatePaid(page);
      assert.equal((await waitForConfirmation(page)).orderId, payment.orderId);
    });
  });

  test('a code that expires: the customer generates a new one, pays it, and the order is confirmed', { timeout: 60_000 }, async () => {
    await withDemo({}, async (demo, page) => {
      const result = await expiredJourney(page, demo.url);
      checkExpiredJourney(result);
      const { payment, renewed } = result;
      const order = await orderAsSeenBy(page, payment.orderId);
      assert.equal(order.body.status, 'paid');
      // The renewed code is the one paid, and the checkout is paid.
      const checkout = await getJson(`${demo.stack.apiUrl}/checkouts/${order.body.checkout_id}`, { headers: { authorization: `Bearer ${demo.stack.apiKey}` } });
      assert.equal(checkout.body.status, 'paid');
      assert.ok(renewed.code!.includes(checkout.body.payment.reference), 'the paid payment is the renewed one');
    });
  });

  test('the playground: its widget follows the controls, refuses an amount out of bounds, and shows the snippet', { timeout: 60_000 }, async () => {
    await withDemo({}, async (demo, page) => {
      const { first, snippet } = await playgroundJourney(page, demo.url);
      assert.match(first.code!, /^000201/);
      assert.equal(await page.$eval('#pg-widget', (el) => el.getAttribute('theme')), 'dark');
      assert.match(snippet, /<script type="module" src="http:\/\/[^"]+\/api\/pix-checkout\.js"><\/script>/);
      assert.match(snippet, /theme="dark"/);
      // Bounds from the shop's configuration (the partner's limits): 10000.01 is refused, with a message.
      await page.$eval('#pg-amount', (input) => {
        (input as HTMLInputElement).value = '10000.01';
        // An amount applies on change (typing would make a payment per keystroke).
        input.dispatchEvent(new Event('change', { bubbles: true }));
      });
      assert.match(await page.$eval('#pg-amount-error', (el) => el.textContent ?? ''), /R\$\s10\.000,00/);
      assert.equal(await page.$eval('#pg-amount', (el) => el.getAttribute('aria-invalid')), 'true');
      assert.equal(await page.$eval('#pg-widget', (el) => el.getAttribute('amount')), '49.90', 'the widget keeps the last valid amount');
      // Another locale: the widget speaks it.
      await page.select('#pg-locale', 'en');
      await page.waitForFunction(
        () => (document.querySelector('#pg-widget')?.shadowRoot?.querySelector('[part~="status"]')?.textContent ?? '').includes('Waiting'),
        { timeout: 10_000 },
      );
    });
  });

  test('a lost partner webhook: the proxy still finds the payment and the shop confirms it', { timeout: 60_000 }, async () => {
    await withDemo({}, async (demo, page) => {
      await openStore(page, demo.url);
      await addToCart(page, { 'caneca-esmaltada': 1 });
      const payment = await goToPayment(page);
      await clickPanel(page, 'fault-webhook');
      assert.equal(await page.$eval('#fault-webhook', (el) => el.getAttribute('aria-pressed')), 'true');
      await simulatePaid(page);
      assert.equal((await waitForConfirmation(page)).orderId, payment.orderId);
      // The panel's server log shows the lost notification, read from the sandbox's delivery log.
      await page.waitForFunction(() => [...document.querySelectorAll('#server-log li')].some((li) => li.textContent?.includes('perdido')));
      const deliveries = await getJson(`${demo.url}/sandbox/_sandbox/webhooks/deliveries`);
      assert.deepEqual(
        deliveries.body.deliveries.map((d: { state: string }) => d.state),
        ['dropped'],
      );
      await clickPanel(page, 'fault-clear');
      assert.equal(await page.$eval('#faults', (el) => el.textContent), 'Nenhuma falha ativa.');
    });
  });

  test('without the sandbox, the page has no test panel and /shop/test answers 404', { timeout: 60_000 }, async () => {
    await withDemo({ sandbox: false }, async (demo, page) => {
      assert.deepEqual((await getJson(`${demo.url}/shop/config`)).body.sandbox, false);
      const log = await getJson(`${demo.url}/shop/test/log`);
      assert.equal(log.status, 404);
      assert.equal(log.body.error.code, 'not_found');
      const order = await placeOrder(demo, { 'doce-de-leite': 1 });
      const refunded = await refund(demo, order.id, order.cookie, { customer: 'ana' });
      assert.equal(refunded.status, 404);
      assert.equal(refunded.body.error.code, 'not_found');

      await openStore(page, demo.url);
      assert.equal(await isHidden(page, '#test-panel'), true);
      assert.equal(await isHidden(page, '#sandbox-ribbon'), true);
      // The store itself works the same: the customer reaches the payment.
      await addToCart(page, { 'doce-de-leite': 1 });
      const payment = await goToPayment(page);
      assert.match(payment.code, /^000201/);
      assert.equal(await page.$('#test-panel:not([hidden])'), null);
    });
  });

  test('with the sandbox, the page shows the test panel (the switch above is honest)', { timeout: 60_000 }, async () => {
    await withDemo({}, async (demo, page) => {
      assert.equal((await getJson(`${demo.url}/shop/config`)).body.sandbox, true);
      await openStore(page, demo.url);
      assert.equal(await isHidden(page, '#test-panel'), false);
      const log = await getJson(`${demo.url}/shop/test/log`);
      assert.equal(log.status, 200);
      assert.deepEqual(log.body.entries, []);
      // The page passes axe with the panel shown, its logs full enough to scroll: reachable by keyboard.
      await page.evaluate(() => {
        for (const id of ['event-log', 'server-log']) {
          for (let i = 0; i < 40; i++) document.getElementById(id)!.append(Object.assign(document.createElement('li'), { textContent: `entrada ${i}` }));
        }
      });
      await page.addScriptTag({ path: AXE_SCRIPT });
      const violations = await page.evaluate(async () => {
        const result = await (
          window as unknown as { axe: { run: (context: unknown) => Promise<{ violations: { id: string; nodes: { target: string[] }[] }[] }> } }
        ).axe.run(document);
        return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
      });
      assert.deepEqual(violations, [], 'no axe violation on the store page with the test panel');
    });
  });
});

describe("the shop's backend", () => {
  let demo: RunningDemo;
  // A demo of its own for each test, closed after it.
  beforeEach(async () => {
    demo = await startDemo({ logger: createLogger({ level: 'silent' }) });
  });
  afterEach(async () => {
    await demo?.close();
  });

  const post = (path: string, body: string, contentType = 'application/json') =>
    getJson(`${demo.url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body });

  test('answers bad requests with a 4xx and the error body, never a 500', async () => {
    const cases: [string, Promise<{ status: number; body: any }>, number, string, string?][] = [
      ['unknown product', post('/shop/orders', JSON.stringify({ items: [{ product_id: 'nope', quantity: 1 }] })), 400, 'invalid_request', 'items.0.product_id'],
      [
        'a price from the page',
        post('/shop/orders', JSON.stringify({ items: [{ product_id: 'cafe-especial', quantity: 1, price: 0.2 }] })),
        400,
        'invalid_request',
        'items.0.price',
      ],
      [
        'zero quantity',
        post('/shop/orders', JSON.stringify({ items: [{ product_id: 'cafe-especial', quantity: 0 }] })),
        400,
        'invalid_request',
        'items.0.quantity',
      ],
      [
        'too many of one product',
        post(
          '/shop/orders',
          JSON.stringify({
            items: [
              { product_id: 'cafe-especial', quantity: 15 },
              { product_id: 'cafe-especial', quantity: 15 },
            ],
          }),
        ),
        400,
        'invalid_request',
        'items',
      ],
      ['an empty cart', post('/shop/orders', JSON.stringify({ items: [] })), 400, 'invalid_request', 'items'],
      ['no items at all', post('/shop/orders', JSON.stringify({ total: 1 })), 400, 'invalid_request', 'items'],
      ['not JSON', post('/shop/orders', '{"items": ['), 400, 'invalid_json'],
      ['not a JSON content type', post('/shop/orders', 'items=1', 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type'],
      ['a huge body', post('/shop/orders', JSON.stringify({ items: [], pad: 'x'.repeat(20_000) })), 413, 'payload_too_large'],
      ['a malformed order id', getJson(`${demo.url}/shop/orders/abc`), 400, 'invalid_request', 'id'],
      ['an unknown order', getJson(`${demo.url}/shop/orders/999999`), 404, 'not_found'],
      ['an unsigned webhook', post('/shop/webhooks/pix', JSON.stringify({ id: 'evt_x', type: 'payment.paid' })), 401, 'unauthorized'],
      ['a bad log limit', getJson(`${demo.url}/shop/test/log?limit=-1`), 400, 'invalid_request', 'limit'],
    ];
    for (const [what, answer, status, code, field] of cases) {
      const { status: got, body } = await answer;
      assert.equal(got, status, `${what}: status`);
      assert.equal(body.error.code, code, `${what}: code`);
      assert.equal(typeof body.error.message, 'string', `${what}: message`);
      if (field) assert.ok(body.error.fields && field in body.error.fields, `${what}: names ${field} in ${JSON.stringify(body.error.fields)}`);
    }
  });

  test('prices an order from its own list and creates its checkout at the proxy', async () => {
    const { status, body } = await post(
      '/shop/orders',
      JSON.stringify({
        items: [
          { product_id: 'queijo-canastra', quantity: 1 },
          { product_id: 'goiabada-cascao', quantity: 3 },
        ],
      }),
    );
    assert.equal(status, 201);
    assert.equal(Math.round(body.total * 100), priceOf('queijo-canastra') + 3 * priceOf('goiabada-cascao'));
    assert.equal(body.status, 'awaiting_payment');
    assert.match(body.checkout_id, /^co_/);
    const checkout = await getJson(`${demo.stack.apiUrl}/checkouts/${body.checkout_id}`, { headers: { authorization: `Bearer ${demo.stack.apiKey}` } });
    assert.equal(checkout.body.order_id, body.order_id);

    assert.equal(checkout.body.value, body.total);
    // Issued with the order (issue_payment): the page's first call reads it from the store.
    assert.equal(checkout.body.status, 'pending');
    assert.equal(checkout.body.payment.value, body.total);
  });

  test('an order is read only by the client that placed it (its session cookie)', async () => {
    const placed = await fetch(`${demo.url}/shop/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ product_id: 'goiabada-cascao', quantity: 1 }] }),
    });
    assert.equal(placed.status, 201);
    const { order_id: id } = (await placed.json()) as { order_id: string };
    const cookie = placed.headers.get('set-cookie')!.split(';')[0]!;
    assert.match(placed.headers.get('set-cookie')!, /HttpOnly/);
    const own = await getJson(`${demo.url}/shop/orders/${id}`, { headers: { cookie } });
    assert.equal(own.status, 200);
    assert.equal(own.body.order_id, id);
    const stranger = await getJson(`${demo.url}/shop/orders/${id}`);
    assert.equal(stranger.status, 404);
    assert.equal(stranger.body.error.code, 'not_found');
    const other = await getJson(`${demo.url}/shop/orders/${id}`, { headers: { cookie: `shop_session=${'x'.repeat(32)}` } });
    assert.equal(other.status, 404);
  });
  test('refunds a paid order to test customers: part, a refusal, the rest, and no more than was paid', { timeout: 60_000 }, async () => {
    const order = await placeOrder(demo, { 'queijo-canastra': 1 });
    await payOrder(demo, order);
    const totalCents = priceOf('queijo-canastra');

    const first = await refund(demo, order.id, order.cookie, { customer: 'ana', value: 10 });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.equal(first.body.refund.status, 'pending');
    assert.equal(first.body.refund.value, 10);
    assert.equal(first.body.refund.pix_key, 'a***@cliente.example', 'the key as the proxy masks it');
    assert.match(first.body.refund.transfer_id, /^tr_/);
    assert.deepEqual(
      first.body.order.refunds.map((r: any) => r.transfer_id),
      [first.body.refund.transfer_id],
    );

    // Diego's bank refuses up front: nothing moves, and it does not count against what is left.
    const refused = await refund(demo, order.id, order.cookie, { customer: 'diego' });
    assert.equal(refused.status, 201, JSON.stringify(refused.body));
    assert.equal(refused.body.refund.status, 'refused');
    assert.equal(refused.body.refund.reason, 'bank_refused');
    assert.equal(refused.body.refund.reason_text, 'o banco do cliente recusou');

    // No value: the rest.
    const rest = await refund(demo, order.id, order.cookie, { customer: 'ana' });
    assert.equal(rest.status, 201, JSON.stringify(rest.body));
    assert.equal(Math.round(rest.body.refund.value * 100), totalCents - 1000);

    // Nothing is left: the proxy's 409, passed on with its code and message.
    const third = await refund(demo, order.id, order.cookie, { customer: 'ana', value: 1 });
    assert.equal(third.status, 409);
    assert.equal(third.body.error.code, 'refund_exceeds_paid');
    assert.equal(third.body.error.message, 'This checkout has been refunded in full.');
    assert.deepEqual(third.body.error.fields, { value: 'nothing is left to refund' });

    const listed = await orderOf(demo, order.id, order.cookie);
    // Diego's refusal asked for all that was left then, as the last one did.
    assert.deepEqual(
      listed.body.refunds.map((r: any) => [r.status, Math.round(r.value * 100)]),
      [
        ['pending', 1000],
        ['refused', totalCents - 1000],
        ['pending', totalCents - 1000],
      ],
    );

    // Ana's bank answers 5 s of sandbox time later: approved, through the partner's webhook to the
    // proxy, which the shop reads (and its signed transfer.approved tells it).
    await stackControl(demo.stack, 'POST', '/clock/advance', { seconds: 6 });
    const settled = await orderUntil(
      demo,
      order.id,
      order.cookie,
      'both refunds approved',
      (o) => o.refunds.filter((r: any) => r.status === 'approved').length === 2,
    );
    assert.deepEqual(
      settled.refunds.map((r: any) => r.status),
      ['approved', 'refused', 'approved'],
    );
    assert.equal(settled.status, 'paid', 'a refunded order stays paid');

    // The panel's log: the shop's three requests, and the outcomes the proxy signed, with the order.
    const entries = await waitFor('the transfer webhooks in the log', async () => {
      const { body } = await getJson(`${demo.url}/shop/test/log?limit=200`);
      const transfers = body.entries.filter((e: any) => e.kind === 'webhook' && String(e.type).startsWith('transfer.'));
      return transfers.length >= 3 ? body.entries : undefined;
    });
    const refundNotes = entries.filter((e: any) => e.kind === 'refund').map((e: any) => e.note);
    assert.equal(refundNotes.length, 3);
    assert.match(refundNotes[1], /recusado \(o banco do cliente recusou\)/);
    const outcomes = entries.filter((e: any) => e.kind === 'webhook' && String(e.type).startsWith('transfer.'));
    assert.deepEqual(outcomes.map((e: any) => e.type).sort(), ['transfer.approved', 'transfer.approved', 'transfer.refused']);
    for (const e of outcomes) {
      assert.equal(e.order_id, order.id);
      assert.match(e.note, new RegExp(`reembolso de .* do pedido ${order.id}`));
    }
  });

  test(
    "a paid order returned (the test panel's devolução, issue 37): the shop is told, and what was returned is never refunded again",
    { timeout: 60_000 },
    async () => {
      const order = await placeOrder(demo, { 'queijo-canastra': 1 });
      await payOrder(demo, order);
      const paid = (await orderOf(demo, order.id, order.cookie)).body;
      assert.match(paid.payment_reference, /./, 'the panel knows what to return');
      // The panel's button: the sandbox gives the payment back and notifies the proxy (through its secret path).
      await stackControl(demo.stack, 'POST', `/payments/${encodeURIComponent(paid.payment_reference)}/return`);
      const entries = await waitFor('payment.returned in the log', async () => {
        const { body } = await getJson(`${demo.url}/shop/test/log?limit=200`);
        return body.entries.some((e: any) => e.type === 'payment.returned') ? body.entries : undefined;
      });
      assert.match(entries.find((e: any) => e.type === 'payment.returned').note, /devolvido ao cliente/);
      const refused = await refund(demo, order.id, order.cookie, { customer: 'ana' });
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.equal(refused.body.error.code, 'refund_exceeds_paid');
    },
  );

  test('the refund route answers bad input with a 4xx and the error body, never a 500', async () => {
    const order = await placeOrder(demo, { 'goiabada-cascao': 1 });
    const raw = (body: string, contentType = 'application/json') =>
      getJson(`${demo.url}/shop/test/orders/${order.id}/refunds`, { method: 'POST', headers: { 'content-type': contentType, cookie: order.cookie }, body });
    const cases: [string, Promise<{ status: number; body: any }>, number, string, string?][] = [
      ['an unknown customer', refund(demo, order.id, order.cookie, { customer: 'zeca' }), 400, 'invalid_request', 'customer'],
      ['no customer', refund(demo, order.id, order.cookie, { value: 5 }), 400, 'invalid_request', 'customer'],
      ['a key of its own', refund(demo, order.id, order.cookie, { customer: 'ana', pix_key: 'x@y.example' }), 400, 'invalid_request', 'pix_key'],
      ['a value in fractions of a cent', refund(demo, order.id, order.cookie, { customer: 'ana', value: 1.005 }), 400, 'invalid_request', 'value'],
      ['a value below the least transfer', refund(demo, order.id, order.cookie, { customer: 'ana', value: 0.1 }), 400, 'invalid_request', 'value'],
      ['a negative value', refund(demo, order.id, order.cookie, { customer: 'ana', value: -5 }), 400, 'invalid_request', 'value'],
      ['a value in words', refund(demo, order.id, order.cookie, { customer: 'ana', value: 'dez' }), 400, 'invalid_request', 'value'],
      ['not JSON', raw('{"customer":'), 400, 'invalid_json'],
      ['not a JSON content type', raw('customer=ana', 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type'],
      ['a huge body', raw(JSON.stringify({ customer: 'ana', pad: 'x'.repeat(20_000) })), 413, 'payload_too_large'],
      ['an unknown order', refund(demo, '999999', order.cookie, { customer: 'ana' }), 404, 'not_found'],
      ['a malformed order id', refund(demo, 'abc', order.cookie, { customer: 'ana' }), 400, 'invalid_request', 'id'],
      ["another client's order", refund(demo, order.id, `shop_session=${'x'.repeat(32)}`, { customer: 'ana' }), 404, 'not_found'],
      // Valid, but the order is not paid: the proxy's 409, passed on.
      ['an unpaid order', refund(demo, order.id, order.cookie, { customer: 'ana' }), 409, 'checkout_not_paid'],
    ];
    for (const [what, answer, status, code, field] of cases) {
      const { status: got, body } = await answer;
      assert.equal(got, status, `${what}: status (${JSON.stringify(body)})`);
      assert.equal(body.error.code, code, `${what}: code`);
      assert.equal(typeof body.error.message, 'string', `${what}: message`);
      if (field) assert.ok(body.error.fields && field in body.error.fields, `${what}: names ${field} in ${JSON.stringify(body.error.fields)}`);
    }
    assert.deepEqual(demo.shop.order(order.id)!.refunds, [], 'nothing refunded');
  });

  test("the refund customers are the sandbox's test customers, with their own keys", () => {
    for (const [first, customer] of Object.entries(REFUND_CUSTOMERS)) {
      const known = TEST_CUSTOMERS.find((c) => c.name === customer.name);
      assert.ok(known, `${first}: ${customer.name} is a sandbox test customer`);
      assert.ok(known.name.toLowerCase().startsWith(first), `${first} names ${known.name}`);
      assert.ok(Object.values(known.keys).includes(customer.pixKey), `${first}: ${customer.pixKey} is one of their keys`);
    }
  });
});

describe("the shop's webhook receiver", () => {
  const secret = 'shop-webhook-secret';
  const event = (id: string, type: string, data: Record<string, unknown>) =>
    JSON.stringify({ id, type, created_at: new Date().toISOString(), data: { reference: 'ref-1', value: 10, checkout_id: null, order_id: null, ...data } });

  test('takes signed events once, refuses unsigned or stale ones (401, logged) and bodies that are not events (400)', async () => {
    // Its routes alone, with no stack behind them: a webhook needs none.
    const shop = createShop({ proxy: () => undefined, webhookSecret: secret, sandbox: true });
    const deliver = async (body: string, headers: Record<string, string>) => {
      const res = await shop.app.request('/shop/webhooks/pix', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
      return { status: res.status, body: await res.json() };
    };
    const refused = event('evt_refused', 'transfer.refused', {
      status: 'refused',
      transfer_id: 'tr_1',
      reason: 'bank_refused',
      order_id: '4242',
      checkout_id: 'co_x',
    });
    const signed = { [SIGNATURE_HEADER]: signWebhook(refused, secret), [EVENT_ID_HEADER]: 'evt_refused' };

    assert.deepEqual(await deliver(refused, signed), { status: 200, body: { received: true, duplicate: false } });
    assert.deepEqual(await deliver(refused, signed), { status: 200, body: { received: true, duplicate: true } }, 'the same event again changes nothing');

    const answers: [string, Promise<{ status: number; body: any }>, number, string][] = [
      ['unsigned', deliver(refused, {}), 401, 'unauthorized'],
      ['signed with another secret', deliver(refused, { [SIGNATURE_HEADER]: signWebhook(refused, 'another') }), 401, 'unauthorized'],
      ['signed ten minutes ago', deliver(refused, { [SIGNATURE_HEADER]: signWebhook(refused, secret, Date.now() - 600_000) }), 401, 'unauthorized'],
      ['signed, but not JSON', deliver('{"id":', { [SIGNATURE_HEADER]: signWebhook('{"id":', secret) }), 400, 'invalid_request'],
      ['signed, but not an event', deliver('{"id":"evt_x"}', { [SIGNATURE_HEADER]: signWebhook('{"id":"evt_x"}', secret) }), 400, 'invalid_request'],
      ["another event's id in the header", deliver(refused, { ...signed, [EVENT_ID_HEADER]: 'evt_other' }), 400, 'invalid_request'],
    ];
    for (const [what, answer, status, code] of answers) {
      const { status: got, body } = await answer;
      assert.equal(got, status, `${what}: status`);
      assert.equal(body.error.code, code, `${what}: code`);
    }

    const log = (await (await shop.app.request('/shop/test/log?limit=200')).json()) as { entries: any[] };
    assert.deepEqual(
      log.entries.map((e) => [e.kind, e.note]),
      [
        ['webhook', 'transfer.refused · reembolso de R$\u00a010,00 do pedido 4242, pedido desconhecido · assinatura válida.'],
        ['webhook', 'transfer.refused · reembolso de R$\u00a010,00 do pedido 4242, pedido desconhecido · assinatura válida · repetido, ignorado.'],
        ['webhook_rejected', 'Webhook recusado: sem assinatura.'],
        ['webhook_rejected', 'Webhook recusado: assinatura inválida.'],
        ['webhook_rejected', 'Webhook recusado: assinatura fora da janela de tempo (repetição, ou um relógio errado).'],
      ],
    );
  });
});
