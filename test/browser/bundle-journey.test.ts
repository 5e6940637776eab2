/**
 * The built script-tag bundle (dist/pix-checkout.js, `npm run build`) through a customer's journey on
 * a phone: the build shortens the widget's internal property names (vite.config.ts,
 * INTERNAL_PROPERTIES), so the bundle itself, not only the source, must create, copy, save the QR
 * (its own chunk, dist/pix-checkout.save.js), follow the status and show the receipt, in a language
 * loaded on demand.
 */
import { expect, fixture, html, oneEvent, waitUntil } from '@open-wc/testing';
import { executeServerCommand } from '@web/test-runner-commands';
import '../../dist/pix-checkout.js';
import { readQrImage } from './support/qr-reader.ts';

const { apiUrl } = await executeServerCommand<{ apiUrl: string }, undefined>('dev-stack');

interface Widget extends HTMLElement {
  updateComplete: Promise<unknown>;
  screen: string;
  environment: Record<string, unknown>;
}

const part = (el: Widget, name: string) => el.shadowRoot!.querySelector<HTMLElement>(`[part~="${name}"]`);
const text = (el: Widget, name: string) => part(el, name)?.textContent?.replace(/\s+/g, ' ').trim() ?? null;

describe('the script-tag bundle, on a phone', () => {
  it('creates, copies, saves the QR (download), follows the status to paid and shows the receipt, in English', async () => {
    sessionStorage.clear();
    const clicks: string[] = [];
    const hrefs: string[] = [];
    const onClick = (event: MouseEvent) => {
      const anchor = event.composedPath()[0];
      if (anchor instanceof HTMLAnchorElement && anchor.hasAttribute('download')) {
        event.preventDefault();
        clicks.push(anchor.download);
        hrefs.push(anchor.href);
      }
    };
    window.addEventListener('click', onClick, true);
    try {
      const el = document.createElement('pix-checkout') as Widget;
      el.environment = { share: null, clipboard: null, execCopy: () => true };
      for (const [name, value] of Object.entries({ endpoint: apiUrl, amount: '12.34', layout: 'phone', locale: 'en' })) el.setAttribute(name, value);
      const created = oneEvent(el, 'pix-created');
      await fixture(html`${el}`);
      const { payment } = (await created).detail as { payment: { reference: string; brcode: string } };
      await el.updateComplete;
      expect(el.screen).to.equal('pending');
      expect(text(el, 'amount')).to.equal('R$12.34');
      expect(text(el, 'favoured')).to.match(/^Paying /);
      expect((part(el, 'code') as HTMLTextAreaElement).value).to.equal(payment.brcode);
      expect(part(el, 'countdown')!.querySelector('time')!.textContent).to.match(/^(\d+:)?\d\d:\d\d$/);

      const copied = oneEvent(el, 'pix-copy');
      part(el, 'copy-button')!.click();
      expect((await copied).detail).to.deep.equal({ copied: true, method: 'execCommand' });
      await el.updateComplete;
      expect(text(el, 'copy-button')).to.equal('Code copied');

      expect(text(el, 'save-button')).to.equal('Save QR code');
      const saved = oneEvent(el, 'pix-save');
      part(el, 'save-button')!.click();
      expect((await saved).detail).to.deep.equal({ method: 'download' });
      expect(clicks).to.deep.equal([`pix-${payment.reference}.png`]);
      // The downloaded image itself, read back: the QR drawn across the two chunks is the payment's code.
      expect((await readQrImage(await (await fetch(hrefs[0]!)).blob())).code).to.equal(payment.brcode);
      // And through a share sheet that takes files (the other branch of the same chunk).
      const shared: File[] = [];
      el.environment = {
        ...el.environment,
        share: { canShare: (data: ShareData) => !!data.files?.length, share: (data: ShareData) => (shared.push(...data.files!), Promise.resolve()) },
      };
      await el.updateComplete;
      const sharedEvent = oneEvent(el, 'pix-save');
      part(el, 'save-button')!.click();
      expect((await sharedEvent).detail).to.deep.equal({ method: 'share' });
      expect(shared.map((file) => [file.name, file.type])).to.deep.equal([[`pix-${payment.reference}.png`, 'image/png']]);
      expect((await readQrImage(shared[0]!)).code).to.equal(payment.brcode);
      expect(performance.getEntriesByType('resource').some((entry) => new URL(entry.name).pathname.endsWith('/dist/pix-checkout.save.js'))).to.equal(true);

      const paid = oneEvent(el, 'pix-paid');
      const res = await executeServerCommand<{ status: number }, unknown>('sandbox-pay', { reference: payment.reference });
      expect(res.status).to.equal(200);
      await paid;
      await waitUntil(() => el.screen === 'paid', 'paid screen');
      await el.updateComplete;
      expect(text(el, 'status')).to.equal('Payment confirmed');
      expect(text(el, 'receipt')).to.include(payment.reference);
      expect(part(el, 'save-button')).to.equal(null);
    } finally {
      window.removeEventListener('click', onClick, true);
    }
  });
});
