import { expect, oneEvent } from '@open-wc/testing';
import { FakeClock } from './support/fake-clock.ts';
import { createElement, forgetSavedPayments, mount, pay, screenIs, text } from './support/helpers.ts';

beforeEach(forgetSavedPayments);

describe('resume after a reload', () => {
  it('the same checkout shows the same payment, not a new one', async () => {
    const first = await mount({ amount: 7.77, description: 'Pedido 7', env: { clock: new FakeClock() } });
    expect(first.el.shadowRoot!.querySelector('slot[name="header"]')).to.exist;
    first.el.remove();
    const el = await createElement({ amount: 7.77, description: 'Pedido 7', env: { clock: new FakeClock() } });
    const { detail } = await oneEvent(el, 'pix-created');
    expect(detail.resumed).to.equal(true);
    expect(detail.payment.reference).to.equal(first.payment.reference);
  });

  it('another amount or description is another checkout', async () => {
    const first = await mount({ amount: 7.77, env: { clock: new FakeClock() } });
    const other = await mount({ amount: 7.78, env: { clock: new FakeClock() } });
    const described = await mount({ amount: 7.77, description: 'Outro', env: { clock: new FakeClock() } });
    expect(other.payment.reference).to.not.equal(first.payment.reference);
    expect(described.payment.reference).to.not.equal(first.payment.reference);
  });

  it('a payment paid before the reload shows as paid, and the page hears pix-paid again', async () => {
    const first = await mount({ amount: 8, env: { clock: new FakeClock() } });
    await pay(first.payment.reference);
    await screenIs(first.el, 'paid');
    first.el.remove();
    const el = await createElement({ amount: 8, env: { clock: new FakeClock() } });
    const created = oneEvent(el, 'pix-created');
    const paid = oneEvent(el, 'pix-paid');
    expect((await created).detail.resumed).to.equal(true);
    expect((await paid).detail.payment.reference).to.equal(first.payment.reference);
    await screenIs(el, 'paid');
    expect(text(el, 'status')).to.equal('Pagamento confirmado');
  });

  it('a saved reference the proxy does not know gives a new payment', async () => {
    const first = await mount({ amount: 9, env: { clock: new FakeClock() } });
    const key = Object.keys(sessionStorage).find((k) => k.startsWith('pix-checkout:'))!;
    sessionStorage.setItem(key, JSON.stringify({ reference: 'unknown-ref-123', renewals: 0 }));
    first.el.remove();
    const again = await mount({ amount: 9, env: { clock: new FakeClock() } });
    expect(again.payment.reference).to.not.equal('unknown-ref-123');
    expect(again.payment.status).to.equal('pending');
  });

  it('keeps following the payment after being moved in the page', async () => {
    const { el, payment } = await mount({ amount: 2 });
    const elsewhere = document.createElement('div');
    document.body.append(elsewhere);
    elsewhere.append(el);
    const paid = oneEvent(el, 'pix-paid');
    await pay(payment.reference);
    expect((await paid).detail.payment.status).to.equal('paid');
    elsewhere.remove();
  });
});
