/**
 * Disputes: a final payment (paid or canceled) that a later authenticated notification contradicts
 * (it says canceled for a paid one, approved for a canceled one). A final status never changes, so
 * the dispute stands beside it: logged at error, listed by /ready, told to the merchant once
 * (`payment.disputed`, written to the outbox with the dispute), and the checkout's refunds are
 * refused (409 `disputed`) until an operator resolves it (`pix-checkout disputes resolve`).
 * Words from an unauthenticated intake never reach here: they are stored, not believed.
 */
import type { Logger } from '../log.ts';
import { PARTNER_STATUS } from '../partner/wire.ts';
import type { DisputeRecord, PaymentRecord, Store } from '../store/store.ts';
import { disputeOutcome, type Outcomes } from './outcomes.ts';

export interface DisputeServiceOptions {
  store: Store;
  now: () => number;
  log: Logger;
  /** Told of each dispute opened (the merchant's deliveries, in-process listeners). */
  outcomes: Outcomes;
}

/** What a final record says, in a notification's words. */
export function recordedOutcome(payment: PaymentRecord): 'approved' | 'canceled' | null {
  if (!payment.final) return null;
  if (payment.partnerStatus === PARTNER_STATUS.approved) return 'approved';
  if (payment.partnerStatus === PARTNER_STATUS.canceled) return 'canceled';
  return null;
}

export class DisputeService {
  constructor(private readonly options: DisputeServiceOptions) {}

  /**
   * An authenticated notification said `notified` about a final payment: a dispute when it
   * contradicts the recorded status. True when it contradicts (a dispute is open, opened now or before).
   */
  async contradicts(payment: PaymentRecord, notified: 'approved' | 'canceled', webhookEventId: number | null): Promise<boolean> {
    const recorded = recordedOutcome(payment);
    if (recorded === null || recorded === notified) return false;
    const { store, now, log, outcomes } = this.options;
    const opened = await store.disputes.open({ reference: payment.reference, notified, webhookEventId, at: now() }, disputeOutcome);
    if (!opened) return false;
    if (opened.opened) {
      log.error(
        { reference: payment.reference, checkout_id: payment.checkoutId, recorded: recorded, notified, webhook_event: webhookEventId },
        `payment disputed: recorded ${recorded}, but an authenticated notification says ${notified}; the recorded status stands, refunds of its checkout are refused until an operator resolves it (pix-checkout disputes)`,
      );
      outcomes.published(opened.outcome);
    }
    return true;
  }

  /** Whether a checkout has an open dispute (its refunds wait). */
  async disputed(checkoutId: string): Promise<boolean> {
    return (await this.options.store.disputes.openOfCheckout(checkoutId)).length > 0;
  }

  /** Open disputes, oldest first. */
  open(limit = 100): Promise<DisputeRecord[]> {
    return this.options.store.disputes.listOpen(limit);
  }

  /** Closes a payment's open dispute with the operator's note; null when none is open. */
  async resolve(reference: string, note: string): Promise<DisputeRecord | null> {
    const resolved = await this.options.store.disputes.resolve(reference, note, this.options.now());
    if (resolved) this.options.log.warn({ reference, note }, 'dispute resolved by an operator');
    return resolved;
  }
}
