/**
 * The first screen a script-tag page's head puts into the plain <pix-checkout> (renderPaymentRequest,
 * the proxy's `?render=` answer), in the three engines: the QR, the code and a working copy button
 * before the widget's script has arrived, then the script taking it over as it takes over a server
 * render (no frame without the QR, no request of its own). The checkout is real (the dev stack's proxy
 * and sandbox); nothing is faked but the clipboard's answer.
 *
 * This file must not import the widget (nor test/browser/support/helpers.ts, which does) at its top:
 * each test file runs in a page of its own, and here the element starts undefined.
 */
import { expect } from '@open-wc/testing';
import { executeServerCommand } from '@web/test-runner-commands';
import { watchFrames } from './support/frames.ts';
import type { PixCheckout } from '../../src/pix-checkout.ts';
import type { CheckoutView } from '../../src/shared/contract.ts';

const part = (el: Element, name: string) => el.shadowRoot?.querySelector<HTMLElement>(`[part~="${name}"]`) ?? null;
const box = (el: Element | null) => {
  const r = el!.getBoundingClientRect();
  return { x: r.x, y: r.y, width: r.width, height: r.height };
};
const marks = (name: string) => performance.getEntriesByName(`pix-checkout:${name}`, 'mark').length;

/** Counts the page's requests to the proxy's checkout API. */
const requests: string[] = [];
const originalFetch = window.fetch.bind(window);
window.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
  requests.push(String(input instanceof Request ? input.url : input));
  return originalFetch(input, init);
};
const toCheckout = (id: string, from = 0) => requests.slice(from).filter((url) => url.includes(`/checkouts/${id}/payment`));

