import { expect, fixture, html, oneEvent, waitUntil } from '@open-wc/testing';
import { POLL_FAST_MS, POLL_SLOW_MS } from '../../src/controllers/status.ts';
import { FakeClock } from './support/fake-clock.ts';
import {
  advanceSandbox,
  announced,
  approveOnePayment,
  createElement,
  forgetSavedPayments,
  mount,
  newElement,
  noStreamStack,
  part,
  pay,
  recordingFetch,
  renew,
  screenIs,
  settle,
  text,
} from './support/helpers.ts';

beforeEach(forgetSavedPayments);

describe('status: the live stream', () => {
  it('turns to paid when the sandbox is paid, announced and with the amount', async () => {
    const clock = new FakeClock();
    const { el, payment } = await mount({ amount: 10.5, env: { clock } });
    expect(text(el, 'status')).to.equal('Aguardando pagamento');
    const paid = oneEvent(el, 'pix-paid');
    const change = oneEvent(el, 'pix-status-change');
    await pay(payment.reference);
    // No clock advance: only the stream can bring this.
    const { detail } = await paid;
    expect(detail.payment.reference).to.equal(payment.reference);
    expect(detail.payment.status).to.equal('paid');
    expect((await change).detail.previous).to.equal('pending');
    await el.updateComplete;
    expect(text(el, 'status')).to.equal('Pagamento confirmado');
    expect(text(el, 'amount')).to.equal('Você pagou R$ 10,50.');
    expect(announced(el)).to.equal('Pagamento confirmado');
    expect(part(el, 'qr'), 'the QR is gone once paid').to.equal(null);
    expect(part(el, 'copy-button')).to.equal(null);
  });

  it('falls back to polling when the proxy refuses the stream', async () => {
    const { apiUrl } = await noStreamStack();
    const clock = new FakeClock();
    const recorder = recordingFetch(clock);
    const { el, payment } = await mount({ apiUrl, env: { clock, fetch: recorder.fetch } });
    // The refused stream is followed at once by one status read.
    await waitUntil(() => recorder.reads.length === 1, 'one read after the refused stream');
    await pay(payment.reference, 'nostream');
    const paid = oneEvent(el, 'pix-paid');
    await waitUntil(() => recorder.inFlight === 0);
    await settle();
    clock.advance(POLL_FAST_MS);
    expect((await paid).detail.payment.status).to.equal('paid');
    await screenIs(el, 'paid');
  });
});

