/**
 * What the customer gets beyond paying: the central bank's name for the code field, who is being paid,
 * sharing the code, "I need more time" before the code expires, and a receipt to print or save. Every
 * behaviour in every locale, against the real stack; fakes only for time, faults and the Web Share API.
 */
import { expect, oneEvent } from '@open-wc/testing';
import type { PixEnvironment } from '../../src/controllers/environment.ts';
import type { PixCheckout } from '../../src/pix-checkout.ts';
import { parseBrCode } from '../../src/shared/brcode.ts';
import type { PaymentView } from '../../src/shared/contract.ts';
import { FakeClock } from './support/fake-clock.ts';
import { announced, createCheckout, forgetSavedPayments, mount, part, pay, renewalsStack, screenIs, settle, text } from './support/helpers.ts';

beforeEach(forgetSavedPayments);

/** The sandbox's receiver: its registered name (favoured) and the shorter name it writes in field 59. */
const FAVOURED = 'Loja Sandbox LTDA';

const LOCALES = [
  {
    locale: 'pt-BR',
    label: 'Pix Copia e Cola',
    paying: (name: string) => `Pagando para ${name}`,
    amount: 'R$ 10,50',
    share: 'Compartilhar código',
    expiresIn: 'Expira em',
    moreTime: 'Preciso de mais tempo',
    offer: 'Faltam 2 minutos para pagar. Precisa de mais tempo? Peça um novo código.',
    twoMinutes: 'Faltam 2 minutos para pagar.',
    oneMinute: 'Faltam 1 minuto para pagar.',
    failed: 'Não foi possível gerar um novo código; este ainda vale.',
    paid: 'Pagamento confirmado',
    receipt: ['Valor', 'Recebedor', 'Data e hora', 'Referência'],
    print: 'Imprimir ou salvar comprovante',
  },
  {
    locale: 'en',
    label: 'Pix Copia e Cola (copy and paste code)',
    paying: (name: string) => `Paying ${name}`,
    amount: 'R$10.50',
    share: 'Share code',
    expiresIn: 'Expires in',
    moreTime: 'I need more time',
    offer: '2 minutes left to pay. Need more time? Ask for a new code.',
    twoMinutes: '2 minutes left to pay.',
    oneMinute: '1 minute left to pay.',
    failed: 'No new code could be generated; this one still works.',
    paid: 'Payment confirmed',
    receipt: ['Amount', 'Paid to', 'Date and time', 'Reference'],
    print: 'Print or save receipt',
  },
  {
    locale: 'es',
    label: 'Pix Copia e Cola (código para copiar y pegar)',
    paying: (name: string) => `Pagando a ${name}`,
    amount: '10,50 R$',
    share: 'Compartir código',
    expiresIn: 'Caduca en',
    moreTime: 'Necesito más tiempo',
    offer: 'Quedan 2 minutos para pagar. ¿Necesitas más tiempo? Pide un código nuevo.',
    twoMinutes: 'Quedan 2 minutos para pagar.',
    oneMinute: 'Quedan 1 minuto para pagar.',
    failed: 'No se pudo generar un código nuevo; este sigue valiendo.',
    paid: 'Pago confirmado',
    receipt: ['Importe', 'Pagado a', 'Fecha y hora', 'Referencia'],
    print: 'Imprimir o guardar comprobante',
  },
];

/** No status reads at all (no stream, polling paused as in a hidden tab): only the widget's own requests. */
const quiet = { EventSource: null, hidden: () => true } satisfies Partial<PixEnvironment>;

/** Intl separates money and times with no-break spaces: compared as plain ones. */
const plain = (s: string) => s.replace(/[\u00a0\u202f]/g, ' ').trim();
const plainShare = (data: ShareData) => ({ ...data, text: plain(data.text!) });
const spoken = (el: PixCheckout) => el.shadowRoot!.querySelector('[aria-live="polite"]:not([role])')!.textContent.trim();
/** Whether a part is rendered (a boolean: a failing assertion on an element itself would print all of it). */
const has = (el: PixCheckout, name: string) => part(el, name) !== null;
const codeField = (el: PixCheckout) => part(el, 'code') as HTMLTextAreaElement;
const moreTimeButton = (el: PixCheckout) => part(el, 'more-time-button') as HTMLButtonElement | null;

