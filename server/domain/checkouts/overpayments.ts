/**
 * A checkout paid more than once (an expired code paid after its renewal, or an order paid on an
 * earlier checkout it replaces) is never silently kept: found as soon as a payment is recorded paid
 * or at the merchant's next read, told once, and refunded when the payer's key is known.
 */
import type { Logger } from '../../log.ts';
import { PARTNER_STATUS } from '../../partner/wire.ts';
import type { CheckoutRecord, PaymentRecord, Store } from '../../store/store.ts';
import { overpaidCents, overpaidOutcome, type OverpaymentRefund, type Outcomes } from '../outcomes.ts';
import type { PayoutService } from '../payouts.ts';

export interface OverpaymentOptions {
  store: Store;
  /** Lists a checkout's refunds in its view, and refunds an overpayment. */
  payouts: PayoutService;
  now: () => number;
  log: Logger;
  /** Told of each payment recorded paid, wherever (a webhook, a read): a checkout paid twice is told at once. */
  outcomes: Outcomes;
  /**
   * PIX_REFUND_OVERPAYMENTS: return a checkout's extra payment to its payer, as a refund labelled
   * `overpayment`, when the payer's key is known. Off: the merchant is told and refunds.
   */
  refundOverpayments: boolean;
  /**
   * The payer's Pix key of a paid payment, when known. The partner's records name no payer (spec
   * 2.1), so by default none is ever known, and an overpayment is reported (`payer_key_unknown`).
   */
  payerKeyOf?: ((payment: PaymentRecord) => string | null) | undefined;
}

/** How many links of an order's chain of checkouts (`replaces`) are followed at most. */
const CHAIN_LINKS = 10;

/** Paid: final and approved. */
export const isPaid = (p: PaymentRecord) => p.final && p.partnerStatus === PARTNER_STATUS.approved;

export class Overpayments {
  /** Checkouts whose overpayment is being reported now (its event, its refund: a refund reads the checkout again, which must not report it twice). */
  private readonly reporting = new Set<string>();

  constructor(private readonly options: OverpaymentOptions) {
    // A code paid while another of the checkout was already paid (the late payment of an expired
    // code after a renewal): told as soon as it is recorded, not at the merchant's next read.
    options.outcomes.events.on('outcome', (event) => {
      const checkoutId = event.type === 'payment.paid' ? event.data.checkout_id : null;
      if (checkoutId) void this.check(checkoutId);
    });
  }

  /** A checkout's paid payments from the store, oldest first, and the overpayment told when there is one. */
  private async check(checkoutId: string): Promise<void> {
    try {
      const checkout = await this.options.store.checkouts.get(checkoutId);
      if (checkout) {
        // Told on the newest checkout of its order: the one the order's later payments count on.
        const newest = await this.newestOf(checkout);
        await this.report(newest, await this.paidAcross(newest));
      }
    } catch (error) {
      // The merchant's next read of the checkout tells it (CheckoutService's view).
      this.options.log.warn(
        { checkout_id: checkoutId, err: { message: error instanceof Error ? error.message : String(error) } },
        'could not check a checkout for an overpayment',
      );
    }
  }

  /**
   * The newest checkout of an order's chain (`replaces` links a checkout to the one before it): the
   * checkouts replacing this one, followed forward (a few links at most: a bound, not a rule).
   */
  private async newestOf(checkout: CheckoutRecord): Promise<CheckoutRecord> {
    let newest = checkout;
    for (let link = 0; link < CHAIN_LINKS; link++) {
      const next = (await this.options.store.checkouts.replacing(newest.id)).at(-1);
      if (!next) break;
      newest = next;
    }
    return newest;
  }

  /**
   * The paid payments of a checkout and of the earlier checkouts of its order it replaces (oldest
   * first): an order paid on an earlier checkout and again on this one is paid twice.
   */
  async paidAcross(checkout: CheckoutRecord, own?: readonly PaymentRecord[]): Promise<PaymentRecord[]> {
    const { store } = this.options;
    const paid = [...(own ?? (await store.checkouts.payments(checkout.id))).filter(isPaid)];
    let earlier = checkout.replaces ?? null;
    for (let link = 0; earlier !== null && link < CHAIN_LINKS; link++) {
      const before = await store.checkouts.get(earlier);
      if (!before) break;
      paid.unshift(...(await store.checkouts.payments(before.id)).filter(isPaid));
      earlier = before.replaces ?? null;
    }
    return paid;
  }

  /**
   * A checkout paid more than once is never silently kept: the merchant is told once (a
   * `checkout.overpaid` event per checkout and paid payments, in the outbox), and with
   * PIX_REFUND_OVERPAYMENTS the extra is refunded to the payer when the payer's key is known; the
   * partner names none, so then it is reported (`payer_key_unknown`) for the merchant to refund.
   */
  async report(checkout: CheckoutRecord, paid: PaymentRecord[]): Promise<void> {
    const extraCents = overpaidCents(checkout.valueCents, paid);
    if (extraCents <= 0 || this.reporting.has(checkout.id)) return;
    this.reporting.add(checkout.id);
    try {
      const { refundOverpayments, payerKeyOf, payouts, store, now, log, outcomes } = this.options;
      const payerKey = refundOverpayments ? (payerKeyOf?.(paid[paid.length - 1]!) ?? null) : null;
      const refund: OverpaymentRefund = !refundOverpayments ? 'off' : payerKey ? 'sent' : 'payer_key_unknown';
      let transferId: string | null = null;
      if (payerKey) {
        // Refunded first, under a key of its own: told after, so a crash between them refunds once and tells once.
        const key = `overpaid:${overpaidOutcome(checkout, paid, refund, 0).id}`;
        transferId = (await payouts.refund(checkout.id, { value: extraCents / 100, pix_key: payerKey }, key, 'overpayment')).transfer.transfer_id;
      }
      const at = now();
      const event = overpaidOutcome(checkout, paid, refund, at, transferId);
      if (!(await store.checkouts.addEvent(event, event.data.reference, at))) return;
      log.warn(
        { checkout_id: checkout.id, references: event.data.references, extra: extraCents / 100, refund },
        refund === 'payer_key_unknown'
          ? 'a checkout was paid more than once; PIX_REFUND_OVERPAYMENTS is on, but the partner names no payer key: the merchant must refund the extra'
          : refund === 'sent'
            ? 'a checkout was paid more than once: the extra is being refunded to the payer'
            : 'a checkout was paid more than once: the merchant was told, and refunds the extra',
      );
      outcomes.published(event);
    } finally {
      this.reporting.delete(checkout.id);
    }
  }
}
