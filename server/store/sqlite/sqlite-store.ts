/**
 * The Store on SQLite through libsql (a better-sqlite3-compatible binding that installs prebuilt on
 * this platform; better-sqlite3 builds from source here). One file, created on first start, schema
 * kept by numbered migrations. Synchronous calls behind the async interface: each is a few
 * microseconds on one local file, cheaper than a thread hop. Suits one proxy instance.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'libsql';
import { migrate } from './migrations.ts';
import type { TokenStore } from '../../partner/token-store.ts';
import type { OutcomeEvent } from '../../../src/shared/contract.ts';
import type {
  DeliveryAttemptRecord,
  DisputeOutcomeOf,
  OutboxEntry,
  PaymentOutcomeOf,
  PaymentRecord,
  PayoutLink,
  PayoutRecord,
  RefusalOutcomeOf,
  StatusChange,
  Store,
  TransferOutcomeOf,
  TransferRecord,
  WebhookEventRecord,
} from '../store.ts';
import { StoreError } from '../store.ts';
import { guarded } from '../guard.ts';
import { RecordCache } from '../record-cache.ts';
import {
  toCheckout,
  toDispute,
  toOutbox,
  toPayment,
  toPayout,
  toTransfer,
  type CheckoutRow,
  type DisputeRow,
  type OutboxRow,
  type PaymentRow,
  type PayoutRow,
  type TransferRow,
} from '../rows.ts';

/** The database file inside PIX_DATA_DIR. */
export const DB_FILE_NAME = 'pix-checkout.db';

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
  favoured: p.favoured ?? null,
});

export interface SqliteStoreOptions {
  /** The directory of the database file (created if missing), or `:memory:`. */
  dataDir: string;
  /** Payment records kept in memory in front of the file (default 10,000; 0 for none). */
  cacheSize?: number;
  /** How long a claim on a notification or a delivery lasts (default 30 s). */
  claimMs?: number;
}

/**
 * The one holder of every claim: one process serves a SQLite file, so the claims a killed process
 * left are this process's own after a restart, and taken up at once.
 */
const HOLDER = 'local';

/** A delivery claim's token: each claim its own, so a worker whose claim ran out knows it lost it. */
const newClaim = (): string => randomBytes(12).toString('base64url');

/** SQLite's answer in words an operator can act on; any other error is passed on as it is. */
function storeError(error: unknown, file: string): Error {
  if (!(error instanceof Error)) return new Error(String(error));
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return error;
  if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') return new StoreError(`the database ${file} is damaged; restore it from a backup`, code);
  if (code === 'SQLITE_READONLY' || code === 'SQLITE_CANTOPEN' || code === 'EACCES' || code === 'EROFS' || code === 'EPERM') {
    return new StoreError(`the database ${file} cannot be written: check that the proxy's user may write to its directory (PIX_DATA_DIR)`, code);
  }
  if (code === 'SQLITE_FULL' || code === 'ENOSPC') return new StoreError(`the disk holding ${file} is full`, code);
  if (code.startsWith('SQLITE_')) return new StoreError(`the database ${file} failed (${code})`, code);
  return error;
}

/**
 * Opens (creating if needed) the database under `dataDir`, checks that it is whole (SQLite's quick
 * check: a damaged file is refused at start rather than served wrong), and brings its schema up to
 * date. Throws a StoreError naming what to do when it cannot.
 */
export function openSqliteStore({ dataDir, cacheSize = 10_000, claimMs = 30_000 }: SqliteStoreOptions): Store {
  const file = dataDir === ':memory:' ? ':memory:' : join(dataDir, DB_FILE_NAME);
  let db: Database.Database;
  try {
    if (dataDir !== ':memory:') mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    db = new Database(file);
    // WAL lets reads go on during a write; NORMAL sync is durable across a process crash in WAL mode.
    db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;');
  } catch (error) {
    throw storeError(error, file);
  }
  try {
    const problems = (db.prepare('PRAGMA quick_check(5)').all() as { quick_check: string }[]).map((row) => row.quick_check).filter((text) => text !== 'ok');
    if (problems.length > 0) throw new StoreError(`the database ${file} is damaged (${problems.join('; ')}); restore it from a backup`, 'SQLITE_CORRUPT');
    migrate(db);
  } catch (error) {
    db.close();
    throw storeError(error, file);
  }
  const writes = file === ':memory:' ? { count: 0 } : sharedWrites(resolve(file));
  return guarded(countingWrites(openedStore(db, cacheSize, claimMs, writes), writes), (error) => storeError(error, file));
}

/**
 * Writes made through the store objects of this process, per database file: another store object on
 * the same file then checks for them at its next read, at once. Writes by other processes are looked
 * for at most every OTHER_PROCESS_CHECK_MS.
 */
const processWrites = new Map<string, { count: number }>();
function sharedWrites(file: string): { count: number } {
  let writes = processWrites.get(file);
  if (!writes) processWrites.set(file, (writes = { count: 0 }));
  return writes;
}

/** How stale a cached record may be after another process (a command line) changed it: a millisecond. */
const OTHER_PROCESS_CHECK_MS = 1;

