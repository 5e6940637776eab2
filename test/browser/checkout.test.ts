/**
 * Checkout mode against the real stack: the merchant's server creates the checkout (server to server,
 * with the API key, through the dev-stack plugin) and fixes the amount; the page holds only its id.
 */
import { expect, fixture, html, oneEvent } from '@open-wc/testing';
import { FakeClock } from './support/fake-clock.ts';
import {
  advanceSandbox,
  announced,
  createCheckout,
  createElement,
  forgetSavedPayments,
  mount,
  newElement,
  part,
  pay,
  renew,
  renewalsStack,
  screenIs,
  settle,
  text,
} from './support/helpers.ts';

beforeEach(forgetSavedPayments);

interface Sent {
  method: string;
  path: string;
  body: string | null;
}

/** A fetch that records every request the widget makes (method, path under the origin, body). */
function sentRequests() {
  const sent: Sent[] = [];
  const impl: typeof fetch = (input, init) => {
    const body = init?.body;
    sent.push({
      method: init?.method ?? 'GET',
      path: new URL(input instanceof Request ? input.url : input.toString()).pathname,
      body: typeof body === 'string' ? body : null,
    });
    return fetch(input, init);
  };
  return { fetch: impl, sent, posts: () => sent.filter((r) => r.method === 'POST') };
}

const pixCheckoutKeys = () => Object.keys(sessionStorage).filter((k) => k.startsWith('pix-checkout:'));

