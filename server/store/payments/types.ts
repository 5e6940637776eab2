/** The payments a checkout (or an open-amount page) issued, and what the proxy last learned of them. */
import type { OutcomeEvent } from '../../../src/shared/contract.ts';

/** A payment the proxy issued, and what it last learned of its status. */
export interface PaymentRecord {
  /** The partner's external_reference: the browser's handle on the payment. */
  reference: string;
  /** The checkout it belongs to; null for an open-amount payment. */
  checkoutId: string | null;
  valueCents: number;
  description: string | null;
  /** The partner's numeric status (PARTNER_STATUS). */
  partnerStatus: number;
  brcode: string;
  qrCodeUrl: string;
  checkoutUrl: string;
  createdAt: number;
  expiresAt: number;
  /** Our own reference sent with the creation, for reconciliation. */
  transactionId: string;
  /** When the status was last confirmed with the partner (or set by a webhook). */
  updatedAt: number;
  /** Approved or canceled: never asked about, and never changed, again. */
  final: boolean;
  /** Who is being paid (the partner's `favoured`, spec 2.1), once read; null until then. */
  favoured?: string | null;
  /**
   * The value the partner reported for it, in cents, when that differed from `valueCents` (an amount
   * mismatch: never shown paid); null or absent when no difference was seen.
   */
  reportedValueCents?: number | null;
  /**
   * What was given back of it to the payer after it was paid (a Pix return, MED), in cents, in all;
   * absent when nothing was. The payment stays final and paid (domain/returns.ts).
   */
  returnedCents?: number | null;
}

/** A return as learned: the payment's new returned total, where it was learned, and when (the history, oldest first). */
export interface PaymentReturnRecord {
  reference: string;
  returnedCents: number;
  /** `notification` (an authenticated one), `status` (a code listed as returned). */
  source: string;
  recordedAt: number;
}

/**
 * Builds the outcome event of a record that has just become final (domain/outcomes.ts): the store
 * writes what it is given to the outbox, in the transaction of the status change, and builds nothing.
 */
export type PaymentOutcomeOf = (payment: PaymentRecord, orderId: string | null) => OutcomeEvent | null;

/**
 * When a payment not final is read again (Reconciler.dueAt), from its last read: `parkedEveryMs` once
 * it expired more than `parkAfterMs` ago (its cancellation is long past and still undecided), else
 * `nearMs` within `nearWindowMs` of its expiry or of its cancellation (`cancelAfterMs` after expiry),
 * else `everyMs`.
 */
export interface ReadSchedule {
  everyMs: number;
  nearMs: number;
  nearWindowMs: number;
  cancelAfterMs: number;
  parkAfterMs: number;
  parkedEveryMs: number;
}

/** What a status update did: whether the record changed, and the outcome event it recorded, if any. */
export interface StatusChange {
  changed: boolean;
  outcome: OutcomeEvent | null;
}

/** The payments part of the Store. */
export interface PaymentStore {
  insert(payment: PaymentRecord): Promise<void>;
  /**
   * The record, from this instance's copy when it has one. `{ uncached: true }` reads the database
   * past that copy: another instance may have changed the row a moment ago, before its change
   * notification arrived here. What is read is remembered.
   */
  get(reference: string, options?: { uncached?: boolean }): Promise<PaymentRecord | null>;
  /**
   * Optional: the record as `get` would answer it, synchronously, when the store has it at
   * hand (in memory); undefined otherwise, and then the caller uses `get`. Records are
   * replaced, never mutated, when they change. Saves the hot status read an await.
   */
  peek?(reference: string): PaymentRecord | undefined;
  /**
   * Records a status the partner confirmed. A final record is never changed (no downgrade). When
   * this makes the payment final, `outcomeOf(the updated record, its checkout's order id)` is put in
   * the outbox in the same transaction.
   */
  updateStatus(reference: string, partnerStatus: number, final: boolean, updatedAt: number, outcomeOf: PaymentOutcomeOf): Promise<StatusChange>;
  /**
   * What our `transaction_id` (sent with a create; partners may name it `txid`) belongs to: a payment
   * this proxy issued, else a payout's transfer once the partner gave it a reference. Null when none.
   */
  findByTransactionId(transactionId: string): Promise<{ kind: 'payment' | 'transfer'; reference: string } | null>;
  /** Records who is being paid, read after the create when its answer did not say. */
  setFavoured(reference: string, favoured: string): Promise<void>;
  /** Payments not final yet, oldest first. */
  nonFinal(limit: number): Promise<PaymentRecord[]>;
  /**
   * The reconciler's work list: payments not final whose next read is due at `now` under `schedule`
   * (domain/reconciler.ts, Reconciler.dueAt: the same rule), the longest overdue first. A payment's
   * last read is its last confirmed status or its last check (markChecked), the later one.
   */
  due(now: number, limit: number, schedule: ReadSchedule): Promise<PaymentRecord[]>;
  /** Records that these payments were read at `at`, whatever the read meant (an undecided status included). */
  markChecked(references: readonly string[], at: number): Promise<void>;
  /** How many payments are not final though they expired before `expiredBefore` (the parked ones). */
  countOpenExpiredBefore(expiredBefore: number): Promise<number>;
  /**
   * Records that the partner reported another value for a payment not yet final (`reportedCents`) and,
   * in the same transaction, `outcomeOf(the updated record, its checkout's order id)` in the outbox
   * (its id is stable: told once). `changed` false when that value was already recorded (or the
   * payment is final or unknown).
   */
  flagAmountMismatch(reference: string, reportedCents: number, at: number, outcomeOf: PaymentOutcomeOf): Promise<StatusChange>;
  /**
   * Records that `returnedCents` in all was given back of a paid payment (a final one), when that is
   * more than recorded: the payment's total, a history row, and `outcomeOf(the updated record, its
   * checkout's order id)` in the outbox, in one transaction. `changed` false when it is not more (a
   * copy, or an older total), or the payment is not final.
   */
  recordReturn(reference: string, returnedCents: number, source: string, at: number, outcomeOf: PaymentOutcomeOf): Promise<StatusChange>;
  /** A payment's returns as learned, oldest first. */
  returnsOf(reference: string): Promise<PaymentReturnRecord[]>;
  /** Returns learned since `since`, newest first, at most `limit` (readiness names them). */
  returnsSince(since: number, limit: number): Promise<PaymentReturnRecord[]>;
}
