/**
 * On a page whose head asked for its payments with their first screens (renderPaymentRequest), the
 * widget's script defines <pix-checkout> only once the page says those screens are painted
 * (`self[FIRST_SCREENS_PAINTED]`, a promise the head's script makes: test/node/merchant/payment-request.test.ts),
 * not as it is evaluated: the frame that shows the first QR waits for none of the script's work. The
 * page's promise is held here by the test, so nothing depends on timing.
 *
 * This file must not import the widget at its top: each test file runs in a page of its own, and here
 * the element starts undefined.
 */
import { expect } from '@open-wc/testing';
import { FIRST_SCREENS_PAINTED } from '../../src/shared/first-screen.ts';

describe("the widget's definition on a page whose head puts first screens in", () => {
  it('waits for the page to say its first screens are painted, then defines the element and upgrades it', async () => {
    let painted!: () => void;
    (self as unknown as Record<string, unknown>)[FIRST_SCREENS_PAINTED] = new Promise<void>((resolve) => (painted = resolve));
    const el = document.createElement('pix-checkout');
    el.setAttribute('endpoint', '/api');
    el.setAttribute('checkout', 'co_AAAAAAAAAAAAAAAAAAAAAAAA');
    el.setAttribute('payment-from', 'nowhere');
    document.body.append(el);
    await import('../../src/define.ts');
    await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve)));
    // A class is compared as a boolean: chai's message for a failed comparison would walk it for minutes.
    expect(customElements.get('pix-checkout') === undefined, 'not defined while the first screens are not painted').to.equal(true);
    expect(el.shadowRoot, 'not upgraded').to.equal(null);
    painted();
    await customElements.whenDefined('pix-checkout');
    expect(el.shadowRoot !== null, 'upgraded once defined').to.equal(true);
    el.remove();
  });
});
