/**
 * The Store on SQLite through libsql (a better-sqlite3-compatible binding that installs prebuilt on
 * this platform; better-sqlite3 builds from source here). One file, created on first start, schema
 * kept by numbered migrations. Synchronous calls behind the async interface: each is a few
 * microseconds on one local file, cheaper than a thread hop. Suits one proxy instance.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'libsql';
import type { TokenStore } from '../upstream/token-store.ts';
import type { CheckoutRecord, PaymentRecord, Store, WebhookEventRecord } from './store.ts';

/** The database file inside PIX_DATA_DIR. */
export const DB_FILE_NAME = 'pix-checkout.db';

/**
 * Applied in order, each once, each in its own transaction. Never edit one that has shipped: add
 * the next.
 */
const MIGRATIONS: readonly string[] = [
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
];

interface PaymentRow {
  reference: string;
  checkout_id: string | null;
  value_cents: number;
  description: string | null;
  partner_status: number;
  brcode: string;
  qr_code_url: string;
  checkout_url: string;
  created_at: number;
  expires_at: number;
  transaction_id: string;
  updated_at: number;
  final: number;
}

interface CheckoutRow {
  id: string;
  order_id: string;
  value_cents: number;
  description: string | null;
  customer_name: string | null;
  customer_document: string | null;
  callback: string | null;
  payment_reference: string | null;
  renewals_used: number;
  created_at: number;
}

const toPayment = (r: PaymentRow): PaymentRecord => ({
  reference: r.reference,
  checkoutId: r.checkout_id,
  valueCents: r.value_cents,
  description: r.description,
  partnerStatus: r.partner_status,
  brcode: r.brcode,
  qrCodeUrl: r.qr_code_url,
  checkoutUrl: r.checkout_url,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  transactionId: r.transaction_id,
  updatedAt: r.updated_at,
  final: r.final === 1,
});

const fromPayment = (p: PaymentRecord) => ({
  reference: p.reference,
  checkout_id: p.checkoutId,
  value_cents: p.valueCents,
  description: p.description,
  partner_status: p.partnerStatus,
  brcode: p.brcode,
  qr_code_url: p.qrCodeUrl,
  checkout_url: p.checkoutUrl,
  created_at: p.createdAt,
  expires_at: p.expiresAt,
  transaction_id: p.transactionId,
  updated_at: p.updatedAt,
  final: p.final ? 1 : 0,
});

const toCheckout = (r: CheckoutRow): CheckoutRecord => ({
  id: r.id,
  orderId: r.order_id,
  valueCents: r.value_cents,
  description: r.description,
  name: r.customer_name,
  document: r.customer_document,
  callback: r.callback,
  paymentReference: r.payment_reference,
  renewalsUsed: r.renewals_used,
  createdAt: r.created_at,
});

export interface SqliteStoreOptions {
  /** The directory of the database file (created if missing), or `:memory:`. */
  dataDir: string;
  /** Payment records kept in memory in front of the file (default 10,000; 0 for none). */
  cacheSize?: number;
}

/**
 * Payment records read most recently, in front of the file: status reads are the hot path (every
 * open page asks every few seconds) and a row lookup through the binding costs more than the rest
 * of the request. Coherent because this process is the database's only writer (one instance, as
 * SQLite implies): every write below goes through `remember`.
 */
class RecordCache {
  private readonly records = new Map<string, PaymentRecord>();
  constructor(private readonly size: number) {}
  get(reference: string): PaymentRecord | undefined {
    return this.records.get(reference);
  }
  remember(record: PaymentRecord): PaymentRecord {
    if (this.size === 0) return record;
    this.records.delete(record.reference);
    this.records.set(record.reference, record);
    // Maps iterate in insertion order: the first key is the least recently used.
    if (this.records.size > this.size) this.records.delete(this.records.keys().next().value!);
    return record;
  }
  forget(reference: string): void {
    this.records.delete(reference);
  }
}

