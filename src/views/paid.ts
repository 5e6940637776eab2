import { kit } from '../kit.ts';
import type { Translation } from '../locales/index.ts';
import type { PaymentView } from '../shared/contract.ts';

/**
 * The paid screen: a receipt the customer can print or save (printed black on white, without
 * buttons). `when`: the proxy's time of payment, else when this widget saw it paid, as `whenText`
 * says it in the customer's time zone.
 */
export function renderPaid(t: Translation, payment: PaymentView, amount: string, receiver: string | null, when: Date, whenText: string) {
  const { html, nothing, statusLine } = kit;
  const row = (label: string, value: unknown) =>
    html`<dt>${label}</dt>
      <dd>${value}</dd>`;
  return html`${statusLine(t.paid)}<slot name="paid"><p part="amount">${t.paidAmount(amount)}</p></slot>
    <dl part="receipt">
      ${row(t.receiptAmount, amount)} ${receiver ? row(t.receiptTo, receiver) : nothing}
      ${row(t.receiptWhen, html`<time datetime=${when.toISOString()}>${whenText}</time>`)} ${row(t.receiptReference, payment.reference)}
    </dl>
    <button part="print-button" class="secondary" @click=${() => window.print()}>${t.print}</button>`;
}
