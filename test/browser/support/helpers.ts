import { expect, fixture, html, oneEvent, waitUntil } from '@open-wc/testing';
import { executeServerCommand } from '@web/test-runner-commands';
import '../../../src/define.ts';
import type { PixEnvironment } from '../../../src/controllers/environment.ts';
import type { PixCheckout } from '../../../src/pix-checkout.ts';
import type { CheckoutView, PaymentView } from '../../../src/shared/contract.ts';
import { FakeClock } from './fake-clock.ts';

/** A server command of the dev-stack plugin, answered with what it returns. */
export function command<R>(name: string, payload?: unknown): Promise<R> {
  return executeServerCommand<R, unknown>(name, payload);
}

export const stack = await command<{ url: string; apiUrl: string }>('dev-stack');

/** A stack whose proxy refuses the status stream (404 on the events path). */
export async function noStreamStack(): Promise<{ url: string; apiUrl: string }> {
  return command<{ url: string; apiUrl: string }>('dev-stack-nostream');
}

/** A stack whose proxy allows one renewal per checkout (the shared one allows the default, 3). */
export async function renewalsStack(): Promise<{ url: string; apiUrl: string }> {
  return command<{ url: string; apiUrl: string }>('dev-stack-renewals');
}

export type Which = 'nostream' | 'renewals';

/** The merchant's server creating a checkout (POST /checkouts with the API key); answers its CheckoutView. */
export async function createCheckout(value: number, which?: Which): Promise<CheckoutView> {
  const order_id = `order-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const res = await command<{ status: number; body: CheckoutView }>('create-checkout', { value, order_id, stack: which });
  if (res.status !== 201) throw new Error(`create checkout answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

export const part = (el: PixCheckout, name: string) => el.shadowRoot!.querySelector<HTMLElement>(`[part~="${name}"]`);
export const text = (el: PixCheckout, name: string) => part(el, name)?.textContent?.replace(/\s+/g, ' ').trim() ?? null;
export const announced = (el: PixCheckout) => el.shadowRoot!.querySelector('[role="status"]')!.textContent.trim();

export async function pay(reference: string, which?: Which): Promise<void> {
  const res = await command<{ status: number }>('sandbox-pay', { reference, stack: which });
  if (res.status !== 200) throw new Error(`sandbox pay answered ${res.status}`);
}

export async function advanceSandbox(seconds: number, which?: Which): Promise<void> {
  await executeServerCommand('sandbox-advance', { seconds, stack: which });
}

/** Every test starts without a saved payment, so each gets its own. */
export function forgetSavedPayments(): void {
  sessionStorage.clear();
}

export interface Mount {
  el: PixCheckout;
  payment: PaymentView;
}

/** A widget against `apiUrl` (the shared stack by default), waited for until its payment is on screen. */
export async function mount(options: ElementOptions = {}): Promise<Mount> {
  const el = await createElement(options);
  const { detail } = await oneEvent(el, 'pix-created');
  await el.updateComplete;
  return { el, payment: detail.payment };
}

interface ElementOptions {
  checkout?: string;
  amount?: number;
  description?: string;
  apiUrl?: string;
  env?: Partial<PixEnvironment>;
  attrs?: Record<string, string>;
}

/** A widget on the page, rendered. */
export async function createElement(options: ElementOptions = {}): Promise<PixCheckout> {
  return fixture<PixCheckout>(html`${newElement(options)}`);
}

/**
 * A widget not yet on the page: a test listens to it before `fixture` connects it, for events that may
 * come at once (Firefox refuses a closed port in about a millisecond).
 */
export function newElement(options: ElementOptions = {}): PixCheckout {
  const el = document.createElement('pix-checkout');
  el.environment = options.env ?? {};
  for (const [name, value] of Object.entries(options.attrs ?? {})) el.setAttribute(name, value);
  el.endpoint = options.apiUrl ?? stack.apiUrl;
  if (options.description) el.description = options.description;
  // Checkout mode takes no amount: set one only when the test asks (to prove it is ignored).
  if (options.checkout !== undefined) el.checkout = options.checkout;
  if (options.amount !== undefined || options.checkout === undefined) el.amount = options.amount ?? 10;
  return el;
}

export async function screenIs(el: PixCheckout, screen: PixCheckout['screen']): Promise<void> {
  await waitUntil(() => el.screen === screen, `screen ${screen} (is ${el.screen})`, { timeout: 10_000 });
  await el.updateComplete;
}

/** A fetch that records each request to the proxy's payment status and how many are in flight at once. */
export function recordingFetch(clock: { now(): number }) {
  const reads: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const impl: typeof fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : input.toString();
    const isRead = (init?.method ?? 'GET') === 'GET' && /\/payments\/[^/]+$/.test(url);
    if (isRead) {
      reads.push(clock.now());
      maxInFlight = Math.max(maxInFlight, ++inFlight);
    }
    try {
      const res = await fetch(input, init);
      // Buffered, so the widget's own reading of the body settles without more network.
      const body = await res.text();
      return new Response(body, { status: res.status, headers: res.headers });
    } finally {
      if (isRead) inFlight--;
    }
  };
  return {
    fetch: impl,
    reads,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
  };
}

/** Lets pending promise callbacks (a buffered response being read) run. */
export const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * Approves one payment through a widget of its own, then removes it: a canceled code proves itself only
 * once an approved one has (docs/partner-status-codes.md).
 */
export async function approveOnePayment(): Promise<void> {
  const first = await mount({ amount: 4.43, env: { clock: new FakeClock(), EventSource: null } });
  const paid = oneEvent(first.el, 'pix-paid');
  await pay(first.payment.reference);
  window.dispatchEvent(new Event('focus'));
  await paid;
  first.el.remove();
}

/** Presses the expired screen's "Gerar novo código" and answers the new code's pix-created detail. */
export async function renew(el: PixCheckout, expired: string) {
  const button = part(el, 'renew-button')!;
  expect(button.textContent.trim()).to.equal('Gerar novo código');
  const created = oneEvent(el, 'pix-created');
  button.click();
  const next = (await created).detail;
  expect(next.payment.reference).to.not.equal(expired);
  expect(next.resumed).to.equal(false);
  return next;
}
