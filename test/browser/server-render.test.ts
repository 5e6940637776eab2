/**
 * A server-rendered <pix-checkout> (renderPixCheckout, pix-checkout-server/render) in the three
 * engines: the markup a merchant's server sends is parsed here as a page's would be (declarative
 * shadow DOM), first with no widget script at all, then the script arrives (src/define.ts imported
 * mid-test, as a module script would run) and adopts it. The checkout is real (the dev stack's proxy
 * and sandbox); nothing is faked.
 *
 * This file must not import the widget (nor test/browser/support/helpers.ts, which does) at its top:
 * each test file runs in a page of its own, and here the element starts undefined.
 */
import { expect } from '@open-wc/testing';
import { executeServerCommand } from '@web/test-runner-commands';
import { watchFrames } from './support/frames.ts';
import type { PixCheckout } from '../../src/pix-checkout.ts';
import type { CheckoutView } from '../../src/shared/contract.ts';

interface Rendered {
  status: number;
  body: CheckoutView;
  html: string;
}

/** Parses HTML as the page's parser does, declarative shadow roots included. */
function parse(host: HTMLElement, html: string): void {
  const setHTMLUnsafe = (host as unknown as { setHTMLUnsafe?: (html: string) => void }).setHTMLUnsafe;
  if (!setHTMLUnsafe) throw new Error('this engine has no setHTMLUnsafe: declarative shadow DOM cannot be parsed into this page');
  setHTMLUnsafe.call(host, html);
}

