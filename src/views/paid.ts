import { kit } from '../kit.ts';
import type { Translation } from '../locales/index.ts';
import type { PaymentView } from '../shared/contract.ts';

/**
 * The paid screen: a receipt the customer can print or save (printed black on white, without
 * buttons). Its time: the proxy's time of payment, else `seen` (when this widget saw it paid, epoch
 * ms), said in the customer's time zone.
 */
export function renderPaid(t: Translation, payment: PaymentView, amount: string, receiver: string | null, seen: number) {
  const { html, nothing, statusLine } = kit;
  const when = new Date(Date.parse(payment.paid_at ?? '') || seen);
  const row = (label: string, value: unknown) =>
    html`<dt>${label}</dt>
      <dd>${value}</dd>`;
  return html`${statusLine(t.paid)}<slot name="paid"><p part="amount">${t.paidAmount(amount)}</p></slot>
    <dl part="receipt">
      ${row(t.receiptAmount, amount)} ${receiver ? row(t.receiptTo, receiver) : nothing}
      ${row(t.receiptWhen, html`<time datetime=${when.toISOString()}>${new Intl.DateTimeFormat(t.tag, { dateStyle: 'medium', timeStyle: 'long' }).format(when)}</time>`)}
      ${row(t.receiptReference, payment.reference)}
    </dl>
    <button part="print-button" class="secondary" @click=${() => window.print()}>${t.print}</button>`;
}
