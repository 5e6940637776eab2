import { expect, fixture, html, oneEvent, waitUntil } from '@open-wc/testing';
import { executeServerCommand } from '@web/test-runner-commands';
import '../../src/define.ts';
import type { PixCheckout } from '../../src/pix-checkout.ts';
import { parseBrCode } from '../../src/shared/brcode.ts';

const { apiUrl } = (await executeServerCommand('dev-stack')) as { url: string; apiUrl: string };

function shadow(el: PixCheckout) {
  return el.shadowRoot!;
}

describe('<pix-checkout> against the real proxy and sandbox', () => {
  it('shows a locally drawn QR and the code, then turns to paid when the sandbox is paid', async () => {
    const el = await fixture<PixCheckout>(html`<pix-checkout endpoint=${apiUrl} amount="10.5" description="Pedido 42"></pix-checkout>`);
    const { detail } = await oneEvent(el, 'pix-created');
    const payment = detail.payment;
    await el.updateComplete;

    expect(payment.status).to.equal('pending');
    expect(payment.value).to.equal(10.5);
    const parsed = parseBrCode(payment.brcode);
    expect(parsed.ok, 'the code from the sandbox is a valid BR Code').to.equal(true);

    const qr = shadow(el).querySelector('svg[part="qr"]');
    expect(qr, 'QR drawn as inline SVG').to.exist;
    expect(qr!.getAttribute('role')).to.equal('img');
    expect(qr!.getAttribute('aria-label')).to.contain('R$');
    const pathData = qr!.querySelector('path')!.getAttribute('d')!;
    // A dynamic BR Code of ~150 characters needs hundreds of dark runs; an empty or stub path has none.
    expect(pathData.split('M').length).to.be.greaterThan(200);
    expect(shadow(el).querySelector('img'), 'no third-party QR image when the code is valid').to.equal(null);

    const code = shadow(el).querySelector<HTMLTextAreaElement>('textarea[part="code"]')!;
    expect(code.value).to.equal(payment.brcode);
    expect(code.readOnly).to.equal(true);
    expect(shadow(el).querySelector('.amount')!.textContent!.replace(/\s/g, ' ')).to.equal('R$ 10,50');
    expect(shadow(el).querySelector('[part="status"]')!.textContent).to.equal('Aguardando pagamento');

    const paid = oneEvent(el, 'pix-paid');
    const result = (await executeServerCommand('sandbox-pay', { reference: payment.reference })) as { status: number };
    expect(result.status).to.equal(200);
    const { detail: paidDetail } = await paid;
    expect(paidDetail.payment.reference).to.equal(payment.reference);
    expect(paidDetail.payment.status).to.equal('paid');
    await el.updateComplete;
    expect(shadow(el).querySelector('[part="status"]')!.textContent).to.equal('Pagamento confirmado');
    expect(shadow(el).querySelector('svg[part="qr"]'), 'the QR is gone once paid').to.equal(null);
    expect(shadow(el).querySelector('[role="status"]')!.textContent).to.equal('Pagamento confirmado');
  });

  it('keeps following the payment after being moved in the page', async () => {
    const el = await fixture<PixCheckout>(html`<pix-checkout endpoint=${apiUrl} amount="2"></pix-checkout>`);
    const { detail } = await oneEvent(el, 'pix-created');
    const elsewhere = document.createElement('div');
    document.body.append(elsewhere);
    elsewhere.append(el);
    const paid = oneEvent(el, 'pix-paid');
    await executeServerCommand('sandbox-pay', { reference: detail.payment.reference });
    expect((await paid).detail.payment.status).to.equal('paid');
    elsewhere.remove();
  });

  it('shows an error with a retry when the proxy refuses the amount, and names the field', async () => {
    const el = await fixture<PixCheckout>(html`<pix-checkout endpoint=${apiUrl} amount="0.1"></pix-checkout>`);
    const { detail } = await oneEvent(el, 'pix-error');
    expect(detail.code).to.equal('invalid_request');
    expect(detail.fields).to.deep.equal({ value: 'must be at least 0.20' });
    await el.updateComplete;
    expect(shadow(el).querySelector('[role="alert"]')!.textContent).to.equal('Não foi possível carregar o pagamento.');
    const retry = shadow(el).querySelector<HTMLButtonElement>('button[part="retry-button"]')!;

    el.amount = 1;
    retry.click();
    await oneEvent(el, 'pix-created');
    await el.updateComplete;
    expect(shadow(el).querySelector('svg[part="qr"]')).to.exist;
  });

  it('reports an unreachable proxy as a network error, not a crash', async () => {
    const el = await fixture<PixCheckout>(html`<pix-checkout endpoint="http://127.0.0.1:9/api" amount="5"></pix-checkout>`);
    const { detail } = await oneEvent(el, 'pix-error');
    expect(detail.code).to.equal('network');
    await waitUntil(() => shadow(el).querySelector('button[part="retry-button"]'), 'retry button shown');
  });
});