describe('status: polling', () => {
  const polling = async (clock: FakeClock, online = () => true, hidden = () => false) => {
    const recorder = recordingFetch(clock);
    const mounted = await mount({ env: { clock, fetch: recorder.fetch, EventSource: null, online, hidden } });
    return { ...mounted, recorder };
  };
  /** Advances the fake clock in small steps, letting each read answer before time moves on. */
  const run = async (clock: FakeClock, recorder: { inFlight: number }, ms: number) => {
    for (let t = 0; t < ms; t += 500) {
      clock.advance(500);
      await waitUntil(() => recorder.inFlight === 0);
      await settle();
    }
  };

  it('reads every 2 s for the first minute, then every 10 s, never two at once', async () => {
    const clock = new FakeClock();
    const start = clock.now();
    const { recorder } = await polling(clock);
    await run(clock, recorder, 90_000);
    const offsets = recorder.reads.map((at) => at - start);
    const fast = offsets.filter((t) => t <= 60_000);
    expect(fast[0]).to.equal(POLL_FAST_MS);
    expect(fast.length).to.equal(30);
    for (let i = 1; i < fast.length; i++) expect(fast[i]! - fast[i - 1]!).to.equal(POLL_FAST_MS);
    expect(offsets.filter((t) => t > 60_000)).to.deep.equal([70_000, 80_000, 90_000].map((t) => t - 0));
    expect(POLL_SLOW_MS).to.equal(10_000);
    expect(recorder.maxInFlight).to.equal(1);
  });

  it('pauses while the tab is hidden and checks at once when it is visible again', async () => {
    const clock = new FakeClock();
    let hidden = false;
    const { el, payment, recorder } = await polling(
      clock,
      () => true,
      () => hidden,
    );
    hidden = true;
    document.dispatchEvent(new Event('visibilitychange'));
    await run(clock, recorder, 30_000);
    expect(recorder.reads.length, 'no reads while hidden').to.equal(0);
    await pay(payment.reference);
    const paid = oneEvent(el, 'pix-paid');
    hidden = false;
    document.dispatchEvent(new Event('visibilitychange'));
    // No clock advance: the return itself triggers the read.
    await paid;
    expect(recorder.reads.length).to.equal(1);
  });

  it('checks at once on focus and pageshow, without a second request in flight', async () => {
    const clock = new FakeClock();
    const { recorder } = await polling(clock);
    for (let i = 0; i < 5; i++) {
      window.dispatchEvent(new Event('focus'));
      window.dispatchEvent(new Event('pageshow'));
    }
    await waitUntil(() => recorder.reads.length >= 1 && recorder.inFlight === 0);
    expect(recorder.reads.length, 'ten triggers while one read is in flight: one read').to.equal(1);
    expect(recorder.maxInFlight).to.equal(1);
  });

  it('shows "reconnecting" while offline, stops reading, and catches up when back online', async () => {
    const clock = new FakeClock();
    let online = true;
    const { el, payment, recorder } = await polling(clock, () => online);
    online = false;
    window.dispatchEvent(new Event('offline'));
    await el.updateComplete;
    expect(text(el, 'status')).to.equal('Sem conexão. Reconectando…');
    expect(el.matches(':state(reconnecting)')).to.equal(true);
    await run(clock, recorder, 20_000);
    expect(recorder.reads.length, 'no reads while offline').to.equal(0);
    await pay(payment.reference);
    const paid = oneEvent(el, 'pix-paid');
    online = true;
    window.dispatchEvent(new Event('online'));
    await paid;
    await el.updateComplete;
    expect(el.matches(':state(reconnecting)')).to.equal(false);
    expect(text(el, 'status')).to.equal('Pagamento confirmado');
  });

  it('backs off with jitter while reads fail, says so, and recovers', async () => {
    const clock = new FakeClock();
    let failing = true;
    const reads: number[] = [];
    const start = clock.now();
    const fetchImpl: typeof fetch = (input, init) => {
      if ((init?.method ?? 'GET') === 'GET') {
        reads.push(clock.now() - start);
        if (failing) return Promise.reject(new TypeError('Failed to fetch'));
      }
      return fetch(input, init);
    };
    const { el, payment } = await mount({ env: { clock, fetch: fetchImpl, EventSource: null, random: () => 0.5 } });
    const errors: { code: string; fatal: boolean }[] = [];
    el.addEventListener('pix-error', (e) => errors.push(e.detail));
    for (let i = 0; i < 60; i++) {
      clock.advance(1000);
      await settle();
    }
    await el.updateComplete;
    expect(text(el, 'status')).to.equal('Reconectando…');
    expect(errors[0]).to.deep.equal({ code: 'network', message: 'The payment server could not be reached.', fatal: false });
    // 2 s, then 2*2^n with jitter at 0.5: 3 s, 6 s, 12 s, 24 s ... each gap longer than the last.
    const gaps = reads.slice(1).map((t, i) => t - reads[i]!);
    expect(gaps.slice(0, 4)).to.deep.equal([3000, 6000, 12_000, 24_000]);
    failing = false;
    await pay(payment.reference);
    const paid = oneEvent(el, 'pix-paid');
    window.dispatchEvent(new Event('online'));
    await paid;
  });

  it('never shows an unknown status as success: keeps waiting and reports a bad response', async () => {
    const clock = new FakeClock();
    const fetchImpl: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if ((init?.method ?? 'GET') !== 'GET') return res;
      const body = { ...(await res.json()), status: 'refunded' };
      return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const { el } = await mount({ env: { clock, fetch: fetchImpl, EventSource: null } });
    const error = oneEvent(el, 'pix-error');
    clock.advance(POLL_FAST_MS);
    expect((await error).detail.code).to.equal('bad_response');
    await el.updateComplete;
    expect(el.screen).to.equal('pending');
    expect(text(el, 'status')).to.equal('Reconectando…');
    expect(part(el, 'qr')).to.exist;
  });
});

