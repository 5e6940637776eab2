/**
 * The server-rendered widget (server/ssr/render.ts) and the demo store's order page that uses it
 * (GET /pagamento/:checkout_id, demo/order-page.ts), against the real stack: the sandbox over HTTPS,
 * the proxy, the store. The QR code must be in the HTML itself, before any script runs: the test
 * reads the page as text (no browser, nothing executed), draws the QR's SVG path from the markup into
 * pixels and decodes them with jsQR, a decoder that is not ours, and compares with the payment's code
 * as the proxy gives it to the merchant's server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDemo, type RunningDemo } from '../../../demo/server.ts';
import { createCheckoutClient, type CheckoutClient } from '../../../server/index.ts';
import { isPhoneRequest, renderPaymentRequest, renderPixCheckout } from '../../../server/ssr/render.ts';
import type { PaymentView } from '../../../src/shared/index.ts';
import { jsQR } from '../../support/jsqr.ts';

/** Pixels of the QR drawn from an SVG viewBox side and a path of `M x y h w v1 h-w z` runs (src/qr.ts). */
function decodeSvgQr(size: number, d: string): string | null {
  const scale = 4;
  const side = size * scale;
  const pixels = new Uint8ClampedArray(side * side * 4).fill(255);
  let runs = 0;
  for (const [, x, y, w] of d.matchAll(/M(\d+) (\d+)h(\d+)v1h-\d+z/g)) {
    runs++;
    for (let row = Number(y) * scale; row < (Number(y) + 1) * scale; row++) {
      for (let col = Number(x) * scale; col < (Number(x) + Number(w)) * scale; col++) pixels.fill(0, (row * side + col) * 4, (row * side + col) * 4 + 3);
    }
  }
  assert.ok(runs > 100, `the path has ${runs} runs of dark modules`);
  return jsQR(pixels, side, side)?.data ?? null;
}

/** The widget's QR, code field and payment attribute, read from the HTML as a parser would see it before any script. */
function readRendered(html: string, id = 'shop-checkout') {
  const element = new RegExp(`<pix-checkout\\b[^>]*\\bid="${id}"[^>]*>([^]*?)</pix-checkout>`).exec(html);
  assert.ok(element, 'the page has the <pix-checkout> element');
  const open = /^<pix-checkout\b[^>]*>/.exec(element[0])![0];
  const inner = element[1]!;
  assert.match(inner, /^<template shadowroot="open" shadowrootmode="open">/, 'its first child is a declarative shadow root');
  const svg = /<svg part="qr"[^>]*viewBox="0 0 (\d+) \1"[^>]*>[^]*?<path d="([^"]+)"/.exec(inner);
  assert.ok(svg, 'the shadow root has the QR as an SVG path');
  const code = /<textarea\b[^>]*part="code"[^>]*>([^<]*)<\/textarea>/.exec(inner);
  const payment = /\bpayment="([^"]*)"/.exec(open);
  const unescape = (text: string) =>
    text
      .replace(/&#(\d+);/g, (_m, n: string) => String.fromCharCode(Number(n)))
      .replace(/&quot;/g, '"')
      .replace(/&amp;/g, '&');
  return {
    open,
    inner,
    qr: decodeSvgQr(Number(svg[1]), svg[2]!),
    code: code ? unescape(code[1]!) : null,
    payment: payment ? (JSON.parse(unescape(payment[1]!)) as PaymentView) : null,
  };
}

