/**
 * Persistence behind one small interface, so the proxy does not care where its records live. The
 * SQLite implementation suits one instance; the Postgres one is shared by several instances and adds
 * `cluster`: leases, and the changes other instances make. Times are epoch milliseconds on the
 * proxy's clock (leases: the database's); values are cents, never floats.
 *
 * One folder per aggregate (payments/, intents/, checkouts/, payouts/ with transfers, notifications/,
 * outbox/, disputes/, leases/, widget-files/; personal-data/ the retention purge and a data subject's records across
 * them): its records and its part of the interface (types.ts), nested on the Store under its name
 * (`store.payments.get`, `store.checkouts.create`), and its SQLite and Postgres statements side by
 * side (sqlite.ts, postgres.ts). The rules that decide money (what is left to refund, linking a
 * payout to its transfer, what a final state allows) are pure functions in money/ that both stores
 * call inside their transactions; sqlite/sqlite-store.ts and postgres/postgres-store.ts open a
 * database and compose the aggregates over its context (sqlite/context.ts, postgres/context.ts): the
 * one way to the database, which enters the request's deadline, turns driver errors into StoreErrors
 * (counted per store, errors.ts) and, on SQLite, counts each statement that writes.
 */
import type { TokenStore } from '../partner/token-store.ts';
import type { CheckoutStore } from './checkouts/types.ts';
import type { DisputeStore } from './disputes/types.ts';
import type { PaymentIntentStore } from './intents/types.ts';
import type { Cluster } from './leases/types.ts';
import type { WebhookEventStore } from './notifications/types.ts';
import type { OutboxStore } from './outbox/types.ts';
import type { PaymentStore } from './payments/types.ts';
import type { PayoutStore, TransferStore } from './payouts/types.ts';
import type { PersonalDataStore } from './personal-data/types.ts';
import type { ReportStore } from './reports/types.ts';
import type { WidgetFileStore } from './widget-files/types.ts';

export type { CheckoutRecord, CheckoutStore } from './checkouts/types.ts';
export type { DisputeInput, DisputeOutcomeOf, DisputeRecord, DisputeStore } from './disputes/types.ts';
export type { PaymentIntent, PaymentIntentStore } from './intents/types.ts';
export type { Cluster, StoreChange } from './leases/types.ts';
export type { WebhookEventRecord, WebhookEventStore } from './notifications/types.ts';
export type { DeliveryAttempt, DeliveryAttemptRecord, DeliveryNext, OutboxEntry, OutboxStore } from './outbox/types.ts';
export type { PaymentOutcomeOf, PaymentRecord, PaymentReturnRecord, PaymentStore, ReadSchedule, StatusChange } from './payments/types.ts';
export type {
  PayoutLink,
  PayoutRecord,
  PayoutState,
  PayoutStore,
  RefusalOutcomeOf,
  TransferOutcomeOf,
  TransferRecord,
  TransferStore,
} from './payouts/types.ts';
export type { PersonalDataStore, PersonalRecords, PurgeCounts } from './personal-data/types.ts';
export type { ReportCursor, ReportStore } from './reports/types.ts';
export type { WidgetFile, WidgetFileStore } from './widget-files/types.ts';

export interface Store {
  /** Which database this is (readiness and the logs name it). */
  readonly kind: 'sqlite' | 'postgres';
  /** The payments issued, and what the proxy last learned of them (payments/types.ts). */
  readonly payments: PaymentStore;
  /** The merchant's orders and the payment each currently offers (checkouts/types.ts). */
  readonly checkouts: CheckoutStore;
  /** Present when several instances share this store. */
  readonly cluster?: Cluster;
  /** The partner's access token, kept across restarts. */
  readonly tokens: TokenStore;
  /** Notifications from the partner, kept before they are acknowledged (notifications/types.ts). */
  readonly webhookEvents: WebhookEventStore;
  /** Final payments an authenticated notification contradicts, and their resolution by an operator. */
  readonly disputes: DisputeStore;
  /** Payment creates about to be sent, by our transaction_id: no payment the partner created goes unrecorded (intents/types.ts). */
  readonly intents: PaymentIntentStore;
  /** Transfers the proxy learned of (a webhook, the CLI), so the reconciler can follow them. */
  readonly transfers: TransferStore;
  /** Payouts and refunds the proxy starts (domain/payouts.ts). */
  readonly payouts: PayoutStore;
  /** The transactional outbox of outcome events for the merchant's webhook, one row per event id. */
  readonly outbox: OutboxStore;
  /** Personal data with an end: the retention purge, a data subject's records by document (personal-data/types.ts). */
  readonly personalData: PersonalDataStore;
  /** The accounting export's reads: checkouts, payments and payouts created in a time range, a page at a time. */
  readonly reports: ReportStore;
  /** The widget's chunks of each version the proxy ran, for pages whose script is of another version (widget-files/types.ts). */
  readonly widgetFiles: WidgetFileStore;
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