describe('status: final screens', () => {
  it('expired: says so, offers a new code up to the limit, and the new code is a new payment', async () => {
    const clock = new FakeClock();
    const { el, payment } = await mount({ env: { clock }, attrs: { renewals: '1' } });
    const expired = oneEvent(el, 'pix-expired');
    await advanceSandbox(3600);
    // The countdown reaches zero on the device clock too; the widget then checks at once.
    clock.advance(3600_000);
    const { detail } = await expired;
    expect(detail.payment.reference).to.equal(payment.reference);
    expect(detail.renewalsLeft).to.equal(1);
    await el.updateComplete;
    expect(text(el, 'status')).to.equal('Este código Pix expirou');
    expect(part(el, 'qr')).to.equal(null);

    const next = await renew(el, payment.reference);
    expect(next.renewal).to.equal(1);
    await el.updateComplete;
    expect(part(el, 'qr')).to.exist;

    const again = oneEvent(el, 'pix-expired');
    await advanceSandbox(3600);
    clock.advance(3600_000);
    expect((await again).detail.renewalsLeft).to.equal(0);
    await el.updateComplete;
    expect(part(el, 'renew-button'), 'no new code past the limit').to.equal(null);
    expect(text(el, 'hint')).to.equal('Nenhum valor foi cobrado. Volte à loja para tentar de novo.');
  });

  it('canceled: says so and stops', async () => {
    // A canceled code proves itself only from a read past the latest plausible cancellation
    // (docs/partner-status-codes.md): a payment approved first, then 3 h.
    await approveOnePayment();
    const clock = new FakeClock();
    const { el } = await mount({ env: { clock, EventSource: null } });
    const canceled = oneEvent(el, 'pix-canceled');
    await advanceSandbox(3 * 3600);
    clock.advance(POLL_FAST_MS);
    expect((await canceled).detail.payment.status).to.equal('canceled');
    await el.updateComplete;
    expect(text(el, 'status')).to.equal('Pagamento cancelado');
    expect(el.matches(':state(canceled)')).to.equal(true);
    expect(part(el, 'renew-button')).to.equal(null);
  });

  it('error: the proxy refuses the amount; the event names the field; retry recovers', async () => {
    const el = await createElement({ amount: 0.1 });
    const { detail } = await oneEvent(el, 'pix-error');
    expect(detail).to.deep.equal({ code: 'invalid_request', message: 'value must be at least 0.20', fields: { value: 'must be at least 0.20' }, fatal: true });
    await el.updateComplete;
    expect(el.shadowRoot!.querySelector('[role="alert"]')!.textContent).to.equal('Não foi possível carregar o pagamento.');
    expect(el.matches(':state(error)')).to.equal(true);
    el.amount = 1;
    const created = oneEvent(el, 'pix-created');
    await created;
    await el.updateComplete;
    expect(part(el, 'qr')).to.exist;
  });

  it('error: an unreachable proxy is a network error with a retry button', async () => {
    const el = newElement({ apiUrl: 'http://127.0.0.1:9/api', amount: 5 });
    const failed = oneEvent(el, 'pix-error');
    await fixture(html`${el}`);
    const { detail } = await failed;
    expect(detail.code).to.equal('network');
    expect(detail.fatal).to.equal(true);
    await el.updateComplete;
    const retry = part(el, 'retry-button')!;
    expect(retry.textContent.trim()).to.equal('Tentar novamente');
    const again = oneEvent(el, 'pix-error');
    retry.click();
    await el.updateComplete;
    expect(el.screen).to.equal('loading');
    expect((await again).detail.code).to.equal('network');
  });
});
