/**
 * What one confirmation with the partner decides for the notifications of one reference: a payment
 * this proxy issued is read again (the body is never trusted) and only a final status is applied; a
 * final one is never changed, and authenticated words that contradict it open a dispute
 * (domain/disputes.ts); a transfer is confirmed with the service. The processor (processor.ts)
 * decides when to confirm; this decides what a confirmation means.
 */
import type { Logger } from '../../log.ts';
import { LIMITS } from '../../../src/shared/limits.ts';
import type { PaymentRecord, Store } from '../../store/store.ts';
import { recordedOutcome, type DisputeService } from '../disputes.ts';
import type { PaymentService } from '../payments.ts';
import type { StatusNumbering } from '../numbering/status-numbering.ts';
import type { TransferService } from '../transfers.ts';
import type { Group } from './groups.ts';
import { isReturnable } from '../returns.ts';

/**
 * What processing made of an event (stored as `webhook_events.result`): `not_confirmed` once its
 * tries again are over; `contradicted`, authenticated words the partner's verified code contradicts;
 * `disputed`, authenticated words that contradict a final payment; `cut`, a body stored cut
 * (intake.ts) taken up again after a restart, never read.
 */
export type ProcessResult = 'applied' | 'already_final' | 'not_confirmed' | 'unknown_reference' | 'invalid' | 'contradicted' | 'disputed' | 'cut';

/** A confirmation that could not be applied yet: tried again later. */
export type Attempt = ProcessResult | 'retry';

export interface ConfirmationDeps {
  store: Store;
  payments: PaymentService;
  transfers: TransferService;
  log: Logger;
  /** Read again at once when it cannot decide yet: another instance may have verified it. */
  numbering?: StatusNumbering;
  /** Where authenticated words that contradict a final payment go. */
  disputes: DisputeService;
  retry: {
    /** Authenticated words are tried until this long before the payment's automatic cancellation. */
    retryMarginMs: number;
  };
}

export class NotificationConfirmation {
  constructor(private readonly deps: ConfirmationDeps) {}

  /** Whether the store knows the reference, as a payment this proxy issued or a transfer it follows. */
  async known(reference: string): Promise<boolean> {
    const { store } = this.deps;
    return (store.payments.peek?.(reference) ?? (await store.payments.get(reference))) !== null || (await store.transfers.get(reference)) !== null;
  }

  /**
   * Confirms a notification with the partner. Its kind, when it does not say, is found by looking the
   * reference up: a payment this proxy issued, else a transfer the service may know. Its explicit
   * outcome (words), from an authenticated source, is applied where the status code cannot decide,
   * once the partner no longer reports the transaction pending. `retry`: not applied yet.
   */
  async apply(group: Group, ids: readonly number[]): Promise<Attempt> {
    const { event, explicit: outcome } = group;
    const { reference } = event;
    const { numbering } = this.deps;
    // A payment this proxy issued is a payment, whatever kind the notification seems to name.
    const stored = await this.deps.store.payments.get(reference);
    if (stored) {
      // Words are tried again only while a final code can only be the payment's own outcome: before
      // its automatic cancellation (less a margin for clock skew), never against that cancellation.
      group.openUntil = stored.expiresAt + LIMITS.cancelAfterExpirationSeconds * 1000 - this.deps.retry.retryMarginMs;
      if (stored.final) {
        if (group.returned !== null) return this.applyReturn(group, stored);
        // A paid payment notified again may have been returned: its code says so when one is listed `returned`.
        if (await this.deps.payments.reads.confirmReturn(reference)) return 'applied';
        return this.finalPayment(group, ids);
      }
      // Another instance sharing the store may have reached a verdict on the numbering a moment ago
      // (verified it, or proven it wrong): heard now, before deciding, not at the next reload.
      if (numbering && (numbering.report().state === 'unverified' || (this.deps.store.cluster && numbering.report().state !== 'mismatch')))
        await numbering.reload();
      // Confirmed with the partner; the body's status is never used alone.
      const record = await this.deps.payments.reads.confirm(reference, outcome);
      if (record?.final && group.returned !== null) return this.applyReturn(group, record);
      if (record?.final) return outcome !== null && recordedOutcome(record) !== outcome ? this.finalPayment(group, ids, record) : 'applied';
      // Contradicted only when this payment's own words were (another payment's mismatch meanwhile
      // leaves these words waiting: under a mismatch they are the only way it can be settled).
      if (outcome !== null && numbering?.wasContradicted(reference)) {
        this.deps.log.error(
          { reference, webhook_events: ids, outcome },
          "an authenticated notification's outcome is contradicted by the partner's status code: not applied (see /ready)",
        );
        return 'contradicted';
      }
      return 'retry';
    }
    // Only payments this proxy issued are followed.
    if (event.kind === 'payment') return 'unknown_reference';

    const known = await this.deps.store.transfers.get(reference);
    if (known?.final) return 'already_final';
    // Confirmed with the service, which knows whose it is: one it does not know is not ours. Unless
    // its authenticated words name an outcome: the partner's own notification may come before its
    // check knows the transfer (or before our create's answer), so it is asked again on the retry
    // schedule rather than its words dropped (a payout then settles from them).
    const final = await this.deps.transfers.confirm(reference, outcome);
    if (final === null) return outcome !== null ? 'retry' : 'unknown_reference';
    return final ? 'applied' : 'retry';
  }

  /**
   * A return an authenticated notification stated, of a final payment: recorded when it is paid
   * (domain/returns.ts); of a canceled one, nothing was paid to give back.
   */
  private async applyReturn(group: Group, payment: PaymentRecord): Promise<ProcessResult> {
    const returned = group.returned!;
    group.returned = null;
    if (!isReturnable(payment)) {
      this.deps.log.warn(
        { reference: payment.reference },
        'a notification states a return of a payment not recorded paid: nothing to give back, nothing recorded',
      );
      return 'already_final';
    }
    return (await this.deps.payments.reads.recordReturn(payment, returned.cents, 'notification')) ? 'applied' : 'already_final';
  }

  /** A final payment: authenticated words that contradict it open a dispute; anything else changes nothing. */
  private async finalPayment(group: Group, ids: readonly number[], record?: PaymentRecord): Promise<ProcessResult> {
    const payment = record ?? (await this.deps.store.payments.get(group.event.reference));
    if (!payment || group.explicit === null) return 'already_final';
    const eventId = ids.find((id) => group.trusted.has(id)) ?? null;
    return (await this.deps.disputes.contradicts(payment, group.explicit, eventId)) ? 'disputed' : 'already_final';
  }
}
