/**
 * What reaches the widget with the page, before any element connects: a payment the merchant's server
 * wrote into the page (`payment-from`: a `<script type="application/json">` element), the checkout's
 * payment the page itself asked for as it was parsed (renderPaymentRequest's script in its head), and
 * else the checkout's payment asked for while the script is still being evaluated (startEarly).
 */
import { ProxyClient, type Answer } from './api/client.ts';
import { markOnce } from './marks.ts';
import type { PaymentView } from './shared/contract.ts';
import { CHECKOUT_PATHS, EARLY_REQUESTS, fillPath, isPaymentView } from './shared/wire.ts';

/**
 * The payment in the page's `<script type="application/json" id=...>` named by `id` (looked up in the
 * element's own tree first, then the document); null when there is none, or it holds no payment view
 * (then the widget asks the proxy, as without it).
 */
export function paymentInPage(host: Element, id: string | null | undefined): PaymentView | null {
  if (!id) return null;
  const root = host.getRootNode() as Document | ShadowRoot;
  const script = root.getElementById?.(id) ?? document.getElementById(id);
  try {
    const data: unknown = JSON.parse(script?.textContent ?? '');
    return isPaymentView(data) ? data : null;
  } catch {
    return null;
  }
}

type CheckoutAnswer = ReturnType<ProxyClient['checkoutPayment']>;

/** Checkout payments asked for at evaluation, by endpoint and checkout, until their element takes them. */
const early = new Map<string, CheckoutAnswer>();

const keyOf = (endpoint: string, checkout: string) => `${new URL(endpoint, location.href).href}|${checkout}`;

/**
 * The answer to the request the page sent for this checkout as it was parsed, read by the widget's
 * own client, once; undefined when the page sent none. The page's script
 * (server/merchant/payment-request.ts) reads the answer whole into an `Answer`, so taking it needs no
 * task: the first QR can render in the same task as the script's evaluation. Read tolerantly: an
 * entry that is not a request is left alone, and the widget asks for itself.
 */
function pageAnswer(endpoint: string, checkout: string): CheckoutAnswer | undefined {
  const requests = (globalThis as { [EARLY_REQUESTS]?: Record<string, unknown> })[EARLY_REQUESTS];
  if (!requests) return undefined;
  const client = new ProxyClient(endpoint);
  const url = new URL(client.urlOf(fillPath(CHECKOUT_PATHS.checkoutPayment, { id: checkout })), location.href).href;
  const sent = requests[url];
  if (!(sent instanceof Promise)) return undefined;
  delete requests[url];
  return client.checkoutPayment(checkout, undefined, {}, sent as Promise<Answer>);
}

/**
 * Runs once, when the script is evaluated (src/define.ts imports it before the element's code, so
 * before lit is even set up). A module script runs after the document is parsed: every
 * `<pix-checkout endpoint checkout>` the page wrote is there, and the checkout's payment (`POST
 * {endpoint}/checkouts/:id/payment`, the same call the element makes) is asked for now rather than
 * once the element has connected. Not for elements that carry their payment (`payment`,
 * `payment-from`, a server-rendered shadow root). The page's `fetch`, not the element's `environment`.
 */
export function startEarly(): void {
  if (typeof document === 'undefined') return;
  for (const el of document.querySelectorAll('pix-checkout[checkout]:not([payment],[payment-from])')) {
    const endpoint = el.getAttribute('endpoint')!;
    const checkout = el.getAttribute('checkout')!;
    if (el.shadowRoot || !endpoint || !checkout) continue;
    let key: string;
    try {
      key = keyOf(endpoint, checkout);
    } catch {
      // Not a URL: the element says so itself when it starts; the script must still load.
      continue;
    }
    if (early.has(key)) continue;
    let answer = pageAnswer(endpoint, checkout);
    if (!answer) {
      markOnce('pix-checkout:request');
      answer = new ProxyClient(endpoint).checkoutPayment(checkout);
    }
    // Taken (and its failure handled) by the element; one never taken must not be an unhandled rejection.
    answer.catch(() => {});
    early.set(key, answer);
  }
}

/**
 * The answer startEarly asked for this checkout, or else the one the page asked for (an element the
 * page's own script added after the widget's script ran), once: a later start asks anew.
 */
export function takeEarly(endpoint: string, checkout: string): CheckoutAnswer | undefined {
  const key = keyOf(endpoint, checkout);
  const answer = early.get(key);
  early.delete(key);
  return answer ?? pageAnswer(endpoint, checkout);
}