describe('the order page, server-rendered', () => {
  let demo: RunningDemo;
  let merchant: CheckoutClient;
  before(async () => {
    demo = await startDemo();
    merchant = createCheckoutClient({ url: demo.stack.apiUrl, apiKey: demo.stack.apiKey });
  });
  after(() => demo.close());

  async function placeOrder(): Promise<{ order_id: string; checkout_id: string }> {
    const res = await fetch(new URL('/shop/orders', demo.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ product_id: 'cafe-especial', quantity: 2 }] }),
    });
    assert.equal(res.status, 201);
    return (await res.json()) as { order_id: string; checkout_id: string };
  }

  test('has the QR of the payment code in its HTML, readable before any script runs', async () => {
    const order = await placeOrder();
    const res = await fetch(new URL(`/pagamento/${order.checkout_id}`, demo.url));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const html = await res.text();
    const checkout = await merchant.checkouts.retrieve(order.checkout_id);
    const brcode = checkout.payment!.brcode;
    const rendered = readRendered(html);
    assert.equal(rendered.qr, brcode, 'jsQR reads the payment code from the QR in the markup');
    assert.equal(rendered.code, brcode, 'the code field holds the code, selectable without script');
    assert.equal(rendered.payment?.reference, checkout.payment!.reference, 'the element carries its payment');
    assert.equal(rendered.payment?.renewable, true, 'a checkout with renewals left offers more time');
    assert.match(rendered.inner, /<p part="amount">(<!--[^>]*-->)*R\$\s?79,80/, 'the amount');
    assert.match(rendered.inner, /<time datetime="PT\d+S">(<!--[^>]*-->)*(\d+:)?\d\d:\d\d/, 'the countdown starts at the time left');
    // The page's payment step is open before its script runs, with the order's number.
    assert.match(html, /<section id="step-payment" class="step card" aria-labelledby="payment-title">/);
    assert.match(html, new RegExp(`<span id="payment-order">${order.order_id}</span>`));
    assert.match(html, /<script type="application\/json" id="shop-order">\{"order_id"/);
    // The first paint waits for the widget's markup (Chromium), never the header alone: the element
    // named is the one after the widget (Chromium unblocks at the named element's start tag).
    assert.match(html, /<link rel="expect" href="#shop-order" blocking="render" \/>/);
    assert.ok(html.indexOf('</pix-checkout>') < html.indexOf('id="shop-order"'), 'the expected element comes after the widget');
  });

  test('puts the copy first for a phone, as the widget does on a narrow screen', async () => {
    const order = await placeOrder();
    const read = async (headers: Record<string, string>) =>
      readRendered(await (await fetch(new URL(`/pagamento/${order.checkout_id}`, demo.url), { headers })).text()).inner;
    const phone = await read({ 'user-agent': 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/140.0 Mobile Safari/537.36' });
    const desktop = await read({ 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/140.0 Safari/537.36' });
    assert.ok(phone.indexOf('part="code"') < phone.indexOf('part="qr"'), 'phone: the code before the QR');
    assert.ok(desktop.indexOf('part="qr"') < desktop.indexOf('part="code"'), 'desktop: the QR before the code');
    assert.match(phone, /part="share-button"/, 'phone: the share button it will have');
    assert.doesNotMatch(desktop, /part="share-button"/);
  });

  test('serves the script-tag modes the bench compares, and refuses another', async () => {
    const order = await placeOrder();
    const page = async (render: string) => fetch(new URL(`/pagamento/${order.checkout_id}?render=${render}`, demo.url));
    const script = await (await page('script')).text();
    assert.match(script, new RegExp(`<pix-checkout id="shop-checkout" endpoint="/api" checkout="${order.checkout_id}"></pix-checkout>`));
    assert.doesNotMatch(script, /shadowrootmode|modulepreload/);
    assert.match(await (await page('script-preload')).text(), /<link rel="modulepreload" href="\/api\/pix-checkout.js" \/>/);
    const bad = await page('zz');
    assert.equal(bad.status, 400);
    const body = (await bad.json()) as { error: { code: string; fields: Record<string, string> } };
    assert.equal(body.error.code, 'invalid_request');
    assert.ok(body.error.fields.render);
  });

  test('answers 404 for a checkout the store has no order for, whatever the path holds', async () => {
    for (const id of ['co_AAAAAAAAAAAAAAAAAAAAAAAA', 'é'.repeat(27), 'x'.repeat(5000), '%00']) {
      const res = await fetch(new URL(`/pagamento/${encodeURIComponent(id)}`, demo.url));
      assert.equal(res.status, 404, id);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'not_found');
    }
  });

  test("opens the order's API with the page's checkout id on a device without the session", async () => {
    const order = await placeOrder();
    const url = (checkout: string) => new URL(`/shop/orders/${order.order_id}?checkout=${checkout}`, demo.url);
    assert.equal((await fetch(url(order.checkout_id))).status, 200);
    assert.equal((await fetch(url('co_AAAAAAAAAAAAAAAAAAAAAAAA'))).status, 404);
    assert.equal((await fetch(url(encodeURIComponent('é'.repeat(27))))).status, 404, 'a non-ASCII value of the same length: 404, not a 500');
    assert.equal((await fetch(new URL(`/shop/orders/${order.order_id}`, demo.url))).status, 404);
    // The link reads the order; it refunds nothing.
    const refund = await fetch(new URL(`/shop/test/orders/${order.order_id}/refunds?checkout=${order.checkout_id}`, demo.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customer: 'ana', value: 1 }),
    });
    assert.equal(refund.status, 404);
  });
});

