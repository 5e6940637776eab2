/**
 * The demo store's order page (`GET /pagamento/:checkout_id`): the store's page with the payment step
 * open and the widget rendered by this server with the order's payment inside (renderPixCheckout,
 * pix-checkout-server/render), so the QR code is in the page's first paint, before any script
 * runs; a reload, or the link opened on another device, shows it at once. The page's script
 * (demo/shop.js) finds the order in `#shop-order` and carries on from there.
 *
 * `bench/phone.ts` renders the same page in the script-tag modes, to compare them.
 */
import { readFileSync } from 'node:fs';
import type { CheckoutView } from '../src/shared/index.ts';
// As a merchant's server imports it: pix-checkout-server/render.
import { renderPaymentRequest, renderPixCheckout, type RequestHeaders } from '../server/ssr/render.ts';

/**
 * `ssr`: the widget rendered here with its payment inside. `script`: the plain element, its payment
 * asked for by the page's head as it is parsed (renderPaymentRequest), in parallel with the widget's
 * script's download, with its first screen, which the head puts in, and taken over by the widget when
 * it runs; `script-preload`: the plain element with
 * its payment written into the page (a `<script type="application/json">` its `payment-from` names,
 * so no request is made for it) and the script preloaded from the head (`<link rel="modulepreload">`).
 */
export type OrderPageMode = 'ssr' | 'script' | 'script-preload';
export const ORDER_PAGE_MODES: readonly OrderPageMode[] = ['ssr', 'script', 'script-preload'];

/** The order as the store's API shows it (what `#shop-order` carries to the page's script). */
export interface OrderPageOrder {
  order_id: string;
  checkout_id: string;
  [field: string]: unknown;
}

export interface OrderPageInput {
  order: OrderPageOrder;
  checkout: Pick<CheckoutView, 'checkout_id' | 'payment' | 'renewals_left'>;
  /** The proxy's browser API as the page reaches it (`/api`). */
  endpoint: string;
  /** The widget's script, as the page's head loads it. */
  scriptUrl: string;
  mode: OrderPageMode;
  /** The page's request headers: the widget's layout is guessed from them (a phone, the share sheet). */
  headers?: RequestHeaders;
  /** Overrides the guess: the customer is on a phone. */
  phone?: boolean;
}

const PAGE = new URL('index.html', import.meta.url);

/**
 * What each mode adds to the head before the script: `script-preload` fetches the script at once;
 * `ssr` holds the first paint until the widget's markup is parsed (`rel=expect`, Chromium; others
 * ignore it), so a slow phone never paints the page's header alone while the QR is still arriving.
 * It names the element right AFTER the widget (the order's JSON), not the widget: Chromium lifts the
 * block as soon as the named element is inserted, at its start tag, before the declarative shadow
 * root inside it (the QR) is parsed; naming the widget itself lets a paint in between (the misses
 * docs/performance.md measures).
 */
const HEAD_HINTS: Record<OrderPageMode, (script: string) => string> = {
  ssr: () => '<link rel="expect" href="#shop-order" blocking="render" />\n    ',
  script: () => '',
  'script-preload': (script) => `<link rel="modulepreload" href="${script}" />\n    `,
};
let shell: string | undefined;

// The demo uses the package's entries only, as a merchant's server does: its own escaping.
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** JSON inside a <script> element: `<` escaped, so no `</script>` can end it early. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/** Replaces `from` in the page, which must be there once (a changed index.html fails loudly, not silently). */
function edit(page: string, from: string, to: string): string {
  const at = page.indexOf(from);
  if (at < 0 || page.indexOf(from, at + 1) >= 0) throw new Error(`demo/index.html: expected "${from}" once`);
  return page.slice(0, at) + to + page.slice(at + from.length);
}

export async function renderOrderPage(input: OrderPageInput): Promise<string> {
  shell ??= readFileSync(PAGE, 'utf8');
  const { order, checkout, endpoint, scriptUrl, mode, headers, phone } = input;
  // The payment as the browser contract has it, with whether another code may be issued (as renderPixCheckout writes it).
  const payment =
    mode === 'script-preload' && checkout.payment ? { ...checkout.payment, renewable: checkout.payment.renewable ?? checkout.renewals_left > 0 } : null;
  const plain = `<pix-checkout id="shop-checkout" endpoint="${escapeHtml(endpoint)}" checkout="${escapeHtml(checkout.checkout_id)}"${payment ? ' payment-from="shop-payment"' : ''}></pix-checkout>`;
  const widget =
    mode === 'ssr'
      ? await renderPixCheckout(checkout, { endpoint, headers, phone, id: 'shop-checkout' })
      : payment
        ? `${plain}\n              <script type="application/json" id="shop-payment">${scriptJson(payment)}</script>`
        : plain;
  let page = shell;
  // Before the stylesheet: a classic script waits for the stylesheets above it before it runs.
  if (mode === 'script') {
    const stylesheet = '<link rel="stylesheet" href="/demo/shop.css" />';
    page = edit(page, stylesheet, `${renderPaymentRequest(checkout.checkout_id, { endpoint })}\n    ${stylesheet}`);
  }
  page = edit(
    page,
    '<script type="module" src="/api/pix-checkout.js"></script>',
    `${HEAD_HINTS[mode](escapeHtml(scriptUrl))}<script type="module" src="${escapeHtml(scriptUrl)}"></script>`,
  );
  // The payment step open, the cart's step closed: so it shows before (and without) the page's script.
  page = edit(page, '<section id="step-cart" class="step"', '<section id="step-cart" class="step" hidden');
  page = edit(
    page,
    '<section id="step-payment" class="step card" aria-labelledby="payment-title" hidden>',
    '<section id="step-payment" class="step card" aria-labelledby="payment-title">',
  );
  page = edit(page, '<span id="payment-order"></span>', `<span id="payment-order">${escapeHtml(order.order_id)}</span>`);
  page = edit(page, '<li data-step="payment">', '<li data-step="payment" aria-current="step">');
  page = edit(
    page,
    '<div id="checkout-slot" class="checkout-slot"></div>',
    `<div id="checkout-slot" class="checkout-slot">${widget}</div>\n              <script type="application/json" id="shop-order">${scriptJson(order)}</script>`,
  );
  return page;
}