/** A checkout with no payment yet, and the element for it, as the page's HTML has it. */
async function page(attributes: Record<string, string> = {}): Promise<{ el: PixCheckout; checkout: CheckoutView; apiUrl: string }> {
  const { apiUrl } = await executeServerCommand<{ apiUrl: string }, unknown>('dev-stack');
  const order_id = `head-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const { body: checkout } = await executeServerCommand<{ body: CheckoutView }, unknown>('create-checkout', { value: 12.34, order_id });
  expect(checkout.payment ?? null, 'created without a payment: the page asks for it').to.equal(null);
  const el = document.createElement('pix-checkout');
  el.setAttribute('endpoint', apiUrl);
  el.setAttribute('checkout', checkout.checkout_id);
  for (const [name, value] of Object.entries(attributes)) el.setAttribute(name, value);
  document.body.append(el);
  return { el, checkout, apiUrl };
}

/** The page's head script, run as the parser runs it. */
async function runHead(checkoutId: string): Promise<void> {
  const tag = await executeServerCommand<string, unknown>('payment-request', { checkout_id: checkoutId });
  const script = document.createElement('script');
  script.textContent = /^<script>([^]*)<\/script>$/.exec(tag)![1]!;
  document.head.append(script);
  script.remove();
}

/** The page's request settled (its `then`, which puts the first screen in, has run). */
async function headAnswered(): Promise<void> {
  const asked = (self as unknown as { pixCheckoutRequests: Record<string, Promise<unknown>> }).pixCheckoutRequests;
  await Promise.all(Object.values(asked));
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  expect(check(), what).to.equal(true);
}

describe("the first screen a page's head puts in before the widget's script", () => {
  afterEach(() => {
    delete (navigator.clipboard as unknown as Record<string, unknown>).writeText;
  });

  it('is left out of an element the widget would render otherwise: another locale, a payment of its own, link mode, another layout', async () => {
    const elements = await Promise.all([page({ locale: 'en' }), page({ mode: 'link' }), page({ layout: 'desktop' }), page({ 'payment-from': 'none' })]);
    for (const { checkout } of elements) await runHead(checkout.checkout_id);
    await headAnswered();
    for (const { el } of elements) {
      expect(el.shadowRoot, `${el.outerHTML}: left to the widget`).to.equal(null);
      el.remove();
    }
  });

  it('shows the QR, the code and a working copy button, accessibly, before the script; the script takes it over without a frame lost, a shift or a request', async () => {
    expect(customElements.get('pix-checkout') === undefined, 'the element starts undefined').to.equal(true);
    const { el, checkout } = await page();
    const created: CustomEvent<{ resumed: boolean; payment: { reference: string } }>[] = [];
    el.addEventListener('pix-created', (event) => created.push(event as CustomEvent));
    const asked = requests.length;
    await runHead(checkout.checkout_id);
    await headAnswered();
    expect(marks('first-screen')).to.equal(1);
    const { body: issued } = await executeServerCommand<{ body: CheckoutView }, unknown>('get-checkout', { checkout_id: checkout.checkout_id });
    const payment = issued.payment!;

    // Before any script: all there, from the page's head alone. (A class is compared as a boolean:
    // chai's message for a failed comparison would walk the element's class for minutes.)
    expect(customElements.get('pix-checkout') === undefined, 'the element starts undefined').to.equal(true);
    expect(part(el, 'qr')!.tagName.toLowerCase()).to.equal('svg');
    expect((part(el, 'code') as HTMLTextAreaElement).value).to.equal(payment.brcode);
    expect(part(el, 'amount')!.textContent).to.contain('12,34');
    expect(getComputedStyle(part(el, 'base')!).display, "styled: the widget's sheet adopted").to.equal('flex');
    await expect(el).to.be.accessible();

    // Its copy button works: the Clipboard API in the tap, "copied" said, pix-copy fired.
    const written: string[] = [];
    Object.defineProperty(navigator.clipboard, 'writeText', {
      value: (text: string) => (written.push(text), Promise.resolve()),
      configurable: true,
      writable: true,
    });
    const copies: CustomEvent[] = [];
    el.addEventListener('pix-copy', (event) => copies.push(event as CustomEvent));
    part(el, 'copy-button')!.click();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(written).to.deep.equal([payment.brcode]);
    expect(part(el, 'copy-button')!.textContent).to.equal('Código copiado');
    expect(copies.map((event) => event.detail)).to.deep.equal([{ copied: true, method: 'clipboard' }]);

    // The customer selects part of the code before the script arrives.
    const field = part(el, 'code') as HTMLTextAreaElement;
    field.focus();
    field.setSelectionRange(3, 20);
    const before = { qr: box(part(el, 'qr')), code: box(field), host: box(el) };
    const frames = watchFrames(el);
    await import('../../src/define.ts');
    // Defined once the page's first screen is painted (page-first-screen-define.test.ts holds it to that).
    await customElements.whenDefined('pix-checkout');
    await until(() => el.hasUpdated, 'the widget rendered');
    await el.updateComplete;
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    const seen = frames.stop();

    expect(el.screen).to.equal('pending');
    expect(el.payment!.reference).to.equal(payment.reference);
    expect(el.shadowRoot!.querySelectorAll('[part~="qr"]').length, "the widget's render alone").to.equal(1);
    expect(seen.missing, `frames without the QR (of ${seen.frames})`).to.equal(0);
    expect({ qr: box(part(el, 'qr')), code: box(part(el, 'code')), host: box(el) }).to.deep.equal(before);
    // The page's request was the only one: taken by the widget as a new payment (201), not resumed.
    expect(toCheckout(checkout.checkout_id, asked).length).to.equal(1);
    expect(created.map((event) => event.detail.resumed)).to.deep.equal([false]);
    const again = part(el, 'code') as HTMLTextAreaElement;
    expect(el.shadowRoot!.activeElement === again, 'the focus kept in the code field').to.equal(true);
    expect([again.selectionStart, again.selectionEnd]).to.deep.equal([3, 20]);
    el.remove();
  });

  it("an element the widget has drawn already is left to it: it takes the page's answer, asks nothing more, and no first screen goes over it", async () => {
    expect(customElements.get('pix-checkout') !== undefined, 'the widget is defined').to.equal(true);
    const shown = marks('first-screen');
    const { body: checkout } = await executeServerCommand<{ body: CheckoutView }, unknown>('create-checkout', {
      value: 7.5,
      order_id: `head-late-${Date.now()}`,
    });
    const { apiUrl } = await executeServerCommand<{ apiUrl: string }, unknown>('dev-stack');
    await runHead(checkout.checkout_id);
    // The widget is defined: the element upgrades and draws at once, before the page's request can have answered.
    const el = document.createElement('pix-checkout');
    el.setAttribute('endpoint', apiUrl);
    el.setAttribute('checkout', checkout.checkout_id);
    const asked = requests.length;
    document.body.append(el);
    await until(() => el.hasUpdated && el.screen === 'pending', 'the widget shows the payment');
    await headAnswered();
    expect(marks('first-screen')).to.equal(shown);
    expect(el.shadowRoot!.querySelectorAll('[part~="qr"]').length).to.equal(1);
    expect(toCheckout(checkout.checkout_id, asked).length, 'no request of its own').to.equal(0);
    el.remove();
  });
});