describe('renderPixCheckout', () => {
  const now = Date.now();
  const payment: PaymentView = {
    reference: 'ref_1',
    status: 'pending',
    value: 10.5,
    // Each test sets its own code.
    brcode: '',
    qr_code_url: 'https://partner.example/qr.png',
    checkout_url: 'https://partner.example/pay/ref_1',
    created_at: new Date(now).toISOString(),
    expires_at: new Date(now + 600_000).toISOString(),
    favoured: 'Loja <Exemplo> & "Filhos"',
    server_time: new Date(now).toISOString(),
  };
  const checkout = { checkout_id: 'co_AAAAAAAAAAAAAAAAAAAAAAAA', renewals_left: 0 };

  test('renders in the locale asked for, escaping what the merchant and partner wrote', async () => {
    const html = await renderPixCheckout({ ...checkout, payment: { ...payment, brcode: 'not a code <b>' } }, { endpoint: '/api', locale: 'es', id: 'a"b' });
    assert.match(html, /<pix-checkout\s+id="a&quot;b" endpoint="\/api" checkout="co_A{24}" locale="es"/);
    assert.match(html, /Esperando el pago|Esperando pago/);
    assert.match(html, /Loja &lt;Exemplo&gt; &amp; &quot;Filhos&quot;|Loja &lt;Exemplo&gt; &amp; &#34;Filhos&#34;/);
    // A code that fails its check is never drawn: the partner's image instead, and the field escapes it.
    assert.match(html, /<img part="qr" src="https:\/\/partner.example\/qr.png"/);
    assert.match(html, /<textarea\b[^>]*>not a code &#60;b&#62;<\/textarea>/);
    assert.match(html, /&quot;renewable&quot;:false/, 'no renewals left: no offer of more time');
  });

  test("carries the page's CSP nonce on its style element and its copy button's inline handler", async () => {
    const html = await renderPixCheckout({ ...checkout, payment: { ...payment, brcode: 'x' } }, { endpoint: '/api', nonce: 'r4nd0m"' });
    assert.match(html, /<style nonce="r4nd0m&#34;">:host\{/);
    assert.equal(html.match(/<style\b/g)?.length, 1);
    // Right after the element (it finds the element as its previous sibling), in the page's language.
    assert.match(
      html,
      /<\/pix-checkout>(<!--[^>]*-->)*<script nonce="r4nd0m&#34;">\(\(e,t\)=>\{[^<]*\}\)\(document\.currentScript\.previousElementSibling,\{[^<]*"copied":"Código copiado"[^<]*<\/script>$/,
    );
  });

  test('link mode has no copy button, and no inline handler', async () => {
    const html = await renderPixCheckout({ ...checkout, payment }, { endpoint: '/api', mode: 'link' });
    assert.match(html, /<pix-checkout\b[^>]*\bmode="link"/);
    assert.doesNotMatch(html, /<script/);
  });

  test("without a payment, the plain element and the page's request of its payment (renderPaymentRequest), which its script takes", async () => {
    const html = await renderPixCheckout(checkout, { endpoint: '/api' });
    assert.equal(
      html,
      `<pix-checkout endpoint="/api" checkout="co_AAAAAAAAAAAAAAAAAAAAAAAA" locale="pt-BR"></pix-checkout>${renderPaymentRequest(checkout.checkout_id, { endpoint: '/api' })}`,
    );
    // The page's own attributes are kept; the nonce is the request script's.
    assert.equal(
      await renderPixCheckout(checkout, { endpoint: '/api', id: 'pay', layout: 'phone', theme: 'dark', nonce: 'n0' }),
      // Its own layout: the request alone (the page's first screen goes only into an element in the default layout).
      `<pix-checkout id="pay" endpoint="/api" checkout="co_AAAAAAAAAAAAAAAAAAAAAAAA" locale="pt-BR" layout="phone" theme="dark"></pix-checkout>${renderPaymentRequest(checkout.checkout_id, { endpoint: '/api', nonce: 'n0', firstScreen: false })}`,
    );
    // With the payment's first screen, in the element's language.
    assert.match(html, /<script>[^<]*fetch\(u\+"\?render=pt-BR",\{method:"POST"\}\)/);
    assert.match(await renderPixCheckout(checkout, { endpoint: '/api', locale: 'en' }), /<script>[^<]*fetch\(u\+"\?render=en",/);
  });

  test('missing is missing: a checkout or an endpoint not set says so', async () => {
    await assert.rejects(
      renderPixCheckout(undefined as unknown as typeof checkout, { endpoint: '/api' }),
      (error: Error) => error instanceof TypeError && /^renderPixCheckout: checkout is not set \(/.test(error.message),
    );
    for (const options of [{}, undefined])
      await assert.rejects(
        renderPixCheckout(checkout, options as unknown as { endpoint: string }),
        (error: Error) => error instanceof TypeError && /^renderPixCheckout: endpoint is not set \(/.test(error.message),
      );
  });

  test('refuses a payment that is not a payment view', async () => {
    await assert.rejects(renderPixCheckout({ ...checkout, payment: { reference: 'x' } as unknown as PaymentView }, { endpoint: '/api' }), TypeError);
  });

  test("a paid payment without paid_at: its receipt says when the proxy answered, in the server's time zone", async () => {
    const html = await renderPixCheckout(
      { ...checkout, payment: { ...payment, brcode: 'x', status: 'paid', server_time: '2026-11-26T15:04:05.000Z' } },
      { endpoint: '/api', locale: 'en' },
    );
    assert.match(html, /<time datetime="2026-11-26T15:04:05.000Z">/);
    assert.doesNotMatch(html, /1970/);
  });

  test('guesses the layout from the headers: a phone, the share sheet', async () => {
    const render = (ua: string) =>
      renderPixCheckout({ ...checkout, payment: { ...payment, brcode: 'x' } }, { endpoint: '/api', headers: { 'user-agent': ua } });
    const order = (html: string) => (html.indexOf('part="code"') < html.indexOf('part="qr"') ? 'code first' : 'qr first');
    const android = await render('Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/140.0 Mobile Safari/537.36');
    const safariMac = await render('Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Safari/605.1.15');
    const firefoxLinux = await render('Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0');
    assert.deepEqual([order(android), order(safariMac), order(firefoxLinux)], ['code first', 'qr first', 'qr first']);
    assert.deepEqual(
      [android, safariMac, firefoxLinux].map((html) => html.includes('part="share-button"')),
      [true, true, false],
    );
  });

  test('isPhoneRequest reads the client hint first, then the User-Agent', () => {
    assert.equal(isPhoneRequest({ 'sec-ch-ua-mobile': '?1' }), true);
    assert.equal(isPhoneRequest({ 'sec-ch-ua-mobile': '?0', 'user-agent': 'iPhone' }), false);
    assert.equal(isPhoneRequest(new Headers({ 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X)' })), true);
    assert.equal(isPhoneRequest({ 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64)' }), false);
    assert.equal(isPhoneRequest({}), false);
  });
});
