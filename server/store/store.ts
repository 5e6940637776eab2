/**
 * Persistence behind one small interface, so the proxy does not care where its records live. The
 * SQLite implementation (sqlite/) suits one instance; the Postgres one (postgres/) is shared by
 * several instances and adds `cluster`: leases, and the changes other instances make. Times are
 * epoch milliseconds on the proxy's clock (leases: the database's); values are cents, never floats.
 */
import type { OutcomeEvent } from '../../src/shared/contract.ts';
import type { TokenStore } from '../partner/token-store.ts';

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
}

/** An order the merchant's server wants paid; the amount is fixed here, never by the browser. */
export interface CheckoutRecord {
  id: string;
  orderId: string;
  valueCents: number;
  description: string | null;
  /** Customer data, sent to the partner with each payment; never to a browser or a log. */
  name: string | null;
  document: string | null;
  callback: string | null;
  /** The payment currently offered, if one was issued. */
  paymentReference: string | null;
  /** Payments issued after the first one. */
  renewalsUsed: number;
  createdAt: number;
}

/** A webhook exactly as received, kept before it is processed. */
export interface WebhookEventRecord {
  id: number;
  rawBody: string;
  receivedAt: number;
  processedAt: number | null;
  /** What processing made of it (applied, duplicate, unknown_reference, invalid_json...). */
  result?: string | null;
  /** It came through an authenticated intake (secret path, listed source) and was kept to be confirmed again: its words count. */
  authenticated?: boolean;
}

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
}

/** What a payout is to the transfer outcome it leads to (its event names it). */
export interface PayoutLink {
  transferId: string;
  merchantReference: string | null;
  checkoutId: string | null;
  orderId: string | null;
}

/** One outcome event to pass on to the merchant's webhook, and how its delivery goes. */
export interface OutboxEntry {
  id: number;
  eventId: string;
  type: string;
  reference: string;
  /** The JSON sent, fixed when the outcome was recorded. */
  body: string;
  /** When the outcome was recorded; a replay moves it to the replay (the retry window starts again). */
  createdAt: number;
  /** pending (to send, or to retry), delivered (a 2xx), failed (gave up; replay sends it again). */
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: number;
  deliveredAt: number | null;
  lastError: string | null;
  /** The claim it was answered under (claimDue): renew, recordAttempt and release hold to it. */
  claim?: string | null;
}

