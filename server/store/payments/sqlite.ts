/** Payments on SQLite: the hot status read from the record cache, status changes and their outcome events in one transaction. */
import { statusWrite } from '../../money/final-state.ts';
import type { SqliteOutboxWriter } from '../outbox/sqlite.ts';
import { toPayment, toReturn, type PaymentRow, type ReturnRow, type WithOrder } from '../rows.ts';
import { flag, type SqliteContext, type SqliteDatabase } from '../sqlite/context.ts';
import type { PaymentOutcomeOf, PaymentRecord, PaymentStore, StatusChange } from './types.ts';

/** Inserts a payment (also inside a checkout's attach transaction). */
export function sqlitePaymentInsert(db: SqliteDatabase): (payment: PaymentRecord) => void {
  const insert = db.prepare(
    `INSERT INTO payments (reference, checkout_id, value_cents, description, partner_status, brcode, qr_code_url, checkout_url, created_at, expires_at, transaction_id, updated_at, final, favoured)
     VALUES (@reference, @checkout_id, @value_cents, @description, @partner_status, @brcode, @qr_code_url, @checkout_url, @created_at, @expires_at, @transaction_id, @updated_at, @final, @favoured)`,
  );
  return (p) =>
    void insert.run({
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
      final: flag(p.final),
      favoured: p.favoured ?? null,
    });
}

/** A payment with its checkout's order id (what its outcome event names). */
export function sqlitePaymentWithOrder(db: SqliteDatabase): (reference: string) => WithOrder<PaymentRow> | undefined {
  const read = db.prepare('SELECT p.*, c.order_id AS order_id FROM payments p LEFT JOIN checkouts c ON c.id = p.checkout_id WHERE p.reference = ?');
  return (reference) => read.get(reference) as WithOrder<PaymentRow> | undefined;
}

