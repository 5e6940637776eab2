import { expect, oneEvent, waitUntil } from '@open-wc/testing';
import { setViewport } from '@web/test-runner-commands';
import { qrPath } from '../../src/qr.ts';
import { crc16, parseBrCode } from '../../src/shared/brcode.ts';
import { FakeClock } from './support/fake-clock.ts';
import { createElement, forgetSavedPayments, mount, part, text } from './support/helpers.ts';

beforeEach(forgetSavedPayments);

/** The order in which the pieces come, in the DOM (and so for keyboard and screen reader). */
const order = (el: HTMLElement, parts: string[]) =>
  [...el.shadowRoot!.querySelectorAll<HTMLElement>('[part]')].map((node) => node.getAttribute('part')!).filter((name) => parts.includes(name));

describe('rendering: the pending payment', () => {
  it('draws the QR locally from a valid code, with the code, amount, countdown and hosted link', async () => {
    const { el, payment } = await mount({ amount: 10.5, description: 'Pedido 42', env: { clock: new FakeClock() } });
    expect(payment.status).to.equal('pending');
    expect(parseBrCode(payment.brcode).ok).to.equal(true);
    const qr = el.shadowRoot!.querySelector('svg[part="qr"]')!;
    expect(qr.getAttribute('role')).to.equal('img');
    expect(qr.getAttribute('aria-label')!.replace(/\s/g, ' ')).to.equal(
      'QR code Pix para pagar R$ 10,50. No celular, use o botão Copiar código e cole no app do banco.',
    );
    // A dynamic BR Code of ~150 characters needs hundreds of dark runs; an empty or stub path has none.
    expect(qr.querySelector('path')!.getAttribute('d')!.split('M').length).to.be.greaterThan(200);
    expect(el.shadowRoot!.querySelector('img'), 'no third-party image when the code is valid').to.equal(null);
    const code = part(el, 'code') as HTMLTextAreaElement;
    expect(code.value).to.equal(payment.brcode);
    expect(code.readOnly).to.equal(true);
    expect(text(el, 'code-label')).to.equal('Pix Copia e Cola');
    expect(text(el, 'amount')).to.equal('R$ 10,50');
    expect(text(el, 'status')).to.equal('Aguardando pagamento');
    expect(text(el, 'countdown')).to.equal('Expira em 1:00:00');
    const link = part(el, 'checkout-link') as HTMLAnchorElement;
    expect(link.href).to.equal(payment.checkout_url);
    expect(link.textContent.trim()).to.equal('Pagar na página de pagamento');
    expect(el.matches(':state(pending)')).to.equal(true);
  });

  it('falls back to the service image and says so when the code fails the BR Code check', async () => {
    const corrupt: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const body = await res.json();
      // Change one character: the CRC no longer matches.
      body.brcode = body.brcode.replace('BR', 'BX');
      return new Response(JSON.stringify(body), { status: res.status, headers: { 'content-type': 'application/json' } });
    };
    const { el, payment } = await mount({ env: { fetch: corrupt, EventSource: null, clock: new FakeClock() } });
    expect(el.shadowRoot!.querySelector('svg[part="qr"]')).to.equal(null);
    const img = el.shadowRoot!.querySelector<HTMLImageElement>('img[part="qr"]')!;
    expect(img.getAttribute('src')).to.equal(payment.qr_code_url);
    expect(img.alt.replace(/\s/g, ' ')).to.contain('R$ 10,00');
    expect(el.shadowRoot!.querySelector('[role="alert"]')!.textContent).to.equal('Não foi possível desenhar o QR code. Use a imagem ou a página de pagamento.');
    expect(part(el, 'checkout-link')).to.exist;
  });

  it('a partner that gives no image and no hosted page: no empty link, no broken image, the code still shown', async () => {
    const bare =
      (brcodeBroken: boolean): typeof fetch =>
      async (input, init) => {
        const res = await fetch(input, init);
        const body = await res.json();
        body.qr_code_url = '';
        body.checkout_url = '';
        if (brcodeBroken) body.brcode = body.brcode.replace('BR', 'BX');
        return new Response(JSON.stringify(body), { status: res.status, headers: { 'content-type': 'application/json' } });
      };
    const drawn = await mount({ env: { fetch: bare(false), EventSource: null, clock: new FakeClock() } });
    expect(drawn.el.shadowRoot!.querySelector('svg[part="qr"]')).to.exist;
    expect(drawn.el.shadowRoot!.querySelector('[part="checkout-link"]')).to.equal(null);
    const broken = await mount({ env: { fetch: bare(true), EventSource: null, clock: new FakeClock() } });
    expect(broken.el.shadowRoot!.querySelector('img')).to.equal(null);
    expect(broken.el.shadowRoot!.querySelector('[part="checkout-link"]')).to.equal(null);
    expect((part(broken.el, 'code') as HTMLTextAreaElement).value).to.contain('BX');
    // Link mode without a hosted page shows the payment itself.
    const linkMode = await mount({ attrs: { mode: 'link' }, env: { fetch: bare(false), EventSource: null, clock: new FakeClock() } });
    expect(linkMode.el.shadowRoot!.querySelector('svg[part="qr"]')).to.exist;
  });

  describe('a code as real banks issue them, breaking rules of the manual that payer apps ignore', () => {
    const tlv = (id: string, value: string): string => id + String([...value].length).padStart(2, '0') + value;
    // A txid with a hyphen in a dynamic code (where *** belongs), an accented name of 26 characters.
    const body =
      '000201010212' +
      tlv('26', tlv('00', 'BR.GOV.BCB.PIX') + tlv('25', 'qr.banco.example/pix/v2/cobv/9d36b84f')) +
      '52040000' +
      '5303986' +
      tlv('54', '10.00') +
      '5802BR' +
      tlv('59', 'PADARIA E CONFEITARIA JOÃO') +
      tlv('60', 'SAO PAULO') +
      tlv('62', tlv('05', 'cobv-9d36b84f')) +
      '6304';
    const bankCode = body + crc16(body);
    /** The proxy's answers, with the partner's code swapped for `code`. */
    const answering =
      (code: string): typeof fetch =>
      async (input, init) => {
        const res = await fetch(input, init);
        const answer = await res.json();
        if (answer.brcode) answer.brcode = code;
        return new Response(JSON.stringify(answer), { status: res.status, headers: { 'content-type': 'application/json' } });
      };

    it('is drawn locally: its warnings do not block the QR', async () => {
      const checked = parseBrCode(bankCode);
      expect(checked.ok && checked.warnings.length).to.equal(4);
      const { el } = await mount({ env: { fetch: answering(bankCode), EventSource: null, clock: new FakeClock() } });
      const drawn = el.shadowRoot!.querySelector('svg[part="qr"] path')!.getAttribute('d');
      expect(drawn, 'the QR of the bank code itself').to.equal(qrPath(bankCode).d);
      expect(el.shadowRoot!.querySelector('img'), 'no service image').to.equal(null);
      expect(el.shadowRoot!.querySelector('[role="alert"]')).to.equal(null);
      expect((part(el, 'code') as HTMLTextAreaElement).value).to.equal(bankCode);
    });

    it('with a CRC that does not hold, falls back to the service image', async () => {
      const broken = bankCode.slice(0, -4) + (bankCode.endsWith('0000') ? '0001' : '0000');
      const { el, payment } = await mount({ env: { fetch: answering(broken), EventSource: null, clock: new FakeClock() } });
      expect(el.shadowRoot!.querySelector('svg[part="qr"]')).to.equal(null);
      expect(el.shadowRoot!.querySelector<HTMLImageElement>('img[part="qr"]')!.getAttribute('src')).to.equal(payment.qr_code_url);
      expect(el.shadowRoot!.querySelector('[role="alert"]')!.textContent).to.equal(
        'Não foi possível desenhar o QR code. Use a imagem ou a página de pagamento.',
      );
    });
  });

  it('link mode renders only the hosted page link, then the result', async () => {
    const { el, payment } = await mount({ attrs: { mode: 'link' }, env: { clock: new FakeClock() } });
    expect(part(el, 'qr')).to.equal(null);
    expect(part(el, 'code')).to.equal(null);
    expect(part(el, 'copy-button')).to.equal(null);
    const link = part(el, 'checkout-link') as HTMLAnchorElement;
    expect(link.href).to.equal(payment.checkout_url);
    expect(link.target).to.equal('_blank');
    expect(link.rel).to.equal('noopener');
  });

  it('shows a loading screen while the payment is being created', async () => {
    const el = await createElement();
    expect(el.screen).to.equal('loading');
    expect(text(el, 'status')).to.equal('Gerando o código Pix…');
    expect(el.matches(':state(loading)')).to.equal(true);
    await oneEvent(el, 'pix-created');
  });
});