export interface DeliveryAttemptRecord {
  deliveryId: number;
  at: number;
  status: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * Builds the outcome event of a record that has just become final (domain/outcomes.ts): the store
 * writes what it is given to the outbox, in the transaction of the status change, and builds nothing.
 */
export type PaymentOutcomeOf = (payment: PaymentRecord, orderId: string | null) => OutcomeEvent | null;
export type TransferOutcomeOf = (transfer: TransferRecord, payout: PayoutLink | null) => OutcomeEvent | null;
/** The event of a dispute just opened (`ordinal`: the how-many-th dispute of its payment, 1 first). */
export type DisputeOutcomeOf = (dispute: DisputeRecord, payment: PaymentRecord, orderId: string | null, ordinal: number) => OutcomeEvent;
/** The event of a payout refused up front. */
export type RefusalOutcomeOf = (payout: PayoutRecord, orderId: string | null) => OutcomeEvent;

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

/** A record another instance changed, heard through the shared store. `resync`: changes may have been missed (the listener reconnected): re-read what matters. */
export type StoreChange = { kind: 'payment'; reference: string } | { kind: 'resync' };

/**
 * What a store shared by several proxy instances adds. Absent on a one-instance store (SQLite), where
 * every lease is this process's and every change is made here.
 */
export interface Cluster {
  /** This process's name in the cluster: leases and claims are held under it. */
  readonly instanceId: string;
  /**
   * Takes the named lease for `ttlMs` of the database's clock (the instances' clocks may differ), or
   * renews it when this instance holds it; false while another instance holds it.
   */
  lease(name: string, ttlMs: number): Promise<boolean>;
  /** Gives a lease up before it runs out. */
  release(name: string): Promise<void>;
  /** Calls `listener` for each payment another instance changed (LISTEN/NOTIFY); answers the unsubscribe. */
  onChange(listener: (change: StoreChange) => void): () => void;
  /** Whether other instances' changes are heard now (the listening connection is up). */
  listening(): boolean;
}

export interface Store {
  /** Which database this is (readiness and the logs name it). */
  readonly kind: 'sqlite' | 'postgres';
  /** Present when several instances share this store. */
  readonly cluster?: Cluster;
  insertPayment(payment: PaymentRecord): Promise<void>;
  getPayment(reference: string): Promise<PaymentRecord | null>;
  /**
   * Optional: the record as `getPayment` would answer it, synchronously, when the store has it at
   * hand (in memory); undefined otherwise, and then the caller uses `getPayment`. Records are
   * replaced, never mutated, when they change. Saves the hot status read an await.
   */
  peekPayment?(reference: string): PaymentRecord | undefined;
  /**
   * Records a status the partner confirmed. A final record is never changed (no downgrade). When
   * this makes the payment final, `outcomeOf(the updated record, its checkout's order id)` is put in
   * the outbox in the same transaction.
   */
  updatePaymentStatus(reference: string, partnerStatus: number, final: boolean, updatedAt: number, outcomeOf: PaymentOutcomeOf): Promise<StatusChange>;
  /** Records who is being paid, read after the create when its answer did not say. */
  setPaymentFavoured(reference: string, favoured: string): Promise<void>;
  /** Payments not final yet, oldest first. */
  nonFinalPayments(limit: number): Promise<PaymentRecord[]>;
  /**
   * The reconciler's work list: payments not final whose next read is due at `now` under `schedule`
   * (domain/reconciler.ts, Reconciler.dueAt: the same rule), the longest overdue first. A payment's
   * last read is its last confirmed status or its last check (markPaymentsChecked), the later one.
   */
  duePayments(now: number, limit: number, schedule: ReadSchedule): Promise<PaymentRecord[]>;
  /** Records that these payments were read at `at`, whatever the read meant (an undecided status included). */
  markPaymentsChecked(references: readonly string[], at: number): Promise<void>;
  /** How many payments are not final though they expired before `expiredBefore` (the parked ones). */
  countOpenPaymentsExpiredBefore(expiredBefore: number): Promise<number>;

  /** Inserts the checkout unless its order id exists; answers the stored one either way. */
  createCheckout(checkout: CheckoutRecord): Promise<{ checkout: CheckoutRecord; created: boolean }>;
  getCheckout(id: string): Promise<CheckoutRecord | null>;
  /** Every payment a checkout issued, oldest first. */
  checkoutPayments(checkoutId: string): Promise<PaymentRecord[]>;
  /**
   * Stores a newly issued payment and, in the same transaction, makes it the checkout's current one
   * if the current one is still `expected` (what the issuer read; null: none yet) and no payment of
   * the checkout is recorded paid (final with `paidStatus`; the domain always gives it). False when another issuer (another
   * instance) got there first, or a payment of the checkout was recorded paid meanwhile (another
   * instance's webhook): the payment is kept, in the checkout's list, never shown, and the caller
   * serves the checkout's current (or paid) one instead.
   */
  attachPayment(checkoutId: string, payment: PaymentRecord, renewalsUsed: number, expected: string | null, paidStatus?: number): Promise<boolean>;
  /**
   * Records that the partner reported another value for a payment not yet final (`reportedCents`) and,
   * in the same transaction, `outcomeOf(the updated record, its checkout's order id)` in the outbox
   * (its id is stable: told once). `changed` false when that value was already recorded (or the
   * payment is final or unknown).
   */
  flagAmountMismatch(reference: string, reportedCents: number, at: number, outcomeOf: PaymentOutcomeOf): Promise<StatusChange>;
  /**
   * Puts a checkout's event (`checkout.overpaid`) in the outbox unless one with its id is there: true
   * when it was added now (the event is new), false when it was told already.
   */
  addCheckoutEvent(event: OutcomeEvent, reference: string, at: number): Promise<boolean>;

