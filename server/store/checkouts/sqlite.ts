/** Checkouts on SQLite: one per order id, and the compare-and-set that makes a new payment the current one. */
import type { SqliteOutboxWriter } from '../outbox/sqlite.ts';
import { sqlitePaymentInsert } from '../payments/sqlite.ts';
import type { PaymentRecord } from '../payments/types.ts';
import { toCheckout, toPayment, type CheckoutRow, type PaymentRow } from '../rows.ts';
import type { SqliteContext } from '../sqlite/context.ts';
import type { CheckoutStore } from './types.ts';

export function sqliteCheckouts({ db, cache }: SqliteContext, outbox: SqliteOutboxWriter): CheckoutStore {
  const insertPayment = sqlitePaymentInsert(db);
  const sql = {
    insert: db.prepare(
      `INSERT INTO checkouts (id, order_id, value_cents, description, customer_name, customer_document, customer_document_hash, callback, payment_reference, renewals_used, created_at, replaces)
       VALUES (@id, @order_id, @value_cents, @description, @customer_name, @customer_document, @customer_document_hash, @callback, NULL, 0, @created_at, @replaces)
       ON CONFLICT(order_id) DO NOTHING`,
    ),
    get: db.prepare('SELECT * FROM checkouts WHERE id = ?'),
    byOrder: db.prepare('SELECT * FROM checkouts WHERE order_id = ?'),
    replacing: db.prepare('SELECT * FROM checkouts WHERE replaces = ? ORDER BY created_at, rowid'),
    payments: db.prepare('SELECT * FROM payments WHERE checkout_id = ? ORDER BY created_at, rowid'),
    // Compare-and-set: only while the current payment is the one the issuer read and none of the
    // checkout's payments is recorded paid (a late payment of the old code wins over a new code).
    setPayment: db.prepare(
      `UPDATE checkouts SET payment_reference = ?1, renewals_used = ?2 WHERE id = ?3 AND payment_reference IS ?4
         AND NOT EXISTS (SELECT 1 FROM payments WHERE checkout_id = ?3 AND final = 1 AND partner_status = ?5)`,
    ),
  };
  const attach = db.transaction((checkoutId: string, payment: PaymentRecord, renewalsUsed: number, expected: string | null, paidStatus: number | null) => {
    insertPayment(payment);
    return sql.setPayment.run(payment.reference, renewalsUsed, checkoutId, expected, paidStatus).changes === 1;
  });
  return {
    async create(checkout) {
      const { changes } = sql.insert.run({
        id: checkout.id,
        order_id: checkout.orderId,
        value_cents: checkout.valueCents,
        description: checkout.description,
        customer_name: checkout.name,
        customer_document: checkout.document,
        customer_document_hash: checkout.documentHash ?? null,
        callback: checkout.callback,
        created_at: checkout.createdAt,
        replaces: checkout.replaces ?? null,
      });
      const row = sql.byOrder.get(checkout.orderId) as CheckoutRow;
      return { checkout: toCheckout(row), created: changes === 1 };
    },
    async get(id) {
      const row = sql.get.get(id) as CheckoutRow | undefined;
      return row ? toCheckout(row) : null;
    },
    async replacing(id) {
      return (sql.replacing.all(id) as CheckoutRow[]).map(toCheckout);
    },
    async payments(checkoutId) {
      return (sql.payments.all(checkoutId) as PaymentRow[]).map(toPayment);
    },
    async attachPayment(checkoutId, payment, renewalsUsed, expected, paidStatus) {
      const attached = attach.immediate(checkoutId, payment, renewalsUsed, expected, paidStatus ?? null);
      cache.remember({ ...payment });
      return attached;
    },
    async addEvent(event, reference, at) {
      return outbox.addNew(event, reference, at);
    },
  };
}