/** The proxy's answers (JSON bodies), changed by `edit` on their way to the widget. */
function editing(edit: (view: Record<string, unknown>) => void): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    const body = await res.json();
    if (res.ok) edit(body);
    return new Response(JSON.stringify(body), { status: res.status, headers: { 'content-type': 'application/json' } });
  };
}

interface Sent {
  method: string;
  path: string;
  body: string | null;
  contentType: string | null;
  status?: number;
}

/**
 * A fetch that records each request and its answer's status; requests for which `hold` says true wait
 * until `release()`, and `fail` may answer instead of the proxy.
 */
function recorder(options: { hold?: (sent: Sent) => boolean; fail?: (sent: Sent) => Promise<Response> | null } = {}) {
  const sent: Sent[] = [];
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const impl: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    const entry: Sent = {
      method: init?.method ?? 'GET',
      path: new URL(input instanceof Request ? input.url : input.toString()).pathname,
      body: typeof init?.body === 'string' ? init.body : null,
      contentType: headers.get('content-type'),
    };
    sent.push(entry);
    if (options.hold?.(entry)) await released;
    const res = (await options.fail?.(entry)) ?? (await fetch(input, init));
    entry.status = res.status;
    return res;
  };
  return { fetch: impl, sent, release, posts: () => sent.filter((r) => r.method === 'POST') };
}

const isRenew = (sent: Sent) => sent.method === 'POST' && sent.body !== null;

/** Moves the fake clock to `left` seconds before the code on screen expires (one step, firing timers on the way). */
async function leaveSeconds(el: PixCheckout, clock: FakeClock, left: number): Promise<void> {
  const now = (el.shadowRoot!.querySelector('[part~="countdown"] time')!.getAttribute('datetime') ?? '').match(/\d+/)![0];
  clock.advance((Number(now) - left) * 1000);
  await el.updateComplete;
}

/** The Web Share API as a browser that has it (or not) exposes it; removed after each test. */
function stubShare(share: unknown, canShare?: (data: ShareData) => boolean): void {
  Object.defineProperty(navigator, 'share', { configurable: true, value: share });
  Object.defineProperty(navigator, 'canShare', { configurable: true, value: canShare });
}
afterEach(() => {
  delete (navigator as { share?: unknown }).share;
  delete (navigator as { canShare?: unknown }).canShare;
});

/** The element's own @media print rules, applied as if printing (no print emulation needed: any engine). */
function printAsScreen(el: PixCheckout): CSSMediaRule | undefined {
  const root = el.shadowRoot!;
  const sheets = root.adoptedStyleSheets.length ? root.adoptedStyleSheets : [...root.styleSheets];
  const print = sheets
    .flatMap((sheet) => [...sheet.cssRules])
    .find((rule): rule is CSSMediaRule => rule instanceof CSSMediaRule && rule.media.mediaText === 'print');
  if (print) {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync([...print.cssRules].map((rule) => rule.cssText).join('\n'));
    root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
  }
  return print;
}

