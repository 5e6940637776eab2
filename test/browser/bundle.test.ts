/**
 * The built script-tag bundle (dist/pix-checkout.js, `npm run build`), as a merchant's page loads it.
 * Its QR encoder is our own (src/qr-encoder.ts, byte mode, level M): it must draw exactly the symbol
 * npm qrcode draws for the same payload, mode and level (test/node/widget/qr-encoder.test.ts compares the
 * two on many more inputs).
 */
import { expect, fixture, html, oneEvent } from '@open-wc/testing';
import { executeServerCommand } from '@web/test-runner-commands';
import { create } from 'qrcode/lib/core/qrcode.js';
import '../../dist/pix-checkout.js';
import { matrixPath } from '../../src/qr.ts';
import { checkBrCode } from '../../src/shared/brcode.ts';

const { apiUrl } = await executeServerCommand<{ apiUrl: string }, undefined>('dev-stack');

describe('the script-tag bundle', () => {
  it('registers <pix-checkout> and draws the same QR symbol as npm qrcode', async () => {
    for (const amount of ['0.2', '10.5', '9999.99']) {
      const el = await fixture<HTMLElement>(html`<pix-checkout endpoint=${apiUrl} amount=${amount}></pix-checkout>`);
      const { detail } = (await oneEvent(el, 'pix-created')) as unknown as { detail: { payment: { brcode: string } } };
      await (el as unknown as { updateComplete: Promise<unknown> }).updateComplete;
      const code = detail.payment.brcode;
      expect(checkBrCode(code).ok).to.equal(true);
      const drawn = el.shadowRoot!.querySelector('svg[part~="qr"] path')!.getAttribute('d');
      const expected = matrixPath(create([{ data: code, mode: 'byte' }], { errorCorrectionLevel: 'M' }).modules).d;
      expect(drawn).to.equal(expected);
      el.remove();
    }
  });

  it('is styled: its styles adopted by the shadow root (the bundle carries its own css-tag, src/css-tag.ts)', async () => {
    const el = await fixture<HTMLElement>(html`<pix-checkout endpoint=${apiUrl} amount="10.5"></pix-checkout>`);
    await oneEvent(el, 'pix-created');
    await (el as unknown as { updateComplete: Promise<unknown> }).updateComplete;
    const root = el.shadowRoot!;
    expect(root.adoptedStyleSheets.length).to.equal(1);
    expect(getComputedStyle(root.querySelector('[part="base"]')!).display).to.equal('flex');
    // The accent of the light palette, #0b7a5c.
    expect(getComputedStyle(root.querySelector('[part="copy-button"]')!).backgroundColor).to.equal('rgb(11, 122, 92)');
    el.remove();
  });
});