  /** The partner's access token, kept across restarts. */
  readonly tokens: TokenStore;

  /**
   * Notifications from the partner, kept before they are acknowledged. Processing one is claimed: the
   * instance that received it holds it for the store's claim time, so no other instance confirms it
   * at the same time; a claim runs out when its instance dies, and another takes the event up.
   */
  readonly webhookEvents: {
    /** Stores one, claimed by this instance (its intake processes it at once). */
    add(rawBody: string, receivedAt: number): Promise<number>;
    /** Keeps a refused notification for audit, already processed, with why it was refused. */
    addRejected(rawBody: string, receivedAt: number, result: string): Promise<number>;
    markProcessed(id: number, processedAt: number, result?: string): Promise<void>;
    /** Oldest first, whoever holds them (the operator's view). */
    unprocessed(limit: number): Promise<WebhookEventRecord[]>;
    /** Unprocessed ones no other instance holds (never claimed, claimed by this one, or a claim run out), claimed now; oldest first. */
    claimUnprocessed(limit: number, now: number): Promise<WebhookEventRecord[]>;
    /** How many wait to be confirmed, counting no further than `upTo` (the intake's cap: bounded work per notification). */
    countUnprocessed(upTo?: number): Promise<number>;
    /** Processed notifications with one of these results (`unreadable`, `unknown_reference`), newest first: for the operator. */
    listByResult(results: readonly string[], limit: number): Promise<WebhookEventRecord[]>;
    /** Marks those received before `receivedBefore` and never confirmed as processed, `expired`; answers how many. */
    expireUnprocessed(receivedBefore: number, at: number): Promise<number>;
    /**
     * Keeps an unprocessed one waiting to be confirmed again at `retryAt` (result `waiting`): claimed
     * by this instance until then plus the claim time, so no other instance takes it meanwhile, and
     * after a crash it is taken up again. `authenticated` (never unset once set): its words count then too.
     */
    keep(id: number, retryAt: number, authenticated: boolean): Promise<void>;
  };

  /** Final payments an authenticated notification contradicts, and their resolution by an operator. */
  readonly disputes: {
    /**
     * Opens a dispute of a final payment unless one of it is open; when opened, `outcomeOf` goes to the
     * outbox in the same transaction (so the event is written once per dispute). Null when the payment
     * is unknown or not final.
     */
    open(
      input: { reference: string; notified: 'approved' | 'canceled'; webhookEventId: number | null; at: number },
      outcomeOf: DisputeOutcomeOf,
    ): Promise<{ dispute: DisputeRecord; opened: boolean; outcome: OutcomeEvent | null } | null>;
    /** Open ones, oldest first. */
    listOpen(limit: number): Promise<DisputeRecord[]>;
    /** The open ones of a checkout's payments. */
    openOfCheckout(checkoutId: string): Promise<DisputeRecord[]>;
    /** Closes the open dispute of a payment with the operator's note; null when none is open. */
    resolve(reference: string, note: string, at: number): Promise<DisputeRecord | null>;
  };