for (const L of LOCALES) {
  describe(`for the customer, in ${L.locale}`, () => {
    const attrs = { locale: L.locale };

    describe('the code field and who is being paid', () => {
      it("labels the field with the central bank's name and says who is being paid (favoured), near the amount", async () => {
        const { el, payment } = await mount({ amount: 10.5, attrs, env: { clock: new FakeClock() } });
        expect(text(el, 'code-label')).to.equal(L.label);
        expect(el.shadowRoot!.querySelector('label[for="code"]')!.textContent.trim()).to.equal(L.label);
        expect(payment.favoured).to.equal(FAVOURED);
        expect(text(el, 'favoured')).to.equal(L.paying(FAVOURED));
        expect(part(el, 'amount')!.nextElementSibling?.getAttribute('part'), 'right under the amount').to.equal('favoured');
        await expect(el).to.be.accessible();
      });

      it('without favoured (null, or absent from an older proxy) names the merchant in the BR Code; with neither, says nothing', async () => {
        const unread = await mount({ amount: 10.5, attrs, env: { ...quiet, clock: new FakeClock(), fetch: editing((view) => (view.favoured = null)) } });
        const inCode = parseBrCode(unread.payment.brcode);
        expect(inCode.ok).to.equal(true);
        const merchant = inCode.ok ? inCode.code.merchantName : '';
        expect(merchant, 'field 59 differs from the registered name here').to.not.equal(FAVOURED);
        expect(unread.payment.favoured).to.equal(null);
        expect(text(unread.el, 'favoured')).to.equal(L.paying(merchant));

        const older = await mount({ amount: 10.51, attrs, env: { ...quiet, clock: new FakeClock(), fetch: editing((view) => delete view.favoured) } });
        expect('favoured' in older.payment).to.equal(false);
        expect(text(older.el, 'favoured')).to.equal(L.paying(merchant));

        // A code that fails the check is not read for a name either.
        const neither = await mount({
          amount: 10.52,
          attrs,
          env: { ...quiet, clock: new FakeClock(), fetch: editing((view) => Object.assign(view, { favoured: null, brcode: `${String(view.brcode)}0` })) },
        });
        expect(has(neither.el, 'favoured')).to.equal(false);
        expect(part(neither.el, 'amount')).to.exist;
      });
    });

    describe('sharing the code', () => {
      it('where the Web Share API exists: shares the code with a localized line and the hosted link; a cancel is no error', async () => {
        const shared: ShareData[] = [];
        let answer: () => Promise<void> = () => Promise.resolve();
        stubShare(
          (data: ShareData) => {
            shared.push(data);
            return answer();
          },
          () => true,
        );
        const { el, payment } = await mount({ amount: 10.5, attrs, env: { clock: new FakeClock() } });
        const button = part(el, 'share-button')!;
        expect(button.tagName).to.equal('BUTTON');
        expect(button.textContent.trim()).to.equal(L.share);
        await expect(el).to.be.accessible();
        const errors: string[] = [];
        el.addEventListener('pix-error', (e) => errors.push(e.detail.code));

        button.click();
        expect(shared.map(plainShare)).to.deep.equal([{ text: `${L.amount}, ${L.label}:\n${payment.brcode}`, url: payment.checkout_url }]);

        // The customer closes the share sheet: nothing to report, nothing announced.
        answer = () => Promise.reject(new DOMException('Share canceled', 'AbortError'));
        button.click();
        await settle();
        await el.updateComplete;
        expect(shared.length).to.equal(2);
        expect(errors).to.deep.equal([]);
        expect(announced(el)).to.equal('');

        answer = () => Promise.reject(new DOMException('Not allowed', 'NotAllowedError'));
        const failed = oneEvent(el, 'pix-error');
        button.click();
        expect((await failed).detail).to.deep.include({ code: 'share_failed', fatal: false });
        expect(el.screen).to.equal('pending');
      });

      it('without a hosted page shares the code alone', async () => {
        const shared: ShareData[] = [];
        stubShare((data: ShareData) => (shared.push(data), Promise.resolve()));
        const { el, payment } = await mount({
          amount: 10.5,
          attrs,
          env: { ...quiet, clock: new FakeClock(), fetch: editing((view) => (view.checkout_url = '')) },
        });
        part(el, 'share-button')!.click();
        expect(shared.map(plainShare)).to.deep.equal([{ text: `${L.amount}, ${L.label}:\n${payment.brcode}` }]);
      });

      it('where it does not exist, or refuses the data, there is no share button', async () => {
        stubShare(undefined);
        const { el } = await mount({ amount: 10.5, attrs, env: { clock: new FakeClock() } });
        expect(has(el, 'share-button')).to.equal(false);
        expect(part(el, 'copy-button')).to.exist;
        stubShare(
          () => Promise.resolve(),
          () => false,
        );
        el.requestUpdate();
        await el.updateComplete;
        expect(has(el, 'share-button')).to.equal(false);
      });
    });

    describe('"I need more time"', () => {
      it('appears at 2:00 left and not before, is announced once, and a tap gets a new code (checkout mode)', async () => {
        const { checkout_id } = await createCheckout(10.5);
        const requests = recorder({ hold: isRenew });
        const clock = new FakeClock();
        const { el, payment } = await mount({ checkout: checkout_id, attrs, env: { ...quiet, clock, fetch: requests.fetch } });
        expect(payment.renewable).to.equal(true);

        await leaveSeconds(el, clock, 121);
        expect(text(el, 'countdown')).to.equal(`${L.expiresIn} 02:01`);
        expect(has(el, 'more-time-button'), 'not before two minutes are left').to.equal(false);

        clock.advance(1000);
        await el.updateComplete;
        expect(text(el, 'countdown')).to.equal(`${L.expiresIn} 02:00`);
        expect(moreTimeButton(el)!.textContent.trim()).to.equal(L.moreTime);
        expect(spoken(el)).to.equal(L.offer);
        await expect(el).to.be.accessible();

        const heard = [spoken(el)];
        for (let s = 119; s >= 55; s--) {
          clock.advance(1000);
          await el.updateComplete;
          if (spoken(el) !== heard.at(-1)) heard.push(spoken(el));
        }
        expect(heard, 'the offer is announced once').to.deep.equal([L.offer, L.oneMinute]);

        const created = oneEvent(el, 'pix-created');
        moreTimeButton(el)!.focus();
        moreTimeButton(el)!.click();
        await el.updateComplete;
        expect(moreTimeButton(el)!.disabled, 'disabled while the request runs').to.equal(true);
        expect(codeField(el).value, 'the current code stays on screen meanwhile').to.equal(payment.brcode);
        await expect(el).to.be.accessible();
        expect(requests.posts().slice(1)).to.deep.equal([
          { method: 'POST', path: `/api/checkouts/${checkout_id}/payment`, body: '{"renew":true}', contentType: 'application/json' },
        ]);

        requests.release();
        const next = (await created).detail;
        expect(requests.posts()[1]!.status).to.equal(201);
        expect(next.payment.reference).to.not.equal(payment.reference);
        expect(next.payment.value).to.equal(10.5);
        expect(next).to.deep.include({ resumed: false, renewal: 1 });
        await el.updateComplete;
        expect(codeField(el).value).to.equal(next.payment.brcode);
        expect(text(el, 'countdown')).to.equal(`${L.expiresIn} 1:00:00`);
        expect(has(el, 'more-time-button')).to.equal(false);
        expect(el.shadowRoot!.activeElement?.getAttribute('part'), 'focus on the news, not lost with the button').to.equal('status');
      });

      it('is absent when the checkout can issue no new code (renewable false)', async function () {
        this.timeout(30_000);
        // This stack's proxy allows one renewal per checkout: the second code is not renewable.
        const { apiUrl } = await renewalsStack();
        const { checkout_id } = await createCheckout(10.5, 'renewals');
        const clock = new FakeClock();
        const { el, payment } = await mount({ apiUrl, checkout: checkout_id, attrs, env: { ...quiet, clock } });
        expect(payment.renewable).to.equal(true);
        await leaveSeconds(el, clock, 120);
        const created = oneEvent(el, 'pix-created');
        moreTimeButton(el)!.click();
        const next = (await created).detail.payment;
        expect(next.renewable).to.equal(false);
        await el.updateComplete;

        await leaveSeconds(el, clock, 121);
        clock.advance(1000);
        await el.updateComplete;
        expect(text(el, 'countdown')).to.equal(`${L.expiresIn} 02:00`);
        expect(has(el, 'more-time-button')).to.equal(false);
        expect(spoken(el), 'the time left, without the offer').to.equal(L.twoMinutes);
      });

      it('a payment made meanwhile wins: the proxy checks the current code first and the widget shows it paid', async () => {
        const { checkout_id } = await createCheckout(10.5);
        const requests = recorder();
        const clock = new FakeClock();
        const { el, payment } = await mount({ checkout: checkout_id, attrs, env: { ...quiet, clock, fetch: requests.fetch } });
        await leaveSeconds(el, clock, 30);
        // Paid at the last second, unseen by the widget (no status reads).
        await pay(payment.reference);
        expect(el.screen).to.equal('pending');
        const created: unknown[] = [];
        el.addEventListener('pix-created', (e) => created.push(e));
        const paid = oneEvent(el, 'pix-paid');
        moreTimeButton(el)!.click();
        expect((await paid).detail.payment.reference).to.equal(payment.reference);
        await screenIs(el, 'paid');
        expect(requests.posts().at(-1)).to.deep.include({ body: '{"renew":true}', status: 200 });
        expect(created, 'no new code').to.deep.equal([]);
        expect(text(el, 'status')).to.equal(L.paid);
      });

      it('open amount: a tap creates a new payment the way "generate a new code" does, after checking this one; a payment made meanwhile wins', async () => {
        const requests = recorder();
        const clock = new FakeClock();
        const { el, payment } = await mount({ amount: 10.5, attrs, env: { ...quiet, clock, fetch: requests.fetch } });
        await leaveSeconds(el, clock, 120);
        expect(spoken(el)).to.equal(L.offer);
        const created = oneEvent(el, 'pix-created');
        moreTimeButton(el)!.click();
        const next = (await created).detail;
        expect(next.payment.reference).to.not.equal(payment.reference);
        expect(next).to.deep.include({ resumed: false, renewal: 1 });
        expect(requests.sent.slice(1).map((r) => `${r.method} ${r.path}`)).to.deep.equal([
          `GET /api/payments/${encodeURIComponent(payment.reference)}`,
          'POST /api/payments',
        ]);
        expect(JSON.parse(requests.posts()[1]!.body!)).to.deep.equal({ value: 10.5 });
        await el.updateComplete;
        expect(text(el, 'countdown')).to.equal(`${L.expiresIn} 1:00:00`);
        // A reload finds the new code, with the renewal counted.
        const saved = Object.keys(sessionStorage).filter((key) => key.startsWith('pix-checkout:'));
        expect(saved.map((key) => JSON.parse(sessionStorage.getItem(key)!))).to.deep.equal([{ reference: next.payment.reference, renewals: 1 }]);

        // The new code is paid at the last second: the widget's check finds it, and no third code is made.
        await leaveSeconds(el, clock, 60);
        await pay(next.payment.reference);
        const paid = oneEvent(el, 'pix-paid');
        moreTimeButton(el)!.click();
        expect((await paid).detail.payment.reference).to.equal(next.payment.reference);
        await screenIs(el, 'paid');
        expect(requests.posts().length).to.equal(2);
      });

      it('a failure keeps the code on screen, says so, and offers the button again; no code left removes it', async () => {
        const { checkout_id } = await createCheckout(10.5);
        let refusal: 'network' | 'exhausted' = 'network';
        const requests = recorder({
          fail: (sent) =>
            !isRenew(sent)
              ? null
              : refusal === 'network'
                ? Promise.reject(new TypeError('Failed to fetch'))
                : Promise.resolve(
                    new Response(JSON.stringify({ error: { code: 'renewals_exhausted', message: 'No new code.' } }), {
                      status: 409,
                      headers: { 'content-type': 'application/json' },
                    }),
                  ),
        });
        const clock = new FakeClock();
        const { el, payment } = await mount({ checkout: checkout_id, attrs, env: { ...quiet, clock, fetch: requests.fetch } });
        await leaveSeconds(el, clock, 100);
        const error = oneEvent(el, 'pix-error');
        moreTimeButton(el)!.click();
        expect((await error).detail).to.deep.include({ code: 'network', fatal: false });
        await el.updateComplete;
        expect(el.screen).to.equal('pending');
        expect(codeField(el).value).to.equal(payment.brcode);
        expect(announced(el)).to.equal(L.failed);
        expect(moreTimeButton(el)!.disabled).to.equal(false);
        await expect(el).to.be.accessible();

        refusal = 'exhausted';
        const refused = oneEvent(el, 'pix-error');
        moreTimeButton(el)!.click();
        expect((await refused).detail).to.deep.include({ code: 'renewals_exhausted', fatal: false });
        await el.updateComplete;
        expect(el.screen).to.equal('pending');
        expect(has(el, 'more-time-button')).to.equal(false);
        expect(codeField(el).value).to.equal(payment.brcode);
      });
    });

    describe('the receipt', () => {
      it('shows the amount, who was paid, the date and time of payment and the reference; prints; prints alone, black on white', async () => {
        const { el, payment } = await mount({ amount: 10.5, attrs, env: { clock: new FakeClock() } });
        const paidEvent = oneEvent(el, 'pix-paid');
        await pay(payment.reference);
        const paid: PaymentView = (await paidEvent).detail.payment;
        await screenIs(el, 'paid');
        expect(paid.paid_at).to.be.a('string');
        const receipt = part(el, 'receipt')!;
        expect(receipt.tagName).to.equal('DL');
        const terms = [...receipt.querySelectorAll('dt')].map((dt) => dt.textContent.trim());
        const values = [...receipt.querySelectorAll('dd')].map((dd) => plain(dd.textContent));
        expect(terms).to.deep.equal(L.receipt);
        const at = new Date(paid.paid_at!);
        const when = new Intl.DateTimeFormat(L.locale, { dateStyle: 'medium', timeStyle: 'long' }).format(at);
        expect(values).to.deep.equal([L.amount, FAVOURED, plain(when), payment.reference]);
        expect(values[2]).to.contain(String(at.getFullYear()));
        expect(receipt.querySelector('time')!.getAttribute('datetime')).to.equal(at.toISOString());
        await expect(el).to.be.accessible();

        const button = part(el, 'print-button')!;
        expect(button.textContent.trim()).to.equal(L.print);
        let printed = 0;
        const print = Object.getOwnPropertyDescriptor(window, 'print')!;
        Object.defineProperty(window, 'print', { configurable: true, value: () => void printed++ });
        try {
          button.click();
        } finally {
          Object.defineProperty(window, 'print', print);
        }
        expect(printed).to.equal(1);

        el.theme = 'dark';
        await el.updateComplete;
        await expect(el).to.be.accessible();
        expect(getComputedStyle(el).backgroundColor).to.equal('rgb(22, 25, 29)');
        expect(printAsScreen(el), "an @media print rule in the element's own styles").to.exist;
        expect(getComputedStyle(button).display).to.equal('none');
        expect(getComputedStyle(el).backgroundColor).to.equal('rgb(255, 255, 255)');
        for (const node of [part(el, 'status')!, part(el, 'amount')!, ...receipt.children]) {
          expect(getComputedStyle(node).color, node.textContent).to.equal('rgb(0, 0, 0)');
        }
        expect(getComputedStyle(receipt).display).to.not.equal('none');
      });

      it('without paid_at from the proxy, shows when the widget saw it paid; without a name, no receiver row', async () => {
        const clock = new FakeClock(Date.parse('2026-03-04T15:06:07.000Z'));
        const fetchImpl = editing((view) => Object.assign(view, { paid_at: null, favoured: null, brcode: `${String(view.brcode)}0` }));
        const { el, payment } = await mount({ amount: 10.5, attrs, env: { clock, fetch: fetchImpl, EventSource: null } });
        await pay(payment.reference);
        const paid = oneEvent(el, 'pix-paid');
        clock.advance(2000);
        await paid;
        await screenIs(el, 'paid');
        const receipt = part(el, 'receipt')!;
        const seen = new Date('2026-03-04T15:06:09.000Z');
        expect([...receipt.querySelectorAll('dt')].map((dt) => dt.textContent.trim())).to.deep.equal([L.receipt[0], L.receipt[2], L.receipt[3]]);
        expect(receipt.querySelector('time')!.getAttribute('datetime')).to.equal(seen.toISOString());
        expect(receipt.querySelector('time')!.textContent).to.equal(new Intl.DateTimeFormat(L.locale, { dateStyle: 'medium', timeStyle: 'long' }).format(seen));
      });
    });
  });
}