/** Opens (creating if needed) the database under `dataDir` and brings its schema up to date. */
export function openSqliteStore({ dataDir, cacheSize = 10_000 }: SqliteStoreOptions): Store {
  const cache = new RecordCache(cacheSize);
  let file = ':memory:';
  if (dataDir !== ':memory:') {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    file = join(dataDir, DB_FILE_NAME);
    mkdirSync(dirname(file), { recursive: true });
  }
  const db = new Database(file);
  // WAL lets reads go on during a write; NORMAL sync is durable across a process crash in WAL mode.
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;');
  migrate(db);

  const sql = {
    insertPayment: db.prepare(
      `INSERT INTO payments (reference, checkout_id, value_cents, description, partner_status, brcode, qr_code_url, checkout_url, created_at, expires_at, transaction_id, updated_at, final)
       VALUES (@reference, @checkout_id, @value_cents, @description, @partner_status, @brcode, @qr_code_url, @checkout_url, @created_at, @expires_at, @transaction_id, @updated_at, @final)`,
    ),
    getPayment: db.prepare('SELECT * FROM payments WHERE reference = ?'),
    checkoutPayments: db.prepare('SELECT * FROM payments WHERE checkout_id = ? ORDER BY created_at, rowid'),
    updatePaymentStatus: db.prepare('UPDATE payments SET partner_status = ?, final = ?, updated_at = ? WHERE reference = ? AND final = 0'),
    insertCheckout: db.prepare(
      `INSERT INTO checkouts (id, order_id, value_cents, description, customer_name, customer_document, callback, payment_reference, renewals_used, created_at)
       VALUES (@id, @order_id, @value_cents, @description, @customer_name, @customer_document, @callback, NULL, 0, @created_at)
       ON CONFLICT(order_id) DO NOTHING`,
    ),
    getCheckout: db.prepare('SELECT * FROM checkouts WHERE id = ?'),
    getCheckoutByOrder: db.prepare('SELECT * FROM checkouts WHERE order_id = ?'),
    setCheckoutPayment: db.prepare('UPDATE checkouts SET payment_reference = ?, renewals_used = ? WHERE id = ?'),
    loadToken: db.prepare('SELECT token FROM partner_tokens WHERE key = ?'),
    saveToken: db.prepare('INSERT INTO partner_tokens (key, token, saved_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET token = excluded.token, saved_at = excluded.saved_at'),
    clearToken: db.prepare('DELETE FROM partner_tokens WHERE key = ?'),
    addEvent: db.prepare('INSERT INTO webhook_events (raw_body, received_at) VALUES (?, ?)'),
    markEvent: db.prepare('UPDATE webhook_events SET processed_at = ? WHERE id = ?'),
    unprocessedEvents: db.prepare('SELECT * FROM webhook_events WHERE processed_at IS NULL ORDER BY received_at, id LIMIT ?'),
    ping: db.prepare('SELECT 1'),
  };

  const attach = db.transaction((checkoutId: string, payment: PaymentRecord, renewalsUsed: number) => {
    sql.insertPayment.run(fromPayment(payment));
    sql.setCheckoutPayment.run(payment.reference, renewalsUsed, checkoutId);
  });

  const tokens: TokenStore = {
    load: async (key) => (sql.loadToken.get(key) as { token: string } | undefined)?.token ?? null,
    save: async (key, token) => void sql.saveToken.run(key, token, Date.now()),
    clear: async (key) => void sql.clearToken.run(key),
  };

  return {
    async insertPayment(payment) {
      sql.insertPayment.run(fromPayment(payment));
      cache.remember({ ...payment });
    },
    peekPayment(reference) {
      return cache.get(reference);
    },
    async getPayment(reference) {
      const cached = cache.get(reference);
      if (cached) return cached;
      const row = sql.getPayment.get(reference) as PaymentRow | undefined;
      return row ? cache.remember(toPayment(row)) : null;
    },
    async updatePaymentStatus(reference, partnerStatus, final, updatedAt) {
      const { changes } = sql.updatePaymentStatus.run(partnerStatus, final ? 1 : 0, updatedAt, reference);
      const cached = cache.get(reference);
      // Records are never mutated in place: a reader holding the old one keeps a consistent copy.
      if (changes === 1 && cached) cache.remember({ ...cached, partnerStatus, final, updatedAt });
    },
    async createCheckout(checkout) {
      const { changes } = sql.insertCheckout.run({
        id: checkout.id,
        order_id: checkout.orderId,
        value_cents: checkout.valueCents,
        description: checkout.description,
        customer_name: checkout.name,
        customer_document: checkout.document,
        callback: checkout.callback,
        created_at: checkout.createdAt,
      });
      const row = sql.getCheckoutByOrder.get(checkout.orderId) as CheckoutRow;
      return { checkout: toCheckout(row), created: changes === 1 };
    },
    async getCheckout(id) {
      const row = sql.getCheckout.get(id) as CheckoutRow | undefined;
      return row ? toCheckout(row) : null;
    },
    async checkoutPayments(checkoutId) {
      return (sql.checkoutPayments.all(checkoutId) as PaymentRow[]).map(toPayment);
    },
    async attachPayment(checkoutId, payment, renewalsUsed) {
      attach(checkoutId, payment, renewalsUsed);
      cache.remember({ ...payment });
    },
    tokens,
    webhookEvents: {
      async add(rawBody, receivedAt) {
        return Number(sql.addEvent.run(rawBody, receivedAt).lastInsertRowid);
      },
      async markProcessed(id, processedAt) {
        sql.markEvent.run(processedAt, id);
      },
      async unprocessed(limit) {
        return (sql.unprocessedEvents.all(limit) as { id: number; raw_body: string; received_at: number; processed_at: number | null }[]).map(
          (r): WebhookEventRecord => ({ id: r.id, rawBody: r.raw_body, receivedAt: r.received_at, processedAt: r.processed_at }),
        );
      },
    },
    async ping() {
      if (!db.open) throw new Error('the store is closed');
      sql.ping.get();
    },
    async close() {
      if (db.open) db.close();
    },
  };
}

function migrate(db: Database.Database): void {
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
