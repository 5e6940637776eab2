/**
 * Persistence behind one small interface, so the proxy does not care where its records live. The
 * SQLite implementation (sqlite.ts) suits one instance; another store (Postgres, say) implements the
 * same methods. Times are epoch milliseconds on the proxy's clock; values are cents, never floats.
 */
import type { TokenStore } from '../upstream/token-store.ts';

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

/** A webhook exactly as received, kept before it is processed (issue 6). */
export interface WebhookEventRecord {
  id: number;
  rawBody: string;
  receivedAt: number;
  processedAt: number | null;
}

export interface Store {
  insertPayment(payment: PaymentRecord): Promise<void>;
  getPayment(reference: string): Promise<PaymentRecord | null>;
  /**
   * Optional: the record as `getPayment` would answer it, synchronously, when the store has it at
   * hand (in memory); undefined otherwise, and then the caller uses `getPayment`. Records are
   * replaced, never mutated, when they change. Saves the hot status read an await.
   */
  peekPayment?(reference: string): PaymentRecord | undefined;
  /** Records a status the partner confirmed. A final record is never changed (no downgrade). */
  updatePaymentStatus(reference: string, partnerStatus: number, final: boolean, updatedAt: number): Promise<void>;

  /** Inserts the checkout unless its order id exists; answers the stored one either way. */
  createCheckout(checkout: CheckoutRecord): Promise<{ checkout: CheckoutRecord; created: boolean }>;
  getCheckout(id: string): Promise<CheckoutRecord | null>;
  /** Every payment a checkout issued, oldest first. */
  checkoutPayments(checkoutId: string): Promise<PaymentRecord[]>;
  /** Stores a newly issued payment and makes it the checkout's current one, in one transaction. */
  attachPayment(checkoutId: string, payment: PaymentRecord, renewalsUsed: number): Promise<void>;

  /** The partner's access token, kept across restarts. */
  readonly tokens: TokenStore;

  readonly webhookEvents: {
    add(rawBody: string, receivedAt: number): Promise<number>;
    markProcessed(id: number, processedAt: number): Promise<void>;
    /** Oldest first. */
    unprocessed(limit: number): Promise<WebhookEventRecord[]>;
  };

  /** Throws when the store cannot answer (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
