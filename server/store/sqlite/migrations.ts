/**
 * The SQLite schema, as numbered migrations: applied in order, each once, each in its own
 * transaction, and recorded in `migrations`. Never edit one that has shipped: add the next.
 */
import type Database from 'libsql';

export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE checkouts (
     id TEXT PRIMARY KEY,
     order_id TEXT NOT NULL UNIQUE,
     value_cents INTEGER NOT NULL,
     description TEXT,
     customer_name TEXT,
     customer_document TEXT,
     callback TEXT,
     payment_reference TEXT,
     renewals_used INTEGER NOT NULL DEFAULT 0,
     created_at INTEGER NOT NULL
   );
   CREATE TABLE payments (
     reference TEXT PRIMARY KEY,
     checkout_id TEXT REFERENCES checkouts(id),
     value_cents INTEGER NOT NULL,
     description TEXT,
     partner_status INTEGER NOT NULL,
     brcode TEXT NOT NULL,
     qr_code_url TEXT NOT NULL,
     checkout_url TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     transaction_id TEXT NOT NULL UNIQUE,
     updated_at INTEGER NOT NULL,
     final INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX payments_checkout ON payments(checkout_id);
   CREATE TABLE partner_tokens (
     key TEXT PRIMARY KEY,
     token TEXT NOT NULL,
     saved_at INTEGER NOT NULL
   );
   CREATE TABLE webhook_events (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     raw_body TEXT NOT NULL,
     received_at INTEGER NOT NULL,
     processed_at INTEGER
   );
   CREATE INDEX webhook_events_unprocessed ON webhook_events(received_at) WHERE processed_at IS NULL;`,
  // What processing made of each webhook; transfers the proxy follows; the outbox of
  // outcome events for the merchant's webhook, and every delivery attempt.
  `ALTER TABLE webhook_events ADD COLUMN result TEXT;
   CREATE INDEX payments_open ON payments(created_at) WHERE final = 0;
   CREATE TABLE transfers (
     reference TEXT PRIMARY KEY,
     partner_status INTEGER NOT NULL,
     final INTEGER NOT NULL DEFAULT 0,
     value_cents INTEGER,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   );
   CREATE INDEX transfers_open ON transfers(created_at) WHERE final = 0;
   CREATE TABLE outbox (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     event_id TEXT NOT NULL UNIQUE,
     type TEXT NOT NULL,
     reference TEXT NOT NULL,
     body TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     state TEXT NOT NULL DEFAULT 'pending',
     attempts INTEGER NOT NULL DEFAULT 0,
     next_attempt_at INTEGER NOT NULL,
     delivered_at INTEGER,
     last_error TEXT
   );
   CREATE INDEX outbox_due ON outbox(next_attempt_at) WHERE state = 'pending';
   CREATE TABLE delivery_attempts (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     delivery_id INTEGER NOT NULL REFERENCES outbox(id),
     at INTEGER NOT NULL,
     status INTEGER,
     error TEXT,
     duration_ms INTEGER NOT NULL
   );
   CREATE INDEX delivery_attempts_delivery ON delivery_attempts(delivery_id);`,
  // Payouts and refunds the proxy starts (payouts.ts): stored before the partner is called, one per
  // idempotency key; a refund names its checkout. `reference` is the partner's, once it answered.
  `CREATE TABLE payouts (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     id TEXT NOT NULL UNIQUE,
     idempotency_key TEXT NOT NULL UNIQUE,
     request_hash TEXT NOT NULL,
     kind TEXT NOT NULL,
     checkout_id TEXT REFERENCES checkouts(id),
     value_cents INTEGER NOT NULL,
     pix_key TEXT NOT NULL,
     pix_key_type TEXT,
     customer_document TEXT,
     merchant_reference TEXT,
     transaction_id TEXT NOT NULL UNIQUE,
     state TEXT NOT NULL,
     reference TEXT UNIQUE,
     reason TEXT,
     reason_message TEXT,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   );
   CREATE INDEX payouts_checkout ON payouts(checkout_id) WHERE checkout_id IS NOT NULL;
   CREATE INDEX payouts_state ON payouts(state, seq);`,
  // Who is being paid (the partner's `favoured`), shown beside the amount and on the receipt.
  `ALTER TABLE payments ADD COLUMN favoured TEXT;`,
  // Claims on notifications being processed (the same columns as the Postgres store's, where several
  // instances share the work; here one process holds them all).
  `ALTER TABLE webhook_events ADD COLUMN claimed_by TEXT;
   ALTER TABLE webhook_events ADD COLUMN claimed_until INTEGER;`,
  // The value the partner reported for a payment when it differed from ours (an amount mismatch).
  `ALTER TABLE payments ADD COLUMN reported_value_cents INTEGER;`,
  // When the reconciler last read a payment or a transfer, whatever the read meant (a status it could not decide
  // leaves updated_at as it was); the partner's transaction_id of a transfer, which links a transfer
  // told before its create's answer to our payout; the claim a delivery is held under.
  `ALTER TABLE payments ADD COLUMN checked_at INTEGER;
   ALTER TABLE transfers ADD COLUMN transaction_id TEXT;
   ALTER TABLE transfers ADD COLUMN checked_at INTEGER;
   ALTER TABLE outbox ADD COLUMN claim TEXT;`,
  // Notifications kept to be confirmed again remember whether their words count (an authenticated
  // intake); disputes: final payments an authenticated notification contradicts, one open per payment.
  `ALTER TABLE webhook_events ADD COLUMN authenticated INTEGER NOT NULL DEFAULT 0;
   CREATE TABLE disputes (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     reference TEXT NOT NULL REFERENCES payments(reference),
     checkout_id TEXT,
     recorded_status INTEGER NOT NULL,
     notified TEXT NOT NULL,
     webhook_event_id INTEGER,
     opened_at INTEGER NOT NULL,
     resolved_at INTEGER,
     resolution TEXT
   );
   CREATE UNIQUE INDEX disputes_open ON disputes(reference) WHERE resolved_at IS NULL;
   CREATE INDEX disputes_checkout ON disputes(checkout_id) WHERE resolved_at IS NULL;`,
  // Personal data with an end (domain/personal-data.ts): a checkout's document's keyed hash (its
  // records found by document without opening each), when a record's personal fields were erased,
  // and what the retention purge looks rows up by.
  `ALTER TABLE checkouts ADD COLUMN customer_document_hash TEXT;
   ALTER TABLE checkouts ADD COLUMN personal_data_erased_at INTEGER;
   ALTER TABLE payouts ADD COLUMN personal_data_erased_at INTEGER;
   CREATE INDEX checkouts_document_hash ON checkouts(customer_document_hash) WHERE customer_document_hash IS NOT NULL;
   CREATE INDEX checkouts_personal ON checkouts(created_at) WHERE customer_name IS NOT NULL OR customer_document IS NOT NULL;
   CREATE INDEX payouts_personal ON payouts(updated_at) WHERE personal_data_erased_at IS NULL;
   CREATE INDEX webhook_events_received ON webhook_events(received_at);
   CREATE INDEX outbox_delivered ON outbox(delivered_at) WHERE state = 'delivered' AND body <> '';
   CREATE INDEX checkouts_unsealed ON checkouts(created_at) WHERE customer_document_hash IS NULL AND customer_document IS NOT NULL;`,
  // A notification kept cut (its first bytes only: domain/webhooks/intake.ts) says how long it was; null: kept whole.
  `ALTER TABLE webhook_events ADD COLUMN original_bytes INTEGER;`,
  // A payment's intent, written before the partner is asked, so a payment the partner created is never
  // recorded nowhere (store/intents/); no foreign key: it must not wait on the payments tables.
  `CREATE TABLE payment_intents (
     transaction_id TEXT PRIMARY KEY,
     checkout_id TEXT,
     value_cents INTEGER NOT NULL,
     created_at INTEGER NOT NULL,
     reference TEXT,
     answer TEXT
   );
   CREATE INDEX payment_intents_created ON payment_intents(created_at);`,
  // The accounting export (store/reports) pages each table by time: (created_at, key) in order, no sort.
  `CREATE INDEX checkouts_created ON checkouts(created_at, id);
   CREATE INDEX payments_created ON payments(created_at, reference);
   CREATE INDEX payouts_created ON payouts(created_at, seq);`,
  // Returns: what was given back of a paid payment, in all (null: nothing), and each new total
  // as it was learned (the history; the payment's final state is never rewritten). A checkout that
  // replaces an earlier one of the same order names it.
  `ALTER TABLE payments ADD COLUMN returned_cents INTEGER;
   CREATE TABLE payment_returns (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     reference TEXT NOT NULL REFERENCES payments(reference),
     returned_cents INTEGER NOT NULL,
     source TEXT NOT NULL,
     recorded_at INTEGER NOT NULL
   );
   CREATE INDEX payment_returns_reference ON payment_returns(reference);
   CREATE INDEX payment_returns_recorded ON payment_returns(recorded_at);
   ALTER TABLE checkouts ADD COLUMN replaces TEXT;
   CREATE INDEX checkouts_replaces ON checkouts(replaces) WHERE replaces IS NOT NULL;`,
  // The widget's chunks of each version the proxy ran (store/widget-files), kept at each start.
  `CREATE TABLE widget_files (
     version TEXT NOT NULL,
     name TEXT NOT NULL,
     body BLOB NOT NULL,
     kept_at INTEGER NOT NULL,
     PRIMARY KEY (version, name)
   );`,
];

/** Brings the schema up to date; refuses a database newer than this code. */
export function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
  const row = db.prepare('SELECT MAX(version) AS version FROM migrations').get() as { version: number | null };
  const current = row.version ?? 0;
  if (current > MIGRATIONS.length) {
    throw new Error(`the database is at schema version ${current}, newer than this proxy knows (${MIGRATIONS.length}); upgrade the proxy`);
  }
  for (let version = current + 1; version <= MIGRATIONS.length; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version - 1]!);
      db.prepare('INSERT INTO migrations (version, applied_at) VALUES (?, ?)').run(version, Date.now());
    })();
  }
}
