/**
 * The Postgres schema, as numbered migrations: applied in order, each once, each in its own
 * transaction, and recorded in `migrations`, under an advisory lock, so that instances starting at
 * the same moment apply each one once (the others wait, then find it applied). The tables and columns
 * are SQLite's (sqlite/migrations.ts), in Postgres's types (BIGINT epoch ms, BOOLEAN flags), plus
 * `leases`, which only several instances need. Never edit one that has shipped: add the next.
 */
import type pg from 'pg';

/** The advisory lock held while migrating: any fixed number the merchant's own code does not use. */
export const MIGRATION_LOCK = 7_204_263_881;

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
     created_at BIGINT NOT NULL
   );
   CREATE TABLE payments (
     seq BIGINT GENERATED ALWAYS AS IDENTITY,
     reference TEXT PRIMARY KEY,
     checkout_id TEXT REFERENCES checkouts(id),
     value_cents INTEGER NOT NULL,
     description TEXT,
     partner_status INTEGER NOT NULL,
     brcode TEXT NOT NULL,
     qr_code_url TEXT NOT NULL,
     checkout_url TEXT NOT NULL,
     created_at BIGINT NOT NULL,
     expires_at BIGINT NOT NULL,
     transaction_id TEXT NOT NULL UNIQUE,
     updated_at BIGINT NOT NULL,
     final BOOLEAN NOT NULL DEFAULT false,
     favoured TEXT
   );
   CREATE INDEX payments_checkout ON payments(checkout_id);
   CREATE INDEX payments_open ON payments(created_at) WHERE NOT final;
   CREATE TABLE partner_tokens (
     key TEXT PRIMARY KEY,
     token TEXT NOT NULL,
     saved_at BIGINT NOT NULL
   );
   CREATE TABLE webhook_events (
     id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     raw_body TEXT NOT NULL,
     received_at BIGINT NOT NULL,
     processed_at BIGINT,
     result TEXT,
     claimed_by TEXT,
     claimed_until BIGINT
   );
   CREATE INDEX webhook_events_unprocessed ON webhook_events(received_at, id) WHERE processed_at IS NULL;
   CREATE INDEX webhook_events_result ON webhook_events(result, received_at);
   CREATE TABLE transfers (
     reference TEXT PRIMARY KEY,
     partner_status INTEGER NOT NULL,
     final BOOLEAN NOT NULL DEFAULT false,
     value_cents INTEGER,
     created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL
   );
   CREATE INDEX transfers_open ON transfers(created_at) WHERE NOT final;
   CREATE TABLE outbox (
     id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     event_id TEXT NOT NULL UNIQUE,
     type TEXT NOT NULL,
     reference TEXT NOT NULL,
     body TEXT NOT NULL,
     created_at BIGINT NOT NULL,
     state TEXT NOT NULL DEFAULT 'pending',
     attempts INTEGER NOT NULL DEFAULT 0,
     next_attempt_at BIGINT NOT NULL,
     delivered_at BIGINT,
     last_error TEXT
   );
   CREATE INDEX outbox_due ON outbox(next_attempt_at, id) WHERE state = 'pending';
   CREATE TABLE delivery_attempts (
     id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     delivery_id BIGINT NOT NULL REFERENCES outbox(id),
     at BIGINT NOT NULL,
     status INTEGER,
     error TEXT,
     duration_ms INTEGER NOT NULL
   );
   CREATE INDEX delivery_attempts_delivery ON delivery_attempts(delivery_id);
   CREATE TABLE payouts (
     seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
     created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL
   );
   CREATE INDEX payouts_checkout ON payouts(checkout_id) WHERE checkout_id IS NOT NULL;
   CREATE INDEX payouts_state ON payouts(state, seq);
   -- Who does a piece of shared work now (one poller per payment, one reconciliation of each record):
   -- held until expires_at (the database's clock, epoch ms), renewable by its holder.
   CREATE TABLE leases (
     name TEXT PRIMARY KEY,
     holder TEXT NOT NULL,
     expires_at BIGINT NOT NULL
   );
   CREATE INDEX leases_holder ON leases(holder);`,
  // The value the partner reported for a payment when it differed from ours (an amount mismatch).
  `ALTER TABLE payments ADD COLUMN reported_value_cents INTEGER;`,
  // As SQLite's: when the reconciler last read a payment or a transfer; a transfer's transaction_id; a delivery's claim.
  `ALTER TABLE payments ADD COLUMN checked_at BIGINT;
   ALTER TABLE transfers ADD COLUMN transaction_id TEXT;
   ALTER TABLE transfers ADD COLUMN checked_at BIGINT;
   ALTER TABLE outbox ADD COLUMN claim TEXT;`,
  // As SQLite's migration 6: whether a kept notification's words count; disputes, one open per payment.
  `ALTER TABLE webhook_events ADD COLUMN authenticated BOOLEAN NOT NULL DEFAULT false;
   CREATE TABLE disputes (
     id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     reference TEXT NOT NULL REFERENCES payments(reference),
     checkout_id TEXT,
     recorded_status INTEGER NOT NULL,
     notified TEXT NOT NULL,
     webhook_event_id BIGINT,
     opened_at BIGINT NOT NULL,
     resolved_at BIGINT,
     resolution TEXT
   );
   CREATE UNIQUE INDEX disputes_open ON disputes(reference) WHERE resolved_at IS NULL;
   CREATE INDEX disputes_checkout ON disputes(checkout_id) WHERE resolved_at IS NULL;`,
  // As SQLite's migration 9: personal data with an end (a document's keyed hash, when personal
  // fields were erased, what the retention purge looks rows up by).
  `ALTER TABLE checkouts ADD COLUMN customer_document_hash TEXT;
   ALTER TABLE checkouts ADD COLUMN personal_data_erased_at BIGINT;
   ALTER TABLE payouts ADD COLUMN personal_data_erased_at BIGINT;
   CREATE INDEX checkouts_document_hash ON checkouts(customer_document_hash) WHERE customer_document_hash IS NOT NULL;
   CREATE INDEX checkouts_personal ON checkouts(created_at) WHERE customer_name IS NOT NULL OR customer_document IS NOT NULL;
   CREATE INDEX payouts_personal ON payouts(updated_at) WHERE personal_data_erased_at IS NULL;
   CREATE INDEX webhook_events_received ON webhook_events(received_at);
   CREATE INDEX outbox_delivered ON outbox(delivered_at) WHERE state = 'delivered' AND body <> '';
   CREATE INDEX checkouts_unsealed ON checkouts(created_at) WHERE customer_document_hash IS NULL AND customer_document IS NOT NULL;`,
  // As SQLite's migration 10: how long a notification kept cut was; null: kept whole.
  `ALTER TABLE webhook_events ADD COLUMN original_bytes INTEGER;`,
  // As SQLite's migration 11: a payment's intent, written before the partner is asked (store/intents/).
  `CREATE TABLE payment_intents (
     transaction_id TEXT PRIMARY KEY,
     checkout_id TEXT,
     value_cents INTEGER NOT NULL,
     created_at BIGINT NOT NULL,
     reference TEXT,
     answer TEXT
   );
   CREATE INDEX payment_intents_created ON payment_intents(created_at);`,
  // As SQLite's migration 12: the accounting export (store/reports) pages each table by time: (created_at, key) in order, no sort.
  `CREATE INDEX checkouts_created ON checkouts(created_at, id);
   CREATE INDEX payments_created ON payments(created_at, reference);
   CREATE INDEX payouts_created ON payouts(created_at, seq);`,
  // As SQLite's migration 13: returns, their history, and the checkout a checkout replaces.
  `ALTER TABLE payments ADD COLUMN returned_cents INTEGER;
   CREATE TABLE payment_returns (
     id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     reference TEXT NOT NULL REFERENCES payments(reference),
     returned_cents INTEGER NOT NULL,
     source TEXT NOT NULL,
     recorded_at BIGINT NOT NULL
   );
   CREATE INDEX payment_returns_reference ON payment_returns(reference);
   CREATE INDEX payment_returns_recorded ON payment_returns(recorded_at);
   ALTER TABLE checkouts ADD COLUMN replaces TEXT;
   CREATE INDEX checkouts_replaces ON checkouts(replaces) WHERE replaces IS NOT NULL;`,
  // The widget's chunks of each version the proxy ran (store/widget-files), kept at each start.
  `CREATE TABLE widget_files (
     version TEXT NOT NULL,
     name TEXT NOT NULL,
     body BYTEA NOT NULL,
     kept_at BIGINT NOT NULL,
     PRIMARY KEY (version, name)
   );`,
];

/** Brings the schema up to date, once across every instance starting now; refuses a database newer than this code. */
export async function migrate(client: pg.ClientBase): Promise<void> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await client.query('CREATE TABLE IF NOT EXISTS migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)');
    const { rows } = await client.query<{ version: number | null }>('SELECT MAX(version) AS version FROM migrations');
    const current = rows[0]?.version ?? 0;
    if (current > MIGRATIONS.length) {
      throw new Error(`the database is at schema version ${current}, newer than this proxy knows (${MIGRATIONS.length}); upgrade the proxy`);
    }
    for (let version = current + 1; version <= MIGRATIONS.length; version++) {
      await client.query('BEGIN');
      try {
        await client.query(MIGRATIONS[version - 1]!);
        await client.query('INSERT INTO migrations (version, applied_at) VALUES ($1, $2)', [version, Date.now()]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
  }
}