describe('checkout mode: the merchant server decides the amount', () => {
  it('shows the QR and the amount the server set, asking for the checkout payment with no body', async () => {
    const checkout = await createCheckout(37.45);
    expect(checkout.status).to.equal('open');
    const requests = sentRequests();
    const { el, payment } = await mount({ checkout: checkout.checkout_id, env: { clock: new FakeClock(), fetch: requests.fetch } });
    expect(payment.value).to.equal(37.45);
    expect(payment.status).to.equal('pending');
    expect(text(el, 'amount')).to.equal('R$ 37,45');
    expect(part(el, 'qr')!.tagName.toLowerCase()).to.equal('svg');
    expect(part(el, 'qr')!.getAttribute('aria-label')!.replace(/\s+/g, ' ')).to.contain('R$ 37,45');
    expect((part(el, 'code') as HTMLTextAreaElement).value).to.equal(payment.brcode);
    expect(requests.posts()).to.deep.equal([{ method: 'POST', path: `/api/checkouts/${checkout.checkout_id}/payment`, body: null }]);
    expect(pixCheckoutKeys(), 'checkout mode keeps nothing in sessionStorage').to.deep.equal([]);
  });

  it('a reload shows the same payment, resumed, with no storage at all', async () => {
    const { checkout_id } = await createCheckout(15);
    const first = await mount({ checkout: checkout_id, env: { clock: new FakeClock(), storage: null } });
    first.el.remove();
    const el = await createElement({ checkout: checkout_id, env: { clock: new FakeClock(), storage: null } });
    const { detail } = await oneEvent(el, 'pix-created');
    expect(detail.resumed).to.equal(true);
    expect(detail.renewal).to.equal(0);
    expect(detail.payment.reference).to.equal(first.payment.reference);
    await el.updateComplete;
    expect(text(el, 'amount')).to.equal('R$ 15,00');
    expect((part(el, 'code') as HTMLTextAreaElement).value).to.equal(first.payment.brcode);
  });

  it('paying in the sandbox reaches "paid", with the amount the server set', async () => {
    const { checkout_id } = await createCheckout(42.1);
    const { el, payment } = await mount({ checkout: checkout_id, env: { clock: new FakeClock() } });
    const paid = oneEvent(el, 'pix-paid');
    await pay(payment.reference);
    const { detail } = await paid;
    expect(detail.payment.reference).to.equal(payment.reference);
    await screenIs(el, 'paid');
    expect(text(el, 'status')).to.equal('Pagamento confirmado');
    expect(text(el, 'amount')).to.equal('Você pagou R$ 42,10.');
    expect(part(el, 'qr')).to.equal(null);
  });

  it('after expiry a new code has a new reference and the same value; with no renewal left while the expired code may still be paid, the widget is told so and may ask again', async function () {
    this.timeout(40_000);
    // This stack's proxy allows one renewal per checkout (PIX_RENEWALS=1).
    const { apiUrl } = await renewalsStack();
    const { checkout_id } = await createCheckout(12.34, 'renewals');
    const clock = new FakeClock();
    const requests = sentRequests();
    const { el, payment } = await mount({ apiUrl, checkout: checkout_id, env: { clock, fetch: requests.fetch }, attrs: { renewals: '0' } });

    const expired = oneEvent(el, 'pix-expired');
    await advanceSandbox(3600, 'renewals');
    clock.advance(3600_000);
    expect((await expired).detail.payment.reference).to.equal(payment.reference);
    await screenIs(el, 'expired');
    expect(text(el, 'status')).to.equal('Este código Pix expirou');
    // The widget's `renewals="0"` limits open-amount mode only: here the proxy decides.
    const next = await renew(el, payment.reference);
    expect(next.payment.value).to.equal(12.34);
    expect(next.renewal).to.equal(1);
    await screenIs(el, 'pending');
    expect(text(el, 'amount')).to.equal('R$ 12,34');
    expect(part(el, 'qr')).to.exist;

    const again = oneEvent(el, 'pix-expired');
    await advanceSandbox(3600, 'renewals');
    clock.advance(3600_000);
    await again;
    await screenIs(el, 'expired');
    // No renewal left while the expired code may still be paid (the partner cancels it an hour after
    // its expiry, and on this fresh stack no canceled code has proved itself): the proxy says so
    // (503 status_unverified). The widget says what is happening and that the customer must not pay
    // again yet, never "expired for good" nor a generic error, and asks again by itself.
    const unverified = oneEvent(el, 'pix-error');
    part(el, 'renew-button')!.click();
    expect((await unverified).detail).to.deep.include({ code: 'status_unverified', fatal: false });
    await screenIs(el, 'unverified');
    await el.updateComplete;
    expect(el.matches(':state(unverified)'), 'its own custom state').to.equal(true);
    expect(text(el, 'status')).to.equal('Confirmando o pagamento anterior…');
    expect(text(el, 'hint')).to.equal(
      'Estamos confirmando se o código anterior foi pago. Não pague de novo por enquanto: pediremos um novo código sozinhos em instantes.',
    );
    expect(announced(el)).to.equal('Confirmando o pagamento anterior…');
    expect(part(el, 'renew-button'), 'no new code offered').to.equal(null);
    expect(part(el, 'retry-button'), 'no generic error').to.equal(null);
    expect(requests.posts().length).to.equal(3);
    // After the proxy's Retry-After (at most an hour), the widget asks again by itself: still unverified here.
    const again503 = oneEvent(el, 'pix-error');
    clock.advance(3600_000);
    expect((await again503).detail).to.deep.include({ code: 'status_unverified', fatal: false });
    await screenIs(el, 'unverified');
    // Moved in the page (removed, its timer stopped, and put back): it asks again at once.
    const moved = oneEvent(el, 'pix-error');
    const parent = el.parentNode!;
    el.remove();
    parent.appendChild(el);
    expect((await moved).detail).to.deep.include({ code: 'status_unverified', fatal: false });
    await screenIs(el, 'unverified');
    // A reload meanwhile (a new element for the checkout, which the proxy would renew) is told the same.
    el.remove();
    const reloaded = newElement({ apiUrl, checkout: checkout_id, env: { clock: new FakeClock(), fetch: requests.fetch } });
    const told = oneEvent(reloaded, 'pix-error');
    await fixture(html`${reloaded}`);
    expect((await told).detail).to.deep.include({ code: 'status_unverified', fatal: false });
    await screenIs(reloaded, 'unverified');
    expect(text(reloaded, 'status')).to.equal('Confirmando o pagamento anterior…');
    // Every request for a payment went to the checkout, with no body: never an amount.
    const posts = requests.posts();
    expect(posts.length).to.equal(6);
    for (const post of posts) expect(post).to.deep.equal({ method: 'POST', path: `/api/checkouts/${checkout_id}/payment`, body: null });
  });

  it('an instance that is stopping (503 shutting_down) is asked again once, after its Retry-After; a second refusal is the error', async () => {
    const refusal = () =>
      new Response(JSON.stringify({ error: { code: 'shutting_down', message: 'This instance is stopping.' } }), {
        status: 503,
        headers: { 'content-type': 'application/json', 'retry-after': '0' },
      });
    /** Answers the first `refusals` POSTs itself, as a draining instance would; the rest reach the stack. */
    const draining = (refusals: number) => {
      const posts: string[] = [];
      const impl: typeof fetch = (input, init) => {
        if (init?.method !== 'POST') return fetch(input, init);
        posts.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
        return posts.length <= refusals ? Promise.resolve(refusal()) : fetch(input, init);
      };
      return { impl, posts };
    };
    const once = draining(1);
    const checkout = await createCheckout(12.34);
    const { payment } = await mount({ checkout: checkout.checkout_id, env: { clock: new FakeClock(), fetch: once.impl } });
    expect(payment.value).to.equal(12.34);
    expect(once.posts).to.deep.equal([`/api/checkouts/${checkout.checkout_id}/payment`, `/api/checkouts/${checkout.checkout_id}/payment`]);

    forgetSavedPayments();
    const twice = draining(2);
    const other = await createCheckout(12.34);
    const el = await createElement({ checkout: other.checkout_id, env: { clock: new FakeClock(), fetch: twice.impl } });
    const { detail } = await oneEvent(el, 'pix-error');
    expect(detail.code).to.equal('shutting_down');
    expect(twice.posts.length).to.equal(2);
  });

  it('an unknown checkout id shows the error screen with not_found', async () => {
    const el = await createElement({ checkout: 'co_AAAAAAAAAAAAAAAAAAAAAAAA' });
    const { detail } = await oneEvent(el, 'pix-error');
    expect(detail.code).to.equal('not_found');
    expect(detail.fatal).to.equal(true);
    await screenIs(el, 'error');
    expect(el.shadowRoot!.querySelector('[role="alert"]')!.textContent).to.equal('Não foi possível carregar o pagamento.');
    expect(part(el, 'retry-button')).to.exist;
  });

  it("a payment the proxy refuses (403 forbidden): the error screen, and one console line with the proxy's code and message", async () => {
    const message =
      'The origin "https://shop.example" may not call the payment API: list it in PIX_ALLOWED_ORIGINS, or set PIX_PUBLIC_URL to the proxy\'s public URL.';
    // What a proxy answers a page whose origin is neither allowed nor its own (server/http/cors.ts).
    const refusing: typeof fetch = () =>
      Promise.resolve(
        new Response(JSON.stringify({ error: { code: 'forbidden', message } }), { status: 403, headers: { 'content-type': 'application/json' } }),
      );
    const logged: unknown[][] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => void logged.push(args);
    try {
      const { checkout_id } = await createCheckout(5);
      // Listened to before it connects: the refusal may come at once.
      const el = newElement({ checkout: checkout_id, env: { clock: new FakeClock(), fetch: refusing } });
      const error = oneEvent(el, 'pix-error');
      await fixture(html`${el}`);
      const { detail } = await error;
      expect(detail).to.deep.include({ code: 'forbidden', fatal: true });
      await screenIs(el, 'error');
    } finally {
      console.error = original;
    }
    const ours = logged.filter((args) => String(args[0]).startsWith('pix-checkout:'));
    expect(ours).to.deep.equal([[`pix-checkout:`, `forbidden`, message]]);
  });

  it('setting an amount on a checkout-mode widget changes neither the value shown nor what is requested', async () => {
    const { checkout_id } = await createCheckout(25);
    const requests = sentRequests();
    const { el, payment } = await mount({
      checkout: checkout_id,
      amount: 0.5,
      description: 'Desconto',
      env: { clock: new FakeClock(), fetch: requests.fetch },
    });
    expect(payment.value).to.equal(25);
    expect(text(el, 'amount')).to.equal('R$ 25,00');
    el.amount = 1;
    el.setAttribute('amount', '0.2');
    el.description = 'Outro';
    await el.updateComplete;
    await settle();
    await el.updateComplete;
    expect(text(el, 'amount')).to.equal('R$ 25,00');
    expect((part(el, 'code') as HTMLTextAreaElement).value).to.equal(payment.brcode);
    expect(requests.posts()).to.deep.equal([{ method: 'POST', path: `/api/checkouts/${checkout_id}/payment`, body: null }]);
    expect(
      requests.sent.some((r) => r.body !== null),
      'no request carried a body',
    ).to.equal(false);
  });

  it('another checkout id shows that checkout: its own payment and amount', async () => {
    const first = await createCheckout(5);
    const second = await createCheckout(6.5);
    const { el, payment } = await mount({ checkout: first.checkout_id, env: { clock: new FakeClock() } });
    const created = oneEvent(el, 'pix-created');
    el.checkout = second.checkout_id;
    const { detail } = await created;
    expect(detail.payment.reference).to.not.equal(payment.reference);
    expect(detail.payment.value).to.equal(6.5);
    await el.updateComplete;
    expect(text(el, 'amount')).to.equal('R$ 6,50');
  });
});

describe('open-amount mode (no checkout)', () => {
  it('sends only value and description', async () => {
    const requests = sentRequests();
    await mount({ amount: 3.21, description: 'Pedido 9', env: { clock: new FakeClock(), fetch: requests.fetch } });
    await mount({ amount: 3.22, env: { clock: new FakeClock(), fetch: requests.fetch } });
    const posts = requests.posts();
    expect(posts.map((p) => p.path)).to.deep.equal(['/api/payments', '/api/payments']);
    expect(JSON.parse(posts[0]!.body!)).to.deep.equal({ value: 3.21, description: 'Pedido 9' });
    expect(JSON.parse(posts[1]!.body!)).to.deep.equal({ value: 3.22 });
  });
});
