/** Payouts and refunds the proxy starts, and the transfers that carry them out. */
import type { OutcomeEvent } from '../../../src/shared/contract.ts';
import type { StatusChange } from '../payments/types.ts';

/** A transfer the proxy follows (it does not create them; the partner's webhooks tell it of them). */
export interface TransferRecord {
  reference: string;
  partnerStatus: number;
  final: boolean;
  valueCents: number | null;
  createdAt: number;
  updatedAt: number;
  /**
   * The `transaction_id` the partner's record of it carries, when read: ours, sent with the create,
   * for a payout this proxy started. It links the transfer to its payout when the partner tells its
   * outcome before the create's answer gave the payout its reference.
   */
  transactionId?: string | null;
}

/**
 * A payout or refund the proxy starts (src/shared/payouts.ts). Its state:
 * - `sending`: stored, the partner not answered yet (shown as pending);
 * - `pending`: the partner accepted it (its reference is known) and its outcome is awaited;
 * - `approved`, `canceled`: the outcome, set in the transaction that makes its transfer final;
 * - `refused`: refused up front, no money moved; `unknown`: the answer was lost, never sent again.
 */
export type PayoutState = 'sending' | 'pending' | 'approved' | 'canceled' | 'refused' | 'unknown';

export interface PayoutRecord {
  /** `tr_` and 24 URL-safe characters: the merchant's handle. */
  id: string;
  idempotencyKey: string;
  /** SHA-256 of what was asked (operation, checkout, body): the same key with another request is refused. */
  requestHash: string;
  /** 4.6 solicit-for-customer (`customer`) or pix-key/transfer (`key`). */
  kind: 'customer' | 'key';
  /** The refunded checkout; null for a payout. */
  checkoutId: string | null;
  valueCents: number;
  pixKey: string;
  pixKeyType: string | null;
  /** Kept only until the partner has answered; never shown. */
  customerDocument: string | null;
  merchantReference: string | null;
  /** Ours, sent to the partner with the request. */
  transactionId: string;
  state: PayoutState;
  /** The partner's external_reference, once it answered. */
  reference: string | null;
  reason: string | null;
  reasonMessage: string | null;
  createdAt: number;
  updatedAt: number;
  /** When its Pix key (then `erased`) and document were erased (retention, or a data subject's request); null while kept. */
  personalDataErasedAt?: number | null;
}

/** What a payout is to the transfer outcome it leads to (its event names it). */
export interface PayoutLink {
  transferId: string;
  merchantReference: string | null;
  checkoutId: string | null;
  orderId: string | null;
}

/**
 * Builds the event of a transfer just made final (domain/outcomes.ts), naming its payout if the proxy
 * started it; `relinked`: told again naming its payout, under its own id, after the one without it was delivered.
 */
export type TransferOutcomeOf = (transfer: TransferRecord, payout: PayoutLink | null, relinked?: boolean) => OutcomeEvent | null;
/** The event of a payout refused up front. */
export type RefusalOutcomeOf = (payout: PayoutRecord, orderId: string | null) => OutcomeEvent;

/** Transfers the proxy learned of (a webhook, the CLI), so the reconciler can follow them. */
export interface TransferStore {
  /** Adds it unless known; answers the stored one. */
  track(transfer: TransferRecord): Promise<TransferRecord>;
  get(reference: string): Promise<TransferRecord | null>;
  /** As PaymentStore.updateStatus: never downgrades; a final status writes `outcomeOf(record)` to the outbox in the same transaction. */
  updateStatus(reference: string, partnerStatus: number, final: boolean, updatedAt: number, outcomeOf: TransferOutcomeOf): Promise<StatusChange>;
  nonFinal(limit: number): Promise<TransferRecord[]>;
  /** The reconciler's work list: transfers not final last read (updated or checked) `everyMs` or more before `now`, the longest overdue first. */
  due(now: number, limit: number, everyMs: number): Promise<TransferRecord[]>;
  /** Records that these transfers were read at `at`, whatever the read meant. */
  markChecked(references: readonly string[], at: number): Promise<void>;
}

/** Payouts and refunds the proxy starts (domain/payouts.ts). */
export interface PayoutStore {
  /**
   * Stores a new payout unless its idempotency key is taken: answers the stored one and whether it
   * was created. For a refund (`checkoutId` set), in the same transaction: `not_paid` when the
   * checkout has no approved payment (`paidStatus`), `exceeds` when the value would take the
   * refunds (all but refused and canceled ones) past what was paid; `refundable` is what is left.
   * `valueCents` 0 on a refund means "what is left" (money/refunds.ts decides).
   */
  create(
    payout: PayoutRecord,
    paidStatus: number,
  ): Promise<{ payout: PayoutRecord; created: boolean } | { problem: 'not_paid' | 'exceeds'; refundableCents: number }>;
  get(id: string): Promise<PayoutRecord | null>;
  /**
   * The partner accepted it: records its reference, follows `transfer` (tracked unless known), forgets the document. If
   * the transfer is already final (its webhook came first), the payout takes its outcome, with
   * `outcomeOf` written to the outbox (once: the event id is the outcome's).
   */
  markSent(id: string, transfer: TransferRecord, outcomeOf: TransferOutcomeOf): Promise<{ payout: PayoutRecord; outcome: OutcomeEvent | null }>;
  /** Refused up front: the state, the reason and `outcomeOf` in the outbox, in one transaction. */
  markRefused(
    id: string,
    reason: string,
    reasonMessage: string | null,
    at: number,
    outcomeOf: RefusalOutcomeOf,
  ): Promise<{ payout: PayoutRecord; outcome: OutcomeEvent }>;
  /** Its answer was lost: it may have been carried out. */
  markUnknown(id: string, at: number): Promise<PayoutRecord>;
  /** Nothing reached the partner (it could not be reached, the token was refused): the key may be used again. */
  discard(id: string): Promise<void>;
  /** Newest first; `states` keeps only those; `before` is the `seq` cursor of the previous page. */
  list(filter: { states?: readonly PayoutState[]; before?: number; limit: number }): Promise<{ payouts: (PayoutRecord & { seq: number })[] }>;
  /** A checkout's refunds, oldest first. */
  ofCheckout(checkoutId: string): Promise<PayoutRecord[]>;
  /** Marks `sending` payouts stored before `before` as `unknown` (a process died mid-call); answers them. */
  expireSending(before: number, at: number): Promise<PayoutRecord[]>;
}
