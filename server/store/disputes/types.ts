/** Disputes: final payments an authenticated notification contradicts, until an operator resolves them. */
import type { OutcomeEvent } from '../../../src/shared/contract.ts';
import type { PaymentRecord } from '../payments/types.ts';

/**
 * A final payment that an authenticated notification contradicts (it says canceled for a paid one, or
 * approved for a canceled one). The final status never changes; the dispute stands beside it, open
 * until an operator resolves it (`pix-checkout disputes resolve`). At most one open per payment.
 */
export interface DisputeRecord {
  id: number;
  /** The disputed payment. */
  reference: string;
  checkoutId: string | null;
  /** The final status recorded (PARTNER_STATUS.approved or canceled). */
  recordedStatus: number;
  /** What the notification said. */
  notified: 'approved' | 'canceled';
  /** The stored notification that said it. */
  webhookEventId: number | null;
  openedAt: number;
  resolvedAt: number | null;
  resolution: string | null;
}

/** The event of a dispute just opened (`ordinal`: the how-many-th dispute of its payment, 1 first). */
export type DisputeOutcomeOf = (dispute: DisputeRecord, payment: PaymentRecord, orderId: string | null, ordinal: number) => OutcomeEvent;

/** What opening a dispute asks for. */
export interface DisputeInput {
  reference: string;
  notified: 'approved' | 'canceled';
  webhookEventId: number | null;
  at: number;
}

/** Final payments an authenticated notification contradicts, and their resolution by an operator. */
export interface DisputeStore {
  /**
   * Opens a dispute of a final payment unless one of it is open; when opened, `outcomeOf` goes to the
   * outbox in the same transaction (so the event is written once per dispute). Null when the payment
   * is unknown or not final.
   */
  open(input: DisputeInput, outcomeOf: DisputeOutcomeOf): Promise<{ dispute: DisputeRecord; opened: boolean; outcome: OutcomeEvent | null } | null>;
  /** Open ones, oldest first. */
  listOpen(limit: number): Promise<DisputeRecord[]>;
  /** The open ones of a checkout's payments. */
  openOfCheckout(checkoutId: string): Promise<DisputeRecord[]>;
  /** Closes the open dispute of a payment with the operator's note; null when none is open. */
  resolve(reference: string, note: string, at: number): Promise<DisputeRecord | null>;
}