export function sqlitePayments({ db, cache, noticeOtherWriters }: SqliteContext, outbox: SqliteOutboxWriter): PaymentStore {
  const insertPayment = sqlitePaymentInsert(db);
  const withOrder = sqlitePaymentWithOrder(db);
  const sql = {
    get: db.prepare('SELECT * FROM payments WHERE reference = ?'),
    // Compare-and-set: a final status is never changed.
    updateStatus: db.prepare('UPDATE payments SET partner_status = ?, final = ?, updated_at = ? WHERE reference = ? AND final = 0'),
    setFavoured: db.prepare('UPDATE payments SET favoured = ? WHERE reference = ?'),
    flagAmount: db.prepare('UPDATE payments SET reported_value_cents = ? WHERE reference = ? AND final = 0 AND reported_value_cents IS NOT ?'),
    nonFinal: db.prepare('SELECT * FROM payments WHERE final = 0 ORDER BY created_at LIMIT ?'),
    // Reconciler.dueAt in SQL: the last read, plus the interval the payment's place in time asks for.
    due: db.prepare(
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
    byTransactionId: db.prepare('SELECT reference FROM payments WHERE transaction_id = ?'),
    // Only a final payment, and only a larger total: a copy or an older total changes nothing.
    setReturned: db.prepare('UPDATE payments SET returned_cents = ?1 WHERE reference = ?2 AND final = 1 AND (returned_cents IS NULL OR returned_cents < ?1)'),
    addReturn: db.prepare('INSERT INTO payment_returns (reference, returned_cents, source, recorded_at) VALUES (?, ?, ?, ?)'),
    returnsOf: db.prepare('SELECT * FROM payment_returns WHERE reference = ? ORDER BY id'),
    returnsSince: db.prepare('SELECT * FROM payment_returns WHERE recorded_at >= ? ORDER BY recorded_at DESC, id DESC LIMIT ?'),
    payoutByTransactionId: db.prepare('SELECT reference FROM payouts WHERE transaction_id = ? AND reference IS NOT NULL'),
  };

  // A final status and its outcome event, in one transaction: the event cannot be lost between them.
  const updateStatus = db.transaction(
    (reference: string, partnerStatus: number, final: boolean, updatedAt: number, outcomeOf: PaymentOutcomeOf): StatusChange => {
      const write = statusWrite(sql.updateStatus.run(partnerStatus, flag(final), updatedAt, reference).changes === 1, final);
      if (write !== 'made_final') return { changed: write === 'changed', outcome: null };
      const row = withOrder(reference)!;
      return { changed: true, outcome: outbox.add(outcomeOf(toPayment(row), row.order_id), reference, updatedAt) };
    },
  );
  // The reported value and its event, in one transaction.
  const flagAmount = db.transaction((reference: string, reportedCents: number, at: number, outcomeOf: PaymentOutcomeOf): StatusChange => {
    if (sql.flagAmount.run(reportedCents, reference, reportedCents).changes !== 1) return { changed: false, outcome: null };
    const row = withOrder(reference)!;
    return { changed: true, outcome: outbox.add(outcomeOf(toPayment(row), row.order_id), reference, at) };
  });
  // A return's total, its history row and its event, in one transaction.
  const recordReturn = db.transaction((reference: string, cents: number, source: string, at: number, outcomeOf: PaymentOutcomeOf): StatusChange => {
    if (sql.setReturned.run(cents, reference).changes !== 1) return { changed: false, outcome: null };
    sql.addReturn.run(reference, cents, source, at);
    const row = withOrder(reference)!;
    return { changed: true, outcome: outbox.add(outcomeOf(toPayment(row), row.order_id), reference, at) };
  });
  // The reconciler's reads, recorded in one transaction per pass.
  const markChecked = db.transaction((references: readonly string[], at: number) => {
    for (const reference of references) sql.markChecked.run(at, reference);
  });

  return {
    async insert(payment) {
      insertPayment(payment);
      cache.remember({ ...payment });
    },
    peek(reference) {
      noticeOtherWriters();
      return cache.get(reference);
    },
    async get(reference, options) {
      noticeOtherWriters();
      const cached = options?.uncached ? undefined : cache.get(reference);
      if (cached) return cached;
      const row = sql.get.get(reference) as PaymentRow | undefined;
      return row ? cache.remember(toPayment(row)) : null;
    },
    async updateStatus(reference, partnerStatus, final, updatedAt, outcomeOf) {
      noticeOtherWriters();
      const change = updateStatus(reference, partnerStatus, final, updatedAt, outcomeOf);
      const cached = cache.get(reference);
      // Records are never mutated in place: a reader holding the old one keeps a consistent copy.
      if (change.changed && cached) cache.remember({ ...cached, partnerStatus, final, updatedAt });
      return change;
    },
    async findByTransactionId(transactionId) {
      const payment = sql.byTransactionId.get(transactionId) as { reference: string } | undefined;
      if (payment) return { kind: 'payment', reference: payment.reference };
      const payout = sql.payoutByTransactionId.get(transactionId) as { reference: string } | undefined;
      return payout ? { kind: 'transfer', reference: payout.reference } : null;
    },
    async setFavoured(reference, favoured) {
      noticeOtherWriters();
      sql.setFavoured.run(favoured, reference);
      const cached = cache.get(reference);
      if (cached) cache.remember({ ...cached, favoured });
    },
    async nonFinal(limit) {
      noticeOtherWriters();
      return (sql.nonFinal.all(limit) as PaymentRow[]).map((row) => cache.get(row.reference) ?? toPayment(row)).filter((p) => !p.final);
    },
    async due(now, limit, schedule) {
      return (sql.due.all({ ...schedule, now, limit }) as PaymentRow[]).map(toPayment);
    },
    async markChecked(references, at) {
      markChecked(references, at);
    },
    async countOpenExpiredBefore(expiredBefore) {
      return (sql.countExpiredOpen.get(expiredBefore) as { n: number }).n;
    },
    async recordReturn(reference, returnedCents, source, at, outcomeOf) {
      noticeOtherWriters();
      const change = recordReturn.immediate(reference, returnedCents, source, at, outcomeOf);
      const cached = cache.get(reference);
      if (change.changed && cached) cache.remember({ ...cached, returnedCents });
      return change;
    },
    async returnsOf(reference) {
      return (sql.returnsOf.all(reference) as ReturnRow[]).map(toReturn);
    },
    async returnsSince(since, limit) {
      return (sql.returnsSince.all(since, limit) as ReturnRow[]).map(toReturn);
    },
    async flagAmountMismatch(reference, reportedCents, at, outcomeOf) {
      const change = flagAmount.immediate(reference, reportedCents, at, outcomeOf);
      const cached = cache.get(reference);
      if (change.changed && cached) cache.remember({ ...cached, reportedValueCents: reportedCents });
      return change;
    },
  };
}
