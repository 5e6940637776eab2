/**
 * Personal data with an end (domain/personal-data.ts decides what and when): the retention purge, the
 * sealing of documents kept in clear before PIX_DATA_KEY was set, and a data subject's records found
 * and erased by document. Erased: a checkout's name, document and hash null; a payout's Pix key
 * `erased` and its document null; money facts (amounts, references, states, times) untouched.
 */
import type { CheckoutRecord } from '../checkouts/types.ts';
import type { PaymentRecord } from '../payments/types.ts';
import type { PayoutRecord } from '../payouts/types.ts';

/** What one purge erased or pruned. */
export interface PurgeCounts {
  /** Checkouts whose name and document were erased. */
  checkouts: number;
  /** Payouts and refunds whose Pix key and document were erased. */
  payouts: number;
  /** Processed partner notifications deleted. */
  notifications: number;
  /** Delivered outbox rows pruned: their body and attempts dropped, the row kept so the event is never told twice. */
  deliveries: number;
}

/** A checkout's customer fields as stored. */
export interface StoredCustomer {
  name: string | null;
  document: string | null;
}

/** Every record held about one document. */
export interface PersonalRecords {
  checkouts: CheckoutRecord[];
  /** The payments of those checkouts. */
  payments: PaymentRecord[];
  /** Payouts to that document as a Pix key or for it as a customer, and the refunds of those checkouts. */
  payouts: PayoutRecord[];
}

export interface PersonalDataStore {
  /**
   * Erases the personal fields of records final before `cutoff` (a checkout: created before it, every
   * payment final and last changed before it, no dispute open or resolved since, no refund awaiting
   * its outcome; a payout: final and last changed before it), deletes processed notifications received
   * before it (but one an open dispute names), and prunes delivered outbox rows delivered before it.
   * `at` is recorded as the erasure time. At most `limit` rows of each kind, oldest first: called
   * again while a count reaches it. Idempotent: two instances running it at once do the same once.
   */
  purge(cutoff: number, at: number, limit: number): Promise<PurgeCounts>;
  /** Checkouts whose document is kept in clear without a hash (stored before PIX_DATA_KEY was set), at most `limit`. */
  unsealed(limit: number): Promise<({ id: string } & StoredCustomer)[]>;
  /** Replaces a checkout's customer fields by their sealed form, only while they are still `before`; false otherwise. */
  seal(id: string, before: StoredCustomer, after: StoredCustomer & { documentHash: string | null }): Promise<boolean>;
  /** The records of a document: by its keyed hash (when given), or by the document kept in clear (normalized). */
  find(match: { hash: string | null; normalized: string }): Promise<PersonalRecords>;
  /** Erases the personal fields of these checkouts and payouts now (never a payout being sent); answers how many changed. */
  erase(checkoutIds: readonly string[], payoutIds: readonly string[], at: number): Promise<{ checkouts: number; payouts: number }>;
}