  /** Transfers the proxy learned of (a webhook, the CLI), so the reconciler can follow them. */
  readonly transfers: {
    /** Adds it unless known; answers the stored one. */
    track(transfer: TransferRecord): Promise<TransferRecord>;
    get(reference: string): Promise<TransferRecord | null>;
    /** As updatePaymentStatus: never downgrades; a final status writes `outcomeOf(record)` to the outbox in the same transaction. */
    updateStatus(reference: string, partnerStatus: number, final: boolean, updatedAt: number, outcomeOf: TransferOutcomeOf): Promise<StatusChange>;
    nonFinal(limit: number): Promise<TransferRecord[]>;
    /** The reconciler's work list: transfers not final last read (updated or checked) `everyMs` or more before `now`, the longest overdue first. */
    due(now: number, limit: number, everyMs: number): Promise<TransferRecord[]>;
    /** Records that these transfers were read at `at`, whatever the read meant. */
    markChecked(references: readonly string[], at: number): Promise<void>;
  };

  /** Payouts and refunds the proxy starts (domain/payouts.ts). */
  readonly payouts: {
    /**
     * Stores a new payout unless its idempotency key is taken: answers the stored one and whether it
     * was created. For a refund (`checkoutId` set), in the same transaction: `not_paid` when the
     * checkout has no approved payment (`paidStatus`), `exceeds` when the value would take the
     * refunds (all but refused and canceled ones) past what was paid; `refundable` is what is left.
     * `valueCents` 0 on a refund means "what is left".
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
  };

  /** The transactional outbox of outcome events for the merchant's webhook, one row per event id. */
  readonly outbox: {
    /**
     * Claims pending deliveries whose next attempt is due, oldest first: each is moved out of every
     * worker's sight for the store's claim time (its next attempt is put off), so two workers (two
     * instances) never send it at once, and a worker that dies leaves it due again when that runs out.
     * `recordAttempt` or `release` ends the claim. Each entry carries its claim (`claim`): a claim
     * that ran out before its entry was sent may be another worker's by then.
     */
    claimDue(now: number, limit: number): Promise<OutboxEntry[]>;
    /**
     * Renews the claim for the store's claim time from `now`, right before the entry is sent: false
     * when it is no longer held (it ran out and another worker claimed it, or it was delivered):
     * then it is not sent.
     */
    renew(id: number, claim: string, now: number): Promise<boolean>;
    /** Claimed but not attempted (shutdown): due again at `now`; with `claim`, only entries still held under it. */
    release(ids: readonly number[], now: number, claim?: string | null): Promise<void>;
    /**
     * Records one attempt and what comes next, in one transaction. A delivery is never undone: a
     * delivered entry keeps its state whatever is recorded after; with `claim`, a failure is recorded
     * on the entry only while that claim is held (another worker's claim decides it otherwise). The
     * attempt itself is always kept. Answers whether the entry took `next`.
     */
    recordAttempt(
      id: number,
      attempt: { at: number; status: number | null; error: string | null; durationMs: number },
      next: Pick<OutboxEntry, 'state' | 'nextAttemptAt' | 'lastError' | 'deliveredAt'>,
      claim?: string | null,
    ): Promise<boolean>;
    list(filter?: { state?: OutboxEntry['state']; limit?: number }): Promise<OutboxEntry[]>;
    get(id: number): Promise<OutboxEntry | null>;
    attempts(id: number): Promise<DeliveryAttemptRecord[]>;
    /** Makes deliveries pending again, due at `now` (replay): one by id, or every failed one. Answers how many. */
    replay(target: number | 'failed', now: number): Promise<number>;
  };

  /** Throws when the store cannot answer (readiness). */
  ping(): Promise<void>;
  /**
   * Gives up this instance's leases and its claims on notifications (others take that work at once),
   * then closes. Claimed deliveries are released by the worker that claimed them (outbox.release).
   */
  close(): Promise<void>;
}

/**
 * The store cannot serve: its database is damaged, unreadable or unwritable. Carries a sentence an
 * operator can act on (never a driver's bare code); the proxy answers 503 `store_unavailable`.
 */
export class StoreError extends Error {
  override readonly name = 'StoreError';
  constructor(
    message: string,
    /** The driver's own code, for the log (SQLITE_CORRUPT, SQLITE_READONLY...). */
    readonly code?: string,
  ) {
    super(message);
  }
}
