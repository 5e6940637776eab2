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
import { FakeClock } from './support/fake-clock.ts';

const { apiUrl } = await executeServerCommand<{ apiUrl: string }, undefined>('dev-stack');

describe('the script-tag bundle', () => {
  // No payment resumed from an earlier test (open-amount mode saves it for a reload).
  beforeEach(() => sessionStorage.clear());

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

  it('"I need more time", in the later chunk: a new code, the session\'s names across the chunk edge the same in both files', async () => {
    const clock = new FakeClock();
    // The new code's request is held, to see the button while it runs.
    let hold = false;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const heldFetch: typeof fetch = async (input, init) => {
      if (hold && init?.method === 'POST') await held;
      return fetch(input, init);
    };
    const el = document.createElement('pix-checkout') as HTMLElement & { environment: object; updateComplete: Promise<unknown> };
    el.environment = { clock, fetch: heldFetch };
    el.setAttribute('endpoint', apiUrl);
    el.setAttribute('amount', '10.5');
    const created = oneEvent(el, 'pix-created');
    await fixture(html`${el}`);
    const first = (await created) as unknown as { detail: { payment: { reference: string; expires_at: string; server_time: string } } };
    await el.updateComplete;
    const { expires_at, server_time } = first.detail.payment;
    // 100 s left: the offer shows (from two minutes).
    clock.advance(Date.parse(expires_at) - Date.parse(server_time) - 100_000);
    await el.updateComplete;
    const button = el.shadowRoot!.querySelector<HTMLButtonElement>('[part="more-time-button"]');
    expect(button, 'the more-time button').to.exist;
    const next = oneEvent(el, 'pix-created');
    hold = true;
    button!.click();
    await el.updateComplete;
    expect(button!.disabled, 'disabled while the new code is asked for').to.equal(true);
    release();
    const { detail } = (await next) as unknown as { detail: { payment: { reference: string; status: string }; renewal: number } };
    expect(detail.renewal).to.equal(1);
    expect(detail.payment.status).to.equal('pending');
    expect(detail.payment.reference).to.not.equal(first.detail.payment.reference);
    el.remove();
  });

  it("a status stream's event the page cannot read is pix-error bad_response, not fatal (the reader in the later chunk, the error class the script's)", async () => {
    /** A stream (a fault: the environment's EventSource) whose first event is no payment view. */
    class BadStream extends EventTarget {
      readyState = 1;
      onerror: (() => void) | null = null;
      constructor(readonly url: string) {
        super();
        setTimeout(() => this.dispatchEvent(new MessageEvent('status', { data: '{"status":"refunded"}' })));
      }
      close() {
        this.readyState = 2;
      }
    }
    const el = document.createElement('pix-checkout') as HTMLElement & { environment: object; updateComplete: Promise<unknown> };
    el.environment = { EventSource: BadStream };
    el.setAttribute('endpoint', apiUrl);
    el.setAttribute('amount', '10.5');
    const error = oneEvent(el, 'pix-error');
    await fixture(html`${el}`);
    const { detail } = (await error) as unknown as { detail: Record<string, unknown> };
    expect(detail).to.deep.equal({ code: 'bad_response', message: 'The payment server sent an update this page cannot read.', fatal: false });
    el.remove();
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

  it("pix-expired's detail carries renewalsLeft (an event's names keep theirs in the bundle)", async () => {
    const clock = new FakeClock();
    const el = document.createElement('pix-checkout') as HTMLElement & { environment: object; updateComplete: Promise<unknown> };
    el.environment = { clock };
    el.setAttribute('endpoint', apiUrl);
    el.setAttribute('amount', '10.5');
    const created = oneEvent(el, 'pix-created');
    await fixture(html`${el}`);
    await created;
    await el.updateComplete;
    const expired = oneEvent(el, 'pix-expired');
    await executeServerCommand('sandbox-advance', { seconds: 3600 });
    clock.advance(3600_000);
    const { detail } = (await expired) as unknown as { detail: Record<string, unknown> };
    expect(Object.keys(detail).sort()).to.deep.equal(['payment', 'renewalsLeft']);
    expect(detail.renewalsLeft).to.equal(2);
    el.remove();
  });
});
