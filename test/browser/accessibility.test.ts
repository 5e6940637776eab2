import { expect, fixture, html, oneEvent } from '@open-wc/testing';
import { sendKeys } from '@web/test-runner-commands';
import { FakeClock } from './support/fake-clock.ts';
import { advanceSandbox, approveOnePayment, forgetSavedPayments, mount, newElement, part, pay, screenIs } from './support/helpers.ts';

beforeEach(forgetSavedPayments);

describe('accessibility: axe in every state', () => {
  for (const theme of ['light', 'dark'] as const) {
    it(`pending (QR first and copy first), link mode, paid — ${theme}`, async () => {
      const { el, payment } = await mount({ attrs: { theme, layout: 'desktop' }, env: { clock: new FakeClock() } });
      await expect(el).to.be.accessible();
      el.layout = 'phone';
      await el.updateComplete;
      await expect(el).to.be.accessible();
      el.mode = 'link';
      await el.updateComplete;
      await expect(el).to.be.accessible();
      await pay(payment.reference);
      await screenIs(el, 'paid');
      await expect(el).to.be.accessible();
    });
  }

  it('loading, error, copy failed, reconnecting, invalid code', async () => {
    const loading = newElement({ apiUrl: 'http://127.0.0.1:9/api' });
    const failed = oneEvent(loading, 'pix-error');
    await fixture(html`${loading}`);
    await expect(loading).to.be.accessible();
    await failed;
    await loading.updateComplete;
    await expect(loading).to.be.accessible();

    let online = true;
    const { el } = await mount({
      env: { clock: new FakeClock(), clipboard: null, execCopy: () => false, EventSource: null, online: () => online },
    });
    part(el, 'copy-button')!.click();
    await oneEvent(el, 'pix-copy');
    await el.updateComplete;
    await expect(el).to.be.accessible();
    online = false;
    window.dispatchEvent(new Event('offline'));
    await el.updateComplete;
    await expect(el).to.be.accessible();

    const corrupt: typeof fetch = async (input, init) => {
      const body = await (await fetch(input, init)).json();
      return new Response(JSON.stringify({ ...body, brcode: `${body.brcode}0` }), { status: 201 });
    };
    const invalid = await mount({ env: { fetch: corrupt, EventSource: null, clock: new FakeClock() } });
    await expect(invalid.el).to.be.accessible({ ignoredRules: ['image-redundant-alt'] });
  });

  it('expired (with and without a new code) and canceled', async () => {
    const clock = new FakeClock();
    const { el } = await mount({ env: { clock, EventSource: null }, attrs: { theme: 'dark' } });
    await advanceSandbox(3600);
    clock.advance(3600_000);
    await screenIs(el, 'expired');
    await expect(el).to.be.accessible();
    el.renewals = 0;
    await el.updateComplete;
    await expect(el).to.be.accessible();
    await advanceSandbox(3600);
    // A canceled code proves itself only from a read past the latest plausible cancellation
    // (docs/partner-status-codes.md): a payment approved first, then 3 h.
    await approveOnePayment();
    const canceled = await mount({ amount: 4.44, env: { clock: new FakeClock(), EventSource: null } });
    await advanceSandbox(3 * 3600);
    window.dispatchEvent(new Event('focus'));
    await screenIs(canceled.el, 'canceled');
    await expect(canceled.el).to.be.accessible();
  });
});

describe('accessibility: keyboard and focus', () => {
  it('works by keyboard alone: tab to the code, copy, the link', async () => {
    const { el } = await mount({ attrs: { layout: 'desktop' }, env: { clock: new FakeClock(), clipboard: null, execCopy: () => false } });
    const before = document.createElement('button');
    before.textContent = 'before';
    el.before(before);
    before.focus();
    const reached: string[] = [];
    for (let i = 0; i < 3; i++) {
      await sendKeys({ press: 'Tab' });
      reached.push(el.shadowRoot!.activeElement?.getAttribute('part') ?? '');
    }
    expect(reached).to.deep.equal(['code', 'copy-button', 'checkout-link']);
    await sendKeys({ down: 'Shift' });
    await sendKeys({ press: 'Tab' });
    await sendKeys({ up: 'Shift' });
    expect(el.shadowRoot!.activeElement?.getAttribute('part')).to.equal('copy-button');
    const copy = oneEvent(el, 'pix-copy');
    await sendKeys({ press: ' ' });
    expect((await copy).detail.method).to.equal('manual');
    before.remove();
  });

  it('moves focus to the news when the screen changes under the focused button', async () => {
    const { el, payment } = await mount({ env: { clock: new FakeClock() } });
    part(el, 'copy-button')!.focus();
    await pay(payment.reference);
    await screenIs(el, 'paid');
    expect(el.shadowRoot!.activeElement === part(el, 'status'), 'the focus on the status line').to.equal(true);
  });

  it('does not steal focus from the page when the screen changes', async () => {
    const { el, payment } = await mount({ env: { clock: new FakeClock() } });
    const input = document.createElement('input');
    input.setAttribute('aria-label', 'elsewhere');
    document.body.append(input);
    input.focus();
    await pay(payment.reference);
    await screenIs(el, 'paid');
    expect(document.activeElement === input, "the focus on the page's input").to.equal(true);
    input.remove();
  });
});
