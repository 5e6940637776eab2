import { kit } from '../kit.ts';
import type { ScreenContext } from './context.ts';

/**
 * The paid screen: a receipt the customer can print or save (printed black on white, without
 * buttons). Its time: the proxy's time of payment, else when this widget first showed it paid (the
 * session's `paidSeen`, set here), said in the customer's time zone.
 */
export function renderPaid({ i18n, session, code, env }: ScreenContext) {
  const { html, nothing, statusLine } = kit;
  const t = i18n.t;
  const payment = session.payment!;
  const amount = i18n.formatMoney(payment.value);
  const receiver = code.receiver(payment);
  session.paidSeen ||= env.clock.now();
  const when = new Date(Date.parse(payment.paid_at ?? '') || session.paidSeen);
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