async function render(options: { locale?: string; phone?: boolean } = {}): Promise<{ el: PixCheckout; checkout: CheckoutView }> {
  const order_id = `ssr-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const res = await executeServerCommand<Rendered, unknown>('render-checkout', { value: 12.34, order_id, ...options });
  if (res.status !== 201) throw new Error(`create checkout answered ${res.status}`);
  const host = document.createElement('div');
  document.body.append(host);
  parse(host, res.html);
  return { el: host.querySelector<PixCheckout>('pix-checkout')!, checkout: res.body };
}

const part = (el: Element, name: string) => el.shadowRoot!.querySelector<HTMLElement>(`[part~="${name}"]`);
const box = (el: Element | null) => {
  const r = el!.getBoundingClientRect();
  return { x: r.x, y: r.y, width: r.width, height: r.height };
};

/** Counts the page's requests to the proxy's checkout API (the payment must not be asked for again). */
const requests: string[] = [];
const originalFetch = window.fetch.bind(window);
window.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
  requests.push(String(input instanceof Request ? input.url : input));
  return originalFetch(input, init);
};

describe('a server-rendered <pix-checkout>', () => {
  // One page: the element is defined once, by the first test that imports the script; each test
  // renders its own checkout before that point in its own run (the first two use the order below).
  let defined = false;
  const define = async () => {
    await import('../../src/define.ts');
    defined = true;
  };

  it('shows the QR, the code, the amount and who is paid before any script, accessibly; the script adopts it without a flash, a shift or a request', async () => {
    expect(defined).to.equal(false);
    const { el, checkout } = await render();
    const payment = checkout.payment!;
    expect(customElements.get('pix-checkout')).to.equal(undefined);
    // Before any script: all there, from the markup alone.
    expect(el.shadowRoot, 'a declarative shadow root').to.not.equal(null);
    expect(part(el, 'qr')!.tagName.toLowerCase()).to.equal('svg');
    expect((part(el, 'code') as HTMLTextAreaElement).value).to.equal(payment.brcode);
    expect(part(el, 'amount')!.textContent).to.contain('12,34');
    expect(part(el, 'countdown')!.textContent).to.match(/\d\d:\d\d/);
    await expect(el).to.be.accessible();

    // The customer selects part of the code before the script arrives.
    const field = part(el, 'code') as HTMLTextAreaElement;
    field.focus();
    field.setSelectionRange(3, 20);
    const before = { qr: box(part(el, 'qr')), code: box(field), copy: box(part(el, 'copy-button')), host: box(el) };
    const frames = watchFrames(el);
    const asked = requests.length;

    await define();
    await el.updateComplete;
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    const seen = frames.stop();

    expect(el.screen).to.equal('pending');
    expect(el.payment!.reference).to.equal(payment.reference);
    // One render of ours, not the server's markup beside it.
    expect(el.shadowRoot!.querySelectorAll('[part~="qr"]').length).to.equal(1);
    expect(el.shadowRoot!.querySelectorAll('style').length, 'the styles are adopted, not the markup').to.equal(0);
    expect(seen.missing, `frames without the QR (of ${seen.frames})`).to.equal(0);
    expect({ qr: box(part(el, 'qr')), code: box(part(el, 'code')), copy: box(part(el, 'copy-button')), host: box(el) }).to.deep.equal(before);
    // The payment is not asked for again: only its status is followed (the stream, not fetch).
    expect(requests.slice(asked).filter((url) => /\/checkouts\//.test(url))).to.deep.equal([]);
    // Focus and selection where the customer left them.
    const again = part(el, 'code') as HTMLTextAreaElement;
    expect(el.shadowRoot!.activeElement === again, 'the focus kept in the code field').to.equal(true);
    expect([again.selectionStart, again.selectionEnd]).to.deep.equal([3, 20]);
    await expect(el).to.be.accessible();

    // The copy button is the widget's now.
    const copied = new Promise<Event>((resolve) => el.addEventListener('pix-copy', resolve, { once: true }));
    part(el, 'copy-button')!.click();
    expect(((await copied) as CustomEvent<{ method: string }>).detail.method).to.be.a('string');
    el.parentElement!.remove();
  });

  /** Until the widget's script has taken the server's markup over: the server's <style> is gone then. */
  const takenOver = async (el: PixCheckout) => {
    for (let i = 0; i < 200 && el.shadowRoot!.querySelector('style'); i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(el.shadowRoot!.querySelector('style'), 'taken over').to.equal(null);
    await el.updateComplete;
  };

  it("in another language, keeps the server's English until its texts load: never a Portuguese frame", async () => {
    // The element is defined now (the test above): this markup arrives after the script, as a page
    // whose script is cached would have it. Its English texts are a chunk still to load.
    const { el, checkout } = await render({ locale: 'en' });
    const frames = watchFrames(el);
    await takenOver(el);
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    const seen = frames.stop();
    expect(el.payment!.reference).to.equal(checkout.payment!.reference);
    expect(part(el, 'status')!.textContent).to.contain('Waiting');
    expect(
      [...seen.statuses].filter((line) => /Aguardando|Gerando/.test(line)),
      'Portuguese frames',
    ).to.deep.equal([]);
    expect(seen.missing).to.equal(0);
    await expect(el).to.be.accessible();
    el.parentElement!.remove();
  });

  it("a wrong guess of a phone is corrected when the script runs: this screen is a desktop's", async () => {
    // Rendered for a phone, the code first (test/node/widget/server-render.test.ts reads that markup).
    const { el } = await render({ phone: true });
    await takenOver(el);
    const after = part(el, 'qr')!.compareDocumentPosition(part(el, 'code')!);
    expect(after & Node.DOCUMENT_POSITION_FOLLOWING, "the widget's own layout: the QR first").to.not.equal(0);
    el.parentElement!.remove();
  });

  it('a plain element given its payment (no declarative shadow DOM) shows it with no request, in its language, once', async () => {
    const { checkout } = await render();
    const payment = checkout.payment!;
    const asked = requests.length;
    const el = document.createElement('pix-checkout');
    const created: Event[] = [];
    el.addEventListener('pix-created', (event) => created.push(event));
    el.setAttribute('endpoint', (await executeServerCommand<{ apiUrl: string }, unknown>('dev-stack')).apiUrl);
    el.setAttribute('checkout', checkout.checkout_id);
    el.setAttribute('locale', 'es');
    el.payment = payment;
    const frames = watchFrames(el);
    document.body.append(el);
    for (let i = 0; i < 200 && el.screen !== 'pending'; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(el.screen).to.equal('pending');
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    const seen = frames.stop();
    expect(part(el, 'status')!.textContent).to.contain('Esperando');
    expect(
      [...seen.statuses].filter((line) => /Aguardando|Gerando/.test(line)),
      'Portuguese frames',
    ).to.deep.equal([]);
    expect(requests.slice(asked).filter((url) => /\/checkouts\//.test(url))).to.deep.equal([]);
    expect(created.length).to.equal(1);
    expect((created[0] as CustomEvent<{ resumed: boolean }>).detail.resumed).to.equal(true);
    // The same payment set again (a framework re-rendering its attribute): nothing happens.
    el.setAttribute('payment', JSON.stringify(payment));
    await el.updateComplete;
    expect(created.length).to.equal(1);
    el.remove();
  });

  it("a plain element whose payment-from names the page's JSON of its payment shows it with no request; JSON that is no payment is asked for", async () => {
    const { checkout } = await render();
    const payment = checkout.payment!;
    const { apiUrl } = await executeServerCommand<{ apiUrl: string }, unknown>('dev-stack');
    const host = document.createElement('div');
    document.body.append(host);
    const json = document.createElement('script');
    json.type = 'application/json';
    json.id = `payment-${checkout.checkout_id}`;
    json.textContent = JSON.stringify(payment);
    host.append(json);
    const asked = requests.length;
    const el = document.createElement('pix-checkout');
    const created: CustomEvent<{ resumed: boolean; payment: { reference: string } }>[] = [];
    el.addEventListener('pix-created', (event) => created.push(event as CustomEvent));
    el.setAttribute('endpoint', apiUrl);
    el.setAttribute('checkout', checkout.checkout_id);
    el.setAttribute('payment-from', json.id);
    host.append(el);
    await el.updateComplete;
    expect(el.screen).to.equal('pending');
    expect((part(el, 'code') as HTMLTextAreaElement).value).to.equal(payment.brcode);
    expect(requests.slice(asked).filter((url) => /\/checkouts\//.test(url))).to.deep.equal([]);
    expect(created.map((event) => [event.detail.payment.reference, event.detail.resumed])).to.deep.equal([[payment.reference, true]]);

    // Not a payment view (a field missing): the checkout's payment is asked for, as without it.
    const other = await render();
    const broken = document.createElement('script');
    broken.type = 'application/json';
    broken.id = `broken-${other.checkout.checkout_id}`;
    broken.textContent = JSON.stringify({ ...other.checkout.payment, brcode: undefined });
    host.append(broken);
    const before = requests.length;
    const asking = document.createElement('pix-checkout');
    asking.setAttribute('endpoint', apiUrl);
    asking.setAttribute('checkout', other.checkout.checkout_id);
    asking.setAttribute('payment-from', broken.id);
    host.append(asking);
    for (let i = 0; i < 200 && asking.screen !== 'pending'; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(asking.screen).to.equal('pending');
    expect(requests.slice(before).filter((url) => url.endsWith(`/checkouts/${other.checkout.checkout_id}/payment`)).length).to.equal(1);
    expect(asking.payment!.reference).to.equal(other.checkout.payment!.reference);
    other.el.parentElement!.remove();
    host.remove();
  });

  it("a plain element takes the payment its page's head asked for (renderPaymentRequest) and asks nothing more; one for another checkout is left alone", async () => {
    const { apiUrl } = await executeServerCommand<{ apiUrl: string }, unknown>('dev-stack');
    const order_id = `early-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const { body: checkout } = await executeServerCommand<{ body: CheckoutView }, unknown>('create-checkout', { value: 12.34, order_id });
    expect(checkout.payment ?? null, 'created without a payment: the page asks for it').to.equal(null);
    const tag = await executeServerCommand<string, unknown>('payment-request', { checkout_id: checkout.checkout_id });
    // As the page's parser runs it: the script element's text, executed once (twice asks once).
    const run = () => {
      const script = document.createElement('script');
      script.textContent = /^<script>([^]*)<\/script>$/.exec(tag)![1]!;
      document.head.append(script);
      script.remove();
    };
    const asked = requests.length;
    run();
    run();
    const toCheckout = (from: number) => requests.slice(from).filter((url) => new URL(url).pathname.endsWith(`/checkouts/${checkout.checkout_id}/payment`));
    expect(toCheckout(asked).length, "the page's request, sent once").to.equal(1);
    const created: CustomEvent<{ resumed: boolean; payment: { reference: string } }>[] = [];
    const el = document.createElement('pix-checkout');
    el.addEventListener('pix-created', (event) => created.push(event as CustomEvent));
    el.setAttribute('endpoint', apiUrl);
    el.setAttribute('checkout', checkout.checkout_id);
    document.body.append(el);
    for (let i = 0; i < 200 && el.screen !== 'pending'; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(el.screen).to.equal('pending');
    expect(toCheckout(asked).length, 'no request of its own').to.equal(1);
    // Issued by the page's request: a new payment (201), not a resumed one.
    expect(created.map((event) => event.detail.resumed)).to.deep.equal([false]);
    const { body: after } = await executeServerCommand<{ body: CheckoutView }, unknown>('get-checkout', { checkout_id: checkout.checkout_id });
    expect(el.payment!.reference).to.equal(after.payment!.reference);

    // Another checkout's element: the page's request is not its own, so it asks for its payment itself.
    const { body: second } = await executeServerCommand<{ body: CheckoutView }, unknown>('create-checkout', { value: 5, order_id: `${order_id}-2` });
    const before = requests.length;
    const other = document.createElement('pix-checkout');
    other.setAttribute('endpoint', apiUrl);
    other.setAttribute('checkout', second.checkout_id);
    document.body.append(other);
    for (let i = 0; i < 200 && other.screen !== 'pending'; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(other.screen).to.equal('pending');
    expect(requests.slice(before).filter((url) => url.endsWith(`/checkouts/${second.checkout_id}/payment`)).length).to.equal(1);
    el.remove();
    other.remove();
  });
});