describe('rendering: phones first', () => {
  afterEach(() => setViewport({ width: 800, height: 600 }));

  it('puts the copy button before the QR on a narrow screen, and the QR first on a wide one', async () => {
    await setViewport({ width: 375, height: 740 });
    const phone = await mount({ env: { clock: new FakeClock() } });
    expect(order(phone.el, ['qr', 'copy-button'])).to.deep.equal(['copy-button', 'qr']);
    await setViewport({ width: 1200, height: 800 });
    await waitUntil(() => order(phone.el, ['qr', 'copy-button'])[0] === 'qr', 'QR first once the screen is wide');
  });

  it('lets the page force a layout', async () => {
    const { el } = await mount({ attrs: { layout: 'phone' }, env: { clock: new FakeClock() } });
    expect(order(el, ['qr', 'copy-button'])).to.deep.equal(['copy-button', 'qr']);
    el.layout = 'desktop';
    await el.updateComplete;
    expect(order(el, ['qr', 'copy-button'])).to.deep.equal(['qr', 'copy-button']);
  });
});

describe('rendering: locales and texts', () => {
  const cases = [
    { locale: 'en', amount: 'R$10.50', status: 'Waiting for payment', copy: 'Copy code', countdown: 'Expires in 1:00:00' },
    { locale: 'es', amount: '10,50 R$', status: 'Esperando el pago', copy: 'Copiar código', countdown: 'Caduca en 1:00:00' },
    { locale: 'pt-BR', amount: 'R$ 10,50', status: 'Aguardando pagamento', copy: 'Copiar código', countdown: 'Expira em 1:00:00' },
  ];
  for (const c of cases) {
    it(`speaks ${c.locale}`, async () => {
      const { el } = await mount({ amount: 10.5, attrs: { locale: c.locale }, env: { clock: new FakeClock() } });
      expect(text(el, 'amount')).to.equal(c.amount);
      expect(text(el, 'status')).to.equal(c.status);
      expect(text(el, 'copy-button')).to.equal(c.copy);
      expect(text(el, 'countdown')).to.equal(c.countdown);
    });
  }

  it('formats BRL in Spanish the Intl way and switches language live', async () => {
    const { el } = await mount({ amount: 1234.5, attrs: { locale: 'es' }, env: { clock: new FakeClock() } });
    expect(text(el, 'amount')).to.equal('1234,50 R$');
    el.locale = 'en';
    await el.updateComplete;
    expect(text(el, 'amount')).to.equal('R$1,234.50');
    expect(text(el, 'scan-hint')).to.equal("Scan the QR code with your bank's app");
  });

  it('merges the page texts over the locale', async () => {
    const { el } = await mount({ env: { clock: new FakeClock() } });
    el.texts = { copy: 'Copiar Pix', pending: 'Esperando seu Pix' };
    await el.updateComplete;
    expect(text(el, 'copy-button')).to.equal('Copiar Pix');
    expect(text(el, 'status')).to.equal('Esperando seu Pix');
    expect(text(el, 'code-label'), 'other texts stay').to.equal('Pix Copia e Cola');
  });
});