/** The store's methods that only read: every other call counts as a write for the other store objects on the file. */
const READS = new Set([
  'getPayment',
  'peekPayment',
  'nonFinalPayments',
  'duePayments',
  'countOpenPaymentsExpiredBefore',
  'getCheckout',
  'checkoutPayments',
  'unprocessed',
  'countUnprocessed',
  'listByResult',
  'get',
  'nonFinal',
  'due',
  'list',
  'ofCheckout',
  'attempts',
  'load',
  'ping',
]);

/** The store, counting each call that may write in `writes` (the calls run synchronously: the write is done when it returns). */
function countingWrites<T extends object>(target: T, writes: { count: number }): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(target)) {
    if (typeof value === 'function') {
      const method = value as (...args: unknown[]) => unknown;
      out[key] = READS.has(key)
        ? method.bind(target)
        : (...args: unknown[]) => {
            try {
              return method.apply(target, args);
            } finally {
              writes.count++;
            }
          };
    } else out[key] = value !== null && typeof value === 'object' && !Array.isArray(value) ? countingWrites(value, writes) : value;
  }
  return out as T;
}

function openedStore(db: Database.Database, cacheSize: number, claimMs: number, writes: { count: number }): Store {
  const cache = new RecordCache(cacheSize);
  // Another connection to this file (a command line run beside the proxy, another store object)
  // may change a cached record: SQLite's data_version moves when one commits, never for this
  // connection's own writes; any change evicts all, as a Postgres instance forgets whatever another
  // one announces. The pragma costs a few microseconds, as much as the hot status read itself: it is
  // asked after a write through any store object of this process on the file, and otherwise at most
  // every OTHER_PROCESS_CHECK_MS.
  const dataVersion = cacheSize > 0 ? db.prepare('PRAGMA data_version').raw(true) : null;
  let seenVersion = dataVersion ? (dataVersion.get() as [number])[0] : 0;
  let seenWrites = writes.count;
  let checkedAt = performance.now();
  const noticeOtherWriters = (): void => {
    if (!dataVersion) return;
    const now = performance.now();
    if (writes.count === seenWrites && now - checkedAt < OTHER_PROCESS_CHECK_MS) return;
    seenWrites = writes.count;
    checkedAt = now;
    const version = (dataVersion.get() as [number])[0];
    if (version !== seenVersion) {
      seenVersion = version;
      cache.clear();
    }
  };

  const sql = {
    insertPayment: db.prepare(
      `INSERT INTO payments (reference, checkout_id, value_cents, description, partner_status, brcode, qr_code_url, checkout_url, created_at, expires_at, transaction_id, updated_at, final, favoured)
       VALUES (@reference, @checkout_id, @value_cents, @description, @partner_status, @brcode, @qr_code_url, @checkout_url, @created_at, @expires_at, @transaction_id, @updated_at, @final, @favoured)`,
    ),
    getPayment: db.prepare('SELECT * FROM payments WHERE reference = ?'),
    checkoutPayments: db.prepare('SELECT * FROM payments WHERE checkout_id = ? ORDER BY created_at, rowid'),
    updatePaymentStatus: db.prepare('UPDATE payments SET partner_status = ?, final = ?, updated_at = ? WHERE reference = ? AND final = 0'),
    setFavoured: db.prepare('UPDATE payments SET favoured = ? WHERE reference = ?'),
    insertCheckout: db.prepare(
      `INSERT INTO checkouts (id, order_id, value_cents, description, customer_name, customer_document, callback, payment_reference, renewals_used, created_at)
       VALUES (@id, @order_id, @value_cents, @description, @customer_name, @customer_document, @callback, NULL, 0, @created_at)
       ON CONFLICT(order_id) DO NOTHING`,
    ),
    getCheckout: db.prepare('SELECT * FROM checkouts WHERE id = ?'),
    getCheckoutByOrder: db.prepare('SELECT * FROM checkouts WHERE order_id = ?'),
    // Compare-and-set: only while the current payment is the one the issuer read and none of the
    // checkout's payments is recorded paid (a late payment of the old code wins over a new code).
    setCheckoutPayment: db.prepare(
      `UPDATE checkouts SET payment_reference = ?1, renewals_used = ?2 WHERE id = ?3 AND payment_reference IS ?4
         AND NOT EXISTS (SELECT 1 FROM payments WHERE checkout_id = ?3 AND final = 1 AND partner_status = ?5)`,
    ),
    flagAmount: db.prepare('UPDATE payments SET reported_value_cents = ? WHERE reference = ? AND final = 0 AND reported_value_cents IS NOT ?'),
    loadToken: db.prepare('SELECT token FROM partner_tokens WHERE key = ?'),
    saveToken: db.prepare(
      'INSERT INTO partner_tokens (key, token, saved_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET token = excluded.token, saved_at = excluded.saved_at',
    ),
    clearToken: db.prepare('DELETE FROM partner_tokens WHERE key = ?'),
    addEvent: db.prepare('INSERT INTO webhook_events (raw_body, received_at, claimed_by, claimed_until) VALUES (?, ?, ?, ?)'),
    claimEvents: db.prepare(
      `UPDATE webhook_events SET claimed_by = ?1, claimed_until = ?2 + ?3 WHERE id IN (
         SELECT id FROM webhook_events WHERE processed_at IS NULL AND (claimed_by IS NULL OR claimed_by = ?1 OR claimed_until <= ?2)
         ORDER BY received_at, id LIMIT ?4)
       RETURNING id, raw_body, received_at, processed_at, authenticated`,
    ),
    keepEvent: db.prepare(
      `UPDATE webhook_events SET result = 'waiting', authenticated = MAX(authenticated, ?), claimed_by = ?, claimed_until = ? WHERE id = ? AND processed_at IS NULL`,
    ),
    openDisputeOf: db.prepare('SELECT * FROM disputes WHERE reference = ? AND resolved_at IS NULL'),
    insertDispute: db.prepare(
      'INSERT INTO disputes (reference, checkout_id, recorded_status, notified, webhook_event_id, opened_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *',
    ),
    disputesOf: db.prepare('SELECT count(*) AS n FROM disputes WHERE reference = ?'),
    openDisputes: db.prepare('SELECT * FROM disputes WHERE resolved_at IS NULL ORDER BY opened_at, id LIMIT ?'),
    openDisputesOfCheckout: db.prepare('SELECT * FROM disputes WHERE checkout_id = ? AND resolved_at IS NULL ORDER BY opened_at, id'),
    resolveDispute: db.prepare('UPDATE disputes SET resolved_at = ?, resolution = ? WHERE reference = ? AND resolved_at IS NULL RETURNING *'),
    addRejectedEvent: db.prepare('INSERT INTO webhook_events (raw_body, received_at, processed_at, result) VALUES (?, ?, ?, ?)'),
    markEvent: db.prepare('UPDATE webhook_events SET processed_at = ?, result = ? WHERE id = ?'),
    nonFinalPayments: db.prepare('SELECT * FROM payments WHERE final = 0 ORDER BY created_at LIMIT ?'),
    // Reconciler.dueAt in SQL: the last read, plus the interval the payment's place in time asks for.
    duePayments: db.prepare(
      `SELECT * FROM (
         SELECT p.*, max(p.updated_at, COALESCE(p.checked_at, 0)) + CASE
             WHEN p.expires_at + @parkAfterMs < @now THEN @parkedEveryMs
             WHEN abs(@now - p.expires_at) <= @nearWindowMs OR abs(@now - (p.expires_at + @cancelAfterMs)) <= @nearWindowMs THEN min(@nearMs, @everyMs)
             ELSE @everyMs END AS due_at
         FROM payments p WHERE p.final = 0)
       WHERE due_at <= @now ORDER BY due_at, created_at, reference LIMIT @limit`,
    ),
    markChecked: db.prepare('UPDATE payments SET checked_at = ? WHERE reference = ? AND final = 0'),
    countExpiredOpen: db.prepare('SELECT count(*) AS n FROM payments WHERE final = 0 AND expires_at < ?'),
    paymentOrder: db.prepare('SELECT p.*, c.order_id AS order_id FROM payments p LEFT JOIN checkouts c ON c.id = p.checkout_id WHERE p.reference = ?'),
    insertOutbox: db.prepare(
      `INSERT INTO outbox (event_id, type, reference, body, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(event_id) DO NOTHING`,
    ),
    // The same event, told more fully (the payout it belongs to, learned after it was written): while it is not delivered.
    restateOutbox: db.prepare(`UPDATE outbox SET body = ? WHERE event_id = ? AND state <> 'delivered' AND body <> ?`),
    // Known transfers keep what they have; a transaction_id read later is added.
    trackTransfer: db.prepare(
      `INSERT INTO transfers (reference, partner_status, final, value_cents, created_at, updated_at, transaction_id)
       VALUES (@reference, @partner_status, @final, @value_cents, @created_at, @updated_at, @transaction_id)
       ON CONFLICT(reference) DO UPDATE SET transaction_id = excluded.transaction_id WHERE transfers.transaction_id IS NULL AND excluded.transaction_id IS NOT NULL`,
    ),
    getTransfer: db.prepare('SELECT * FROM transfers WHERE reference = ?'),
    updateTransfer: db.prepare('UPDATE transfers SET partner_status = ?, final = ?, updated_at = ? WHERE reference = ? AND final = 0'),
    nonFinalTransfers: db.prepare('SELECT * FROM transfers WHERE final = 0 ORDER BY created_at LIMIT ?'),
    dueTransfers: db.prepare(
      `SELECT * FROM (SELECT t.*, max(t.updated_at, COALESCE(t.checked_at, 0)) + ?3 AS due_at FROM transfers t WHERE t.final = 0)
       WHERE due_at <= ?1 ORDER BY due_at, created_at, reference LIMIT ?2`,
    ),
    markTransferChecked: db.prepare('UPDATE transfers SET checked_at = ? WHERE reference = ? AND final = 0'),
    insertPayout: db.prepare(
      `INSERT INTO payouts (id, idempotency_key, request_hash, kind, checkout_id, value_cents, pix_key, pix_key_type, customer_document, merchant_reference, transaction_id, state, reference, reason, reason_message, created_at, updated_at)
       VALUES (@id, @idempotency_key, @request_hash, @kind, @checkout_id, @value_cents, @pix_key, @pix_key_type, @customer_document, @merchant_reference, @transaction_id, @state, NULL, NULL, NULL, @created_at, @updated_at)
       ON CONFLICT(idempotency_key) DO NOTHING`,
    ),
    getPayout: db.prepare('SELECT * FROM payouts WHERE id = ?'),
    payoutByKey: db.prepare('SELECT * FROM payouts WHERE idempotency_key = ?'),
    // By the partner's reference, or, before its create's answer gave it one, by our transaction_id.
    payoutOfTransfer: db.prepare(
      `SELECT p.*, c.order_id AS order_id FROM payouts p LEFT JOIN checkouts c ON c.id = p.checkout_id
       WHERE p.reference = ?1 OR (?2 IS NOT NULL AND p.transaction_id = ?2 AND p.reference IS NULL) ORDER BY p.reference IS NULL LIMIT 1`,
    ),
    paidCents: db.prepare('SELECT COALESCE(SUM(value_cents), 0) AS cents FROM payments WHERE checkout_id = ? AND final = 1 AND partner_status = ?'),
    // Every refund that took, or may have taken, money: all but those refused and canceled.
    refundedCents: db.prepare(`SELECT COALESCE(SUM(value_cents), 0) AS cents FROM payouts WHERE checkout_id = ? AND state NOT IN ('refused', 'canceled')`),
    sentPayout: db.prepare(`UPDATE payouts SET state = 'pending', reference = ?, customer_document = NULL, updated_at = ? WHERE id = ? AND state = 'sending'`),
    // Its transfer's outcome, whatever its answer did (a lost one: `unknown`); its reference, when the outcome came first.
    payoutOutcome: db.prepare(
      `UPDATE payouts SET state = ?1, updated_at = ?2, reference = COALESCE(reference, ?4), customer_document = NULL
       WHERE id = ?3 AND state IN ('sending', 'pending', 'unknown')`,
    ),
    refusedPayout: db.prepare(
      `UPDATE payouts SET state = 'refused', reason = ?, reason_message = ?, customer_document = NULL, updated_at = ? WHERE id = ? AND state = 'sending'`,
    ),
    unknownPayout: db.prepare(
      `UPDATE payouts SET state = 'unknown', reason = 'answer_lost', customer_document = NULL, updated_at = ? WHERE id = ? AND state = 'sending'`,
    ),
    discardPayout: db.prepare(`DELETE FROM payouts WHERE id = ? AND state = 'sending'`),
    payoutsOfCheckout: db.prepare('SELECT * FROM payouts WHERE checkout_id = ? ORDER BY seq'),
    staleSending: db.prepare(`SELECT * FROM payouts WHERE state = 'sending' AND created_at < ? ORDER BY seq`),
    // The claim puts the next attempt off by the claim time; recording the attempt sets the real one.
    claimOutbox: db.prepare(
      `UPDATE outbox SET next_attempt_at = ?1 + ?2, claim = ?4 WHERE id IN (
         SELECT id FROM outbox WHERE state = 'pending' AND next_attempt_at <= ?1 ORDER BY next_attempt_at, id LIMIT ?3)
       RETURNING *`,
    ),
    renewOutbox: db.prepare(`UPDATE outbox SET next_attempt_at = ?1 + ?2 WHERE id = ?3 AND claim = ?4 AND state = 'pending'`),
    releaseOutbox: db.prepare(`UPDATE outbox SET next_attempt_at = ?1, claim = NULL WHERE id = ?2 AND state = 'pending' AND (?3 IS NULL OR claim = ?3)`),
    getOutbox: db.prepare('SELECT * FROM outbox WHERE id = ?'),
    listOutbox: db.prepare('SELECT * FROM outbox ORDER BY id LIMIT ?'),
    listOutboxByState: db.prepare('SELECT * FROM outbox WHERE state = ? ORDER BY id LIMIT ?'),
    addAttempt: db.prepare('INSERT INTO delivery_attempts (delivery_id, at, status, error, duration_ms) VALUES (?, ?, ?, ?, ?)'),
    // Never undoes a delivery; a failure only under the claim it was sent with, when one is named.
    updateOutbox: db.prepare(
      `UPDATE outbox SET attempts = attempts + 1, state = ?1, next_attempt_at = ?2, last_error = ?3, delivered_at = ?4, claim = NULL
       WHERE id = ?5 AND state <> 'delivered' AND (?1 = 'delivered' OR ?6 IS NULL OR claim = ?6)`,
    ),
    attemptsOf: db.prepare('SELECT * FROM delivery_attempts WHERE delivery_id = ? ORDER BY id'),
    // A replay opens a new retry window: created_at is when the current delivery window started.
    replayOne: db.prepare(`UPDATE outbox SET state = 'pending', next_attempt_at = ?1, created_at = ?1 WHERE id = ?2`),
    replayFailed: db.prepare(`UPDATE outbox SET state = 'pending', next_attempt_at = ?1, created_at = ?1 WHERE state = 'failed'`),
    unprocessedEvents: db.prepare('SELECT * FROM webhook_events WHERE processed_at IS NULL ORDER BY received_at, id LIMIT ?'),
    countUnprocessed: db.prepare('SELECT count(*) AS n FROM (SELECT 1 FROM webhook_events WHERE processed_at IS NULL LIMIT ?)'),
    expireUnprocessed: db.prepare("UPDATE webhook_events SET processed_at = ?, result = 'expired' WHERE processed_at IS NULL AND received_at < ?"),
    // Readiness reads real rows, so damaged pages show there rather than in a customer's request.
    pingPayments: db.prepare('SELECT reference, partner_status FROM payments ORDER BY rowid DESC LIMIT 20'),
    pingCheckouts: db.prepare('SELECT id, order_id FROM checkouts ORDER BY rowid DESC LIMIT 20'),
    pingOutbox: db.prepare('SELECT id, state FROM outbox ORDER BY id DESC LIMIT 20'),
  };

  const attach = db.transaction((checkoutId: string, payment: PaymentRecord, renewalsUsed: number, expected: string | null, paidStatus: number | null) => {
    sql.insertPayment.run(fromPayment(payment));
    return sql.setCheckoutPayment.run(payment.reference, renewalsUsed, checkoutId, expected, paidStatus).changes === 1;
  });

  const addToOutbox = (event: OutcomeEvent | null, reference: string, at: number, restate = false): OutcomeEvent | null => {
    if (!event) return event;
    const body = JSON.stringify(event);
    if (sql.insertOutbox.run(event.id, event.type, reference, body, at, at).changes === 0 && restate) sql.restateOutbox.run(body, event.id, body);
    return event;
  };
  // A final status and its outcome event, in one transaction: the event cannot be lost between them.
  const updatePayment = db.transaction(
    (reference: string, partnerStatus: number, final: boolean, updatedAt: number, outcomeOf: PaymentOutcomeOf): StatusChange => {
      const { changes } = sql.updatePaymentStatus.run(partnerStatus, final ? 1 : 0, updatedAt, reference);
      if (changes !== 1 || !final) return { changed: changes === 1, outcome: null };
      const row = sql.paymentOrder.get(reference) as PaymentRow & { order_id: string | null };
      return { changed: true, outcome: addToOutbox(outcomeOf(toPayment(row), row.order_id), reference, updatedAt) };
    },
  );
  // The reported value and its event, in one transaction.
  const flagAmount = db.transaction((reference: string, reportedCents: number, at: number, outcomeOf: PaymentOutcomeOf): StatusChange => {
    if (sql.flagAmount.run(reportedCents, reference, reportedCents).changes !== 1) return { changed: false, outcome: null };
    const row = sql.paymentOrder.get(reference) as PaymentRow & { order_id: string | null };
    return { changed: true, outcome: addToOutbox(outcomeOf(toPayment(row), row.order_id), reference, at) };
  });
  /**
   * A final transfer's outcome, with the payout it belongs to (if the proxy started it), which takes
   * the outcome too. `restate`: the payout was just linked (its answer came after the outcome), so an
   * event written without it is written again, naming it, unless it was delivered already.
   */
  const transferOutcome = (reference: string, at: number, outcomeOf: TransferOutcomeOf, restate = false): OutcomeEvent | null => {
    const transfer = toTransfer(sql.getTransfer.get(reference) as TransferRow);
    const payout = sql.payoutOfTransfer.get(reference, transfer.transactionId ?? null) as (PayoutRow & { order_id: string | null }) | undefined;
    const link: PayoutLink | null = payout
      ? { transferId: payout.id, merchantReference: payout.merchant_reference, checkoutId: payout.checkout_id, orderId: payout.order_id }
      : null;
    const outcome = addToOutbox(outcomeOf(transfer, link), reference, at, restate);
    const state = outcome?.data.status;
    if (payout && (state === 'approved' || state === 'canceled')) sql.payoutOutcome.run(state, at, payout.id, reference);
    return outcome;
  };
  const updateTransfer = db.transaction(
    (reference: string, partnerStatus: number, final: boolean, updatedAt: number, outcomeOf: TransferOutcomeOf): StatusChange => {
      const { changes } = sql.updateTransfer.run(partnerStatus, final ? 1 : 0, updatedAt, reference);
      if (changes !== 1 || !final) return { changed: changes === 1, outcome: null };
      return { changed: true, outcome: transferOutcome(reference, updatedAt, outcomeOf) };
    },
  );
  // Immediate: a refund's check of what is left and its insert hold the write lock together, so two
  // refunds (in this process or another one on the same file) cannot both take the last of it.
  const createPayout = db.transaction((payout: PayoutRecord, paidStatus: number) => {
    const existing = sql.payoutByKey.get(payout.idempotencyKey) as PayoutRow | undefined;
    if (existing) return { payout: toPayout(existing), created: false };
    let valueCents = payout.valueCents;
    if (payout.checkoutId !== null) {
      const paid = (sql.paidCents.get(payout.checkoutId, paidStatus) as { cents: number }).cents;
      if (paid === 0) return { problem: 'not_paid' as const, refundableCents: 0 };
      const left = paid - (sql.refundedCents.get(payout.checkoutId) as { cents: number }).cents;
      if (valueCents === 0) valueCents = left;
      if (valueCents <= 0 || valueCents > left) return { problem: 'exceeds' as const, refundableCents: Math.max(0, left) };
    }
    const { changes } = sql.insertPayout.run({
      id: payout.id,
      idempotency_key: payout.idempotencyKey,
      request_hash: payout.requestHash,
      kind: payout.kind,
      checkout_id: payout.checkoutId,
      value_cents: valueCents,
      pix_key: payout.pixKey,
      pix_key_type: payout.pixKeyType,
      customer_document: payout.customerDocument,
      merchant_reference: payout.merchantReference,
      transaction_id: payout.transactionId,
      state: payout.state,
      created_at: payout.createdAt,
      updated_at: payout.updatedAt,
    });
    return { payout: toPayout(sql.payoutByKey.get(payout.idempotencyKey) as PayoutRow), created: changes === 1 };
  });
  const markSent = db.transaction((id: string, transfer: TransferRecord, outcomeOf: TransferOutcomeOf) => {
    const { reference, updatedAt: at } = transfer;
    sql.sentPayout.run(reference, at, id);
    sql.trackTransfer.run({
      reference,
      partner_status: transfer.partnerStatus,
      final: transfer.final ? 1 : 0,
      value_cents: transfer.valueCents,
      created_at: transfer.createdAt,
      updated_at: at,
      transaction_id: (sql.getPayout.get(id) as PayoutRow | undefined)?.transaction_id ?? transfer.transactionId ?? null,
    });
    const followed = sql.getTransfer.get(reference) as TransferRow;
    // Its webhook came before its answer: the outcome is already known (its event is not written twice, but
    // written again naming this payout when it was written without it and is not delivered yet).
    const outcome = followed.final === 1 ? transferOutcome(reference, at, outcomeOf, true) : null;
    return { payout: toPayout(sql.getPayout.get(id) as PayoutRow), outcome };
  });
  const markRefused = db.transaction((id: string, reason: string, message: string | null, at: number, outcomeOf: RefusalOutcomeOf) => {
    sql.refusedPayout.run(reason, message, at, id);
    const row = sql.getPayout.get(id) as PayoutRow;
    const orderId = row.checkout_id ? ((sql.getCheckout.get(row.checkout_id) as CheckoutRow | undefined)?.order_id ?? null) : null;
    const outcome = outcomeOf(toPayout(row), orderId);
    addToOutbox(outcome, row.id, at);
    return { payout: toPayout(row), outcome };
  });
  // The dispute and its event, in one transaction: one open dispute per payment, one event per dispute.
  const openDispute = db.transaction(
    (input: { reference: string; notified: 'approved' | 'canceled'; webhookEventId: number | null; at: number }, outcomeOf: DisputeOutcomeOf) => {
      const row = sql.paymentOrder.get(input.reference) as (PaymentRow & { order_id: string | null }) | undefined;
      if (!row || row.final !== 1) return null;
      const existing = sql.openDisputeOf.get(input.reference) as DisputeRow | undefined;
      if (existing) return { dispute: toDispute(existing), opened: false, outcome: null };
      const dispute = toDispute(
        sql.insertDispute.get(input.reference, row.checkout_id, row.partner_status, input.notified, input.webhookEventId, input.at) as DisputeRow,
      );
      const ordinal = (sql.disputesOf.get(input.reference) as { n: number }).n;
      const outcome = outcomeOf(dispute, toPayment(row), row.order_id, ordinal);
      addToOutbox(outcome, input.reference, input.at);
      return { dispute, opened: true, outcome };
    },
  );
  const recordAttempt = db.transaction(
    (
      id: number,
      a: { at: number; status: number | null; error: string | null; durationMs: number },
      n: Pick<OutboxEntry, 'state' | 'nextAttemptAt' | 'lastError' | 'deliveredAt'>,
      claim: string | null,
    ): boolean => {
      sql.addAttempt.run(id, a.at, a.status, a.error, a.durationMs);
      return sql.updateOutbox.run(n.state, n.nextAttemptAt, n.lastError, n.deliveredAt, id, claim).changes === 1;
    },
  );

  // The reconciler's reads, recorded in one transaction per pass.
  const markChecked = db.transaction((references: readonly string[], at: number) => {
    for (const reference of references) sql.markChecked.run(at, reference);
  });
  const markTransfersChecked = db.transaction((references: readonly string[], at: number) => {
    for (const reference of references) sql.markTransferChecked.run(at, reference);
  });

  const tokens: TokenStore = {
    load: async (key) => (sql.loadToken.get(key) as { token: string } | undefined)?.token ?? null,
    save: async (key, token) => void sql.saveToken.run(key, token, Date.now()),
    clear: async (key) => void sql.clearToken.run(key),
  };

  return {
    kind: 'sqlite',
    async insertPayment(payment) {
      sql.insertPayment.run(fromPayment(payment));
      cache.remember({ ...payment });
    },
    peekPayment(reference) {
      noticeOtherWriters();
      return cache.get(reference);
    },
    async getPayment(reference) {
      noticeOtherWriters();
      const cached = cache.get(reference);
      if (cached) return cached;
      const row = sql.getPayment.get(reference) as PaymentRow | undefined;
      return row ? cache.remember(toPayment(row)) : null;
    },
    async updatePaymentStatus(reference, partnerStatus, final, updatedAt, outcomeOf) {
      noticeOtherWriters();
      const change = updatePayment(reference, partnerStatus, final, updatedAt, outcomeOf);
      const cached = cache.get(reference);
      // Records are never mutated in place: a reader holding the old one keeps a consistent copy.
      if (change.changed && cached) cache.remember({ ...cached, partnerStatus, final, updatedAt });
      return change;
    },
    async setPaymentFavoured(reference, favoured) {
      noticeOtherWriters();
      sql.setFavoured.run(favoured, reference);
      const cached = cache.get(reference);
      if (cached) cache.remember({ ...cached, favoured });
    },
    async nonFinalPayments(limit) {
      noticeOtherWriters();
      return (sql.nonFinalPayments.all(limit) as PaymentRow[]).map((row) => cache.get(row.reference) ?? toPayment(row)).filter((p) => !p.final);
    },
    async duePayments(now, limit, schedule) {
      return (sql.duePayments.all({ ...schedule, now, limit }) as PaymentRow[]).map(toPayment);
    },
    async markPaymentsChecked(references, at) {
      markChecked(references, at);
    },
    async countOpenPaymentsExpiredBefore(expiredBefore) {
      return (sql.countExpiredOpen.get(expiredBefore) as { n: number }).n;
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
    async attachPayment(checkoutId, payment, renewalsUsed, expected, paidStatus) {
      const attached = attach.immediate(checkoutId, payment, renewalsUsed, expected, paidStatus ?? null);
      cache.remember({ ...payment });
      return attached;
    },
    async flagAmountMismatch(reference, reportedCents, at, outcomeOf) {
      const change = flagAmount.immediate(reference, reportedCents, at, outcomeOf);
      const cached = cache.get(reference);
      if (change.changed && cached) cache.remember({ ...cached, reportedValueCents: reportedCents });
      return change;
    },
    async addCheckoutEvent(event, reference, at) {
      return sql.insertOutbox.run(event.id, event.type, reference, JSON.stringify(event), at, at).changes === 1;
    },
    tokens,
    webhookEvents: {
      async add(rawBody, receivedAt) {
        return Number(sql.addEvent.run(rawBody, receivedAt, HOLDER, receivedAt + claimMs).lastInsertRowid);
      },
      async claimUnprocessed(limit, now) {
        const rows = sql.claimEvents.all(HOLDER, now, claimMs, limit) as {
          id: number;
          raw_body: string;
          received_at: number;
          processed_at: number | null;
          authenticated: number;
        }[];
        return rows
          .map((r): WebhookEventRecord => ({
            id: r.id,
            rawBody: r.raw_body,
            receivedAt: r.received_at,
            processedAt: r.processed_at,
            ...(r.authenticated === 1 ? { authenticated: true } : {}),
          }))
          .sort((a, b) => a.receivedAt - b.receivedAt || a.id - b.id);
      },
      async addRejected(rawBody, receivedAt, result) {
        return Number(sql.addRejectedEvent.run(rawBody, receivedAt, receivedAt, result).lastInsertRowid);
      },
      async markProcessed(id, processedAt, result) {
        sql.markEvent.run(processedAt, result ?? null, id);
      },
      async countUnprocessed(upTo = Number.MAX_SAFE_INTEGER) {
        return (sql.countUnprocessed.get(upTo) as { n: number }).n;
      },
      async expireUnprocessed(receivedBefore, at) {
        return sql.expireUnprocessed.run(at, receivedBefore).changes;
      },
      async keep(id, retryAt, authenticated) {
        sql.keepEvent.run(authenticated ? 1 : 0, HOLDER, retryAt + claimMs, id);
      },
      async listByResult(results, limit) {
        if (results.length === 0) return [];
        // A handful of fixed words: the placeholders are built from their count only.
        const rows = db
          .prepare(`SELECT * FROM webhook_events WHERE result IN (${results.map(() => '?').join(', ')}) ORDER BY received_at DESC, id DESC LIMIT ?`)
          .all(...results, limit) as { id: number; raw_body: string; received_at: number; processed_at: number | null; result: string | null }[];
        return rows.map((r) => ({ id: r.id, rawBody: r.raw_body, receivedAt: r.received_at, processedAt: r.processed_at, result: r.result }));
      },
      async unprocessed(limit) {
        return (sql.unprocessedEvents.all(limit) as { id: number; raw_body: string; received_at: number; processed_at: number | null }[]).map(
          (r): WebhookEventRecord => ({ id: r.id, rawBody: r.raw_body, receivedAt: r.received_at, processedAt: r.processed_at }),
        );
      },
    },
    disputes: {
      async open(input, outcomeOf) {
        return openDispute.immediate(input, outcomeOf);
      },
      async listOpen(limit) {
        return (sql.openDisputes.all(limit) as DisputeRow[]).map(toDispute);
      },
      async openOfCheckout(checkoutId) {
        return (sql.openDisputesOfCheckout.all(checkoutId) as DisputeRow[]).map(toDispute);
      },
      async resolve(reference, note, at) {
        const row = sql.resolveDispute.get(at, note, reference) as DisputeRow | undefined;
        return row ? toDispute(row) : null;
      },
    },
    transfers: {
      async track(transfer) {
        sql.trackTransfer.run({
          reference: transfer.reference,
          partner_status: transfer.partnerStatus,
          final: transfer.final ? 1 : 0,
          value_cents: transfer.valueCents,
          created_at: transfer.createdAt,
          updated_at: transfer.updatedAt,
          transaction_id: transfer.transactionId ?? null,
        });
        return toTransfer(sql.getTransfer.get(transfer.reference) as TransferRow);
      },
      async get(reference) {
        const row = sql.getTransfer.get(reference) as TransferRow | undefined;
        return row ? toTransfer(row) : null;
      },
      async updateStatus(reference, partnerStatus, final, updatedAt, outcomeOf) {
        return updateTransfer(reference, partnerStatus, final, updatedAt, outcomeOf);
      },
      async nonFinal(limit) {
        return (sql.nonFinalTransfers.all(limit) as TransferRow[]).map(toTransfer);
      },
      async due(now, limit, everyMs) {
        return (sql.dueTransfers.all(now, limit, everyMs) as TransferRow[]).map(toTransfer);
      },
      async markChecked(references, at) {
        markTransfersChecked(references, at);
      },
    },
    payouts: {
      async create(payout, paidStatus) {
        return createPayout.immediate(payout, paidStatus);
      },
      async get(id) {
        const row = sql.getPayout.get(id) as PayoutRow | undefined;
        return row ? toPayout(row) : null;
      },
      async markSent(id, transfer, outcomeOf) {
        return markSent.immediate(id, transfer, outcomeOf);
      },
      async markRefused(id, reason, message, at, outcomeOf) {
        return markRefused.immediate(id, reason, message, at, outcomeOf);
      },
      async markUnknown(id, at) {
        sql.unknownPayout.run(at, id);
        return toPayout(sql.getPayout.get(id) as PayoutRow);
      },
      async discard(id) {
        sql.discardPayout.run(id);
      },
      async list({ states, before, limit }) {
        const where: string[] = [];
        const args: (string | number)[] = [];
        if (states && states.length > 0) {
          // A handful of fixed words: the placeholders are built from their count only.
          where.push(`state IN (${states.map(() => '?').join(', ')})`);
          args.push(...states);
        }
        if (before !== undefined) {
          where.push('seq < ?');
          args.push(before);
        }
        const rows = db
          .prepare(`SELECT * FROM payouts ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT ?`)
          .all(...args, limit) as PayoutRow[];
        return { payouts: rows.map(toPayout) };
      },
      async ofCheckout(checkoutId) {
        return (sql.payoutsOfCheckout.all(checkoutId) as PayoutRow[]).map(toPayout);
      },
      async expireSending(before, at) {
        const rows = sql.staleSending.all(before) as PayoutRow[];
        for (const row of rows) sql.unknownPayout.run(at, row.id);
        return rows.map((row) => toPayout(sql.getPayout.get(row.id) as PayoutRow));
      },
    },
    outbox: {
      async claimDue(now, limit) {
        // RETURNING's order is not the query's: oldest first again, by id (ids grow with time).
        return (sql.claimOutbox.all(now, claimMs, limit, newClaim()) as OutboxRow[]).map(toOutbox).sort((a, b) => a.id - b.id);
      },
      async renew(id, claim, now) {
        return sql.renewOutbox.run(now, claimMs, id, claim).changes === 1;
      },
      async release(ids, now, claim = null) {
        for (const id of ids) sql.releaseOutbox.run(now, id, claim);
      },
      async recordAttempt(id, attempt, next, claim = null) {
        return recordAttempt(id, attempt, next, claim);
      },
      async list(filter = {}) {
        const limit = filter.limit ?? 1000;
        const rows = filter.state ? sql.listOutboxByState.all(filter.state, limit) : sql.listOutbox.all(limit);
        return (rows as OutboxRow[]).map(toOutbox);
      },
      async get(id) {
        const row = sql.getOutbox.get(id) as OutboxRow | undefined;
        return row ? toOutbox(row) : null;
      },
      async attempts(id) {
        return (sql.attemptsOf.all(id) as { delivery_id: number; at: number; status: number | null; error: string | null; duration_ms: number }[]).map(
          (r): DeliveryAttemptRecord => ({ deliveryId: r.delivery_id, at: r.at, status: r.status, error: r.error, durationMs: r.duration_ms }),
        );
      },
      async replay(target, now) {
        return target === 'failed' ? sql.replayFailed.run(now).changes : sql.replayOne.run(now, target).changes;
      },
    },
    async ping() {
      if (!db.open) throw new StoreError('the store is closed');
      sql.pingPayments.all();
      sql.pingCheckouts.all();
      sql.pingOutbox.all();
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
