/**
 * Returns: money of a paid payment given back to the payer after it was paid (a Pix return,
 * "devolução", the central bank's MED among them, which can come up to 80 days later). Learned from an
 * authenticated notification that states one (partner/notification.ts `returned`), or from a status
 * code listed as `returned` (`recordReturn` is the hook for it). A return never rewrites the payment's
 * final state: the payment stays paid, the returned total is recorded beside it with its history
 * (`payment_returns`), the merchant is told (`payment.returned`), the checkout's view shows it, what
 * may still be refunded of the checkout is lowered by it (refunds.ts: a returned amount is never
 * refunded again), /ready names recent ones, and the metrics count them.
 */
import type { Logger } from '../log.ts';
import { PARTNER_STATUS } from '../partner/wire.ts';
import type { PaymentRecord, Store } from '../store/store.ts';
import { returnOutcome, type Outcomes } from './outcomes.ts';

/** How long /ready names a return after it was learned. */
export const RETURNS_WARNING_WINDOW_MS = 24 * 3600 * 1000;

/**
 * The payment's returned total once a return is learned: `notifiedCents` is everything returned of it
 * so far, as the partner states it (a list of returns is summed by the reader); unstated (null), the
 * whole payment is taken as returned, so nothing of it is refunded again on a guess. Never more than
 * the payment's value, never less than what was recorded (an older total changes nothing).
 */
export function returnedTotal(payment: Pick<PaymentRecord, 'valueCents' | 'returnedCents'>, notifiedCents: number | null): number {
  const stated = notifiedCents === null ? payment.valueCents : Math.min(notifiedCents, payment.valueCents);
  return Math.max(stated, payment.returnedCents ?? 0);
}

/** Whether a payment may have money returned: final and paid (a canceled or open one has none to give back). */
export const isReturnable = (payment: PaymentRecord): boolean => payment.final && payment.partnerStatus === PARTNER_STATUS.approved;

export interface ReturnDeps {
  store: Store;
  outcomes: Outcomes;
  log: Logger;
  now: () => number;
}

/**
 * Records a return of a paid payment (`notifiedCents`: the total stated, or null), tells the merchant
 * and logs it. Answers whether it was new (false: a copy, an older total, or no paid payment).
 */
export async function recordReturn(
  deps: ReturnDeps,
  payment: PaymentRecord,
  notifiedCents: number | null,
  source: 'notification' | 'status',
): Promise<boolean> {
  if (!isReturnable(payment)) return false;
  const total = returnedTotal(payment, notifiedCents);
  const at = deps.now();
  const change = await deps.store.payments.recordReturn(payment.reference, total, source, at, (p, orderId) => returnOutcome(p, orderId, at));
  if (!change.changed) return false;
  deps.log.warn(
    {
      reference: payment.reference,
      checkout_id: payment.checkoutId,
      value: payment.valueCents / 100,
      returned_value: total / 100,
      ...(notifiedCents === null ? { amount_stated: false } : {}),
      source,
    },
    notifiedCents === null
      ? 'a paid payment was returned to the payer, its amount not stated: taken as returned whole (never refunded again); the merchant was told (payment.returned)'
      : 'a paid payment was returned to the payer: the merchant was told (payment.returned), and what may be refunded is lowered',
  );
  deps.outcomes.published(change.outcome);
  return true;
}
