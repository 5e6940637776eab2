/** Checkouts: an order the merchant's server wants paid, and the payment it currently offers. */
import type { OutcomeEvent } from '../../../src/shared/contract.ts';
import type { PaymentRecord } from '../payments/types.ts';

/** An order the merchant's server wants paid; the amount is fixed here, never by the browser. */
export interface CheckoutRecord {
  id: string;
  orderId: string;
  valueCents: number;
  description: string | null;
  /** Customer data, sent to the partner with each payment; never to a browser or a log. */
  name: string | null;
  /** As stored: sealed (`v1:`...) under PIX_DATA_KEY, or as given without one (domain/personal-data.ts). */
  document: string | null;
  /** The document's keyed hash (a data subject's records are found by it); null without PIX_DATA_KEY. */
  documentHash?: string | null;
  /** When its name and document were erased (retention, or a data subject's request); null while kept. */
  personalDataErasedAt?: number | null;
  callback: string | null;
  /** The payment currently offered, if one was issued. */
  paymentReference: string | null;
  /** Payments issued after the first one. */
  renewalsUsed: number;
  createdAt: number;
  /** The earlier checkout of the same order this one replaces; absent when none. */
  replaces?: string | null;
}

/** The checkouts part of the Store. */
export interface CheckoutStore {
  /** Inserts the checkout unless its order id exists; answers the stored one either way. */
  create(checkout: CheckoutRecord): Promise<{ checkout: CheckoutRecord; created: boolean }>;
  get(id: string): Promise<CheckoutRecord | null>;
  /** The checkouts that replace this one (`replaces`), oldest first. */
  replacing(id: string): Promise<CheckoutRecord[]>;
  /** Every payment a checkout issued, oldest first. */
  payments(checkoutId: string): Promise<PaymentRecord[]>;
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
   * Puts a checkout's event (`checkout.overpaid`) in the outbox unless one with its id is there: true
   * when it was added now (the event is new), false when it was told already.
   */
  addEvent(event: OutcomeEvent, reference: string, at: number): Promise<boolean>;
}