describe('rendering: theming', () => {
  it('follows --pix-* properties and the forced dark theme', async () => {
    const { el } = await mount({ env: { clock: new FakeClock() } });
    const button = part(el, 'copy-button')!;
    expect(getComputedStyle(button).backgroundColor).to.equal('rgb(11, 122, 92)');
    el.style.setProperty('--pix-accent', 'rgb(200, 0, 100)');
    expect(getComputedStyle(button).backgroundColor).to.equal('rgb(200, 0, 100)');
    el.style.removeProperty('--pix-accent');
    el.theme = 'dark';
    await el.updateComplete;
    expect(getComputedStyle(el).backgroundColor).to.equal('rgb(22, 25, 29)');
    expect(getComputedStyle(button).backgroundColor).to.equal('rgb(94, 224, 181)');
  });

  it('exposes a part for every piece and a slot for header, footer and paid content', async () => {
    const { el } = await mount({ env: { clock: new FakeClock() } });
    for (const name of ['base', 'amount', 'status', 'countdown', 'progress', 'qr', 'scan-hint', 'code-label', 'code', 'copy-button', 'checkout-link']) {
      expect(part(el, name), name).to.exist;
    }
    const slots = [...el.shadowRoot!.querySelectorAll('slot')].map((s) => s.name);
    expect(slots).to.include.members(['header', 'footer']);
  });
});
