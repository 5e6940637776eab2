/** Payments on Postgres: each change announced to the other instances in its own transaction, outcome events with it. */
import { statusWrite } from '../../money/final-state.ts';
import { addOutcome } from '../outbox/postgres.ts';
import type { PostgresContext, Query } from '../postgres/context.ts';
import { toPayment, toReturn, type PaymentRow, type ReturnRow } from '../rows.ts';
import type { PaymentRecord, PaymentStore } from './types.ts';

/** Inserts a payment (also inside a checkout's attach transaction). */
export const insertPaymentRow = (q: Query, p: PaymentRecord) =>
  q(
    `INSERT INTO payments (reference, checkout_id, value_cents, description, partner_status, brcode, qr_code_url, checkout_url, created_at, expires_at, transaction_id, updated_at, final, favoured)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    [
      p.reference,
      p.checkoutId,
      p.valueCents,
      p.description,
      p.partnerStatus,
      p.brcode,
      p.qrCodeUrl,
      p.checkoutUrl,
      p.createdAt,
      p.expiresAt,
      p.transactionId,
      p.updatedAt,
      p.final,
      p.favoured ?? null,
    ],
  );

/** The order id of a payment's checkout (what its outcome event names); null without one. */
const orderIdOf = async (q: Query, checkoutId: string | null): Promise<string | null> =>
  checkoutId ? ((await q<{ order_id: string }>('SELECT order_id FROM checkouts WHERE id = $1', [checkoutId])).rows[0]?.order_id ?? null) : null;

export function postgresPayments({ query, tx, cache, announce }: PostgresContext): PaymentStore {
  return {
    async insert(payment) {
      await insertPaymentRow(query, payment);
      cache.remember({ ...payment });
    },
    peek(reference) {
      return cache.get(reference);
    },
    async findByTransactionId(transactionId) {
      const payment = (await query<{ reference: string }>('SELECT reference FROM payments WHERE transaction_id = $1', [transactionId])).rows[0];
      if (payment) return { kind: 'payment', reference: payment.reference };
      const payout = (await query<{ reference: string }>('SELECT reference FROM payouts WHERE transaction_id = $1 AND reference IS NOT NULL', [transactionId]))
        .rows[0];
      return payout ? { kind: 'transfer', reference: payout.reference } : null;
    },
    async get(reference, options) {
      const cached = options?.uncached ? undefined : cache.get(reference);
      if (cached) return cached;
      const mark = cache.mark();
      const row = (await query<PaymentRow>('SELECT * FROM payments WHERE reference = $1', [reference])).rows[0];
      if (!row) return null;
      const read = toPayment(row);
      // This instance's own write, made while the row was being read, is newer than what was read.
      const mine = cache.get(reference);
      if (mine && (mine.final ? !read.final || mine.updatedAt > read.updatedAt : mine.updatedAt > read.updatedAt)) return mine;
      return cache.rememberRead(mark, read);
    },
    async updateStatus(reference, partnerStatus, final, updatedAt, outcomeOf) {
      const result = await tx(async (q) => {
        // Compare-and-set: a final status is never changed.
        const row = (
          await q<PaymentRow>('UPDATE payments SET partner_status = $2, final = $3, updated_at = $4 WHERE reference = $1 AND NOT final RETURNING *', [
            reference,
            partnerStatus,
            final,
            updatedAt,
          ])
        ).rows[0];
        const write = statusWrite(row !== undefined, final);
        if (!row) return { row: null, outcome: null };
        await announce(q, reference);
        if (write !== 'made_final') return { row, outcome: null };
        return { row, outcome: await addOutcome(q, outcomeOf(toPayment(row), await orderIdOf(q, row.checkout_id)), reference, updatedAt) };
      });
      // Unchanged: another instance made it final meanwhile, or it is unknown; read it anew next time.
      if (!result.row) {
        cache.forget(reference);
        return { changed: false, outcome: null };
      }
      cache.remember(toPayment(result.row));
      return { changed: true, outcome: result.outcome };
    },
    async setFavoured(reference, favoured) {
      const row = await tx(async (q) => {
        const updated = (await q<PaymentRow>('UPDATE payments SET favoured = $2 WHERE reference = $1 RETURNING *', [reference, favoured])).rows[0];
        if (updated) await announce(q, reference);
        return updated;
      });
      if (row) cache.remember(toPayment(row));
    },
    async nonFinal(limit) {
      return (await query<PaymentRow>('SELECT * FROM payments WHERE NOT final ORDER BY created_at LIMIT $1', [limit])).rows.map(toPayment);
    },
    async due(now, limit, schedule) {
      // Reconciler.dueAt in SQL: the last read, plus the interval the payment's place in time asks for.
      const { rows } = await query<PaymentRow>(
        `SELECT * FROM (
           SELECT p.*, GREATEST(p.updated_at, COALESCE(p.checked_at, 0)) + CASE
               WHEN p.expires_at + $2::bigint < $1::bigint THEN $3::bigint
               WHEN abs($1::bigint - p.expires_at) <= $4::bigint OR abs($1::bigint - (p.expires_at + $5::bigint)) <= $4::bigint THEN LEAST($6::bigint, $7::bigint)
               ELSE $7::bigint END AS due_at
           FROM payments p WHERE NOT p.final) due
         WHERE due_at <= $1::bigint ORDER BY due_at, created_at, reference LIMIT $8`,
        [now, schedule.parkAfterMs, schedule.parkedEveryMs, schedule.nearWindowMs, schedule.cancelAfterMs, schedule.nearMs, schedule.everyMs, limit],
      );
      return rows.map(toPayment);
    },
    async markChecked(references, at) {
      if (references.length === 0) return;
      await query('UPDATE payments SET checked_at = $1 WHERE reference = ANY($2) AND NOT final', [at, [...references]]);
    },
    async countOpenExpiredBefore(expiredBefore) {
      const { rows } = await query<{ n: number }>('SELECT count(*) AS n FROM payments WHERE NOT final AND expires_at < $1', [expiredBefore]);
      return rows[0]!.n;
    },
    async recordReturn(reference, returnedCents, source, at, outcomeOf) {
      const result = await tx(async (q) => {
        // Only a final payment, and only a larger total: a copy or an older total changes nothing.
        const row = (
          await q<PaymentRow>(
            'UPDATE payments SET returned_cents = $2 WHERE reference = $1 AND final AND (returned_cents IS NULL OR returned_cents < $2) RETURNING *',
            [reference, returnedCents],
          )
        ).rows[0];
        if (!row) return { row: null, outcome: null };
        await q('INSERT INTO payment_returns (reference, returned_cents, source, recorded_at) VALUES ($1, $2, $3, $4)', [reference, returnedCents, source, at]);
        await announce(q, reference);
        return { row, outcome: await addOutcome(q, outcomeOf(toPayment(row), await orderIdOf(q, row.checkout_id)), reference, at) };
      });
      if (!result.row) return { changed: false, outcome: null };
      cache.remember(toPayment(result.row));
      return { changed: true, outcome: result.outcome };
    },
    async returnsOf(reference) {
      return (await query<ReturnRow>('SELECT * FROM payment_returns WHERE reference = $1 ORDER BY id', [reference])).rows.map(toReturn);
    },
    async returnsSince(since, limit) {
      const { rows } = await query<ReturnRow>('SELECT * FROM payment_returns WHERE recorded_at >= $1 ORDER BY recorded_at DESC, id DESC LIMIT $2', [
        since,
        limit,
      ]);
      return rows.map(toReturn);
    },
    async flagAmountMismatch(reference, reportedCents, at, outcomeOf) {
      const result = await tx(async (q) => {
        const row = (
          await q<PaymentRow>(
            'UPDATE payments SET reported_value_cents = $2 WHERE reference = $1 AND NOT final AND reported_value_cents IS DISTINCT FROM $2 RETURNING *',
            [reference, reportedCents],
          )
        ).rows[0];
        if (!row) return { row: null, outcome: null };
        await announce(q, reference);
        return { row, outcome: await addOutcome(q, outcomeOf(toPayment(row), await orderIdOf(q, row.checkout_id)), reference, at) };
      });
      if (!result.row) return { changed: false, outcome: null };
      cache.remember(toPayment(result.row));
      return { changed: true, outcome: result.outcome };
    },
  };
}
