/** Checkouts on Postgres: one per order id, and the compare-and-set that makes a new payment the current one. */
import { addNewOutcome } from '../outbox/postgres.ts';
import { insertPaymentRow } from '../payments/postgres.ts';
import type { PostgresContext } from '../postgres/context.ts';
import { toCheckout, toPayment, type CheckoutRow, type PaymentRow } from '../rows.ts';
import type { CheckoutStore } from './types.ts';

export function postgresCheckouts({ query, tx, cache }: PostgresContext): CheckoutStore {
  return {
    async create(checkout) {
      const inserted = (
        await query<CheckoutRow>(
          `INSERT INTO checkouts (id, order_id, value_cents, description, customer_name, customer_document, callback, payment_reference, renewals_used, created_at, customer_document_hash, replaces)
           VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, 0, $8, $9, $10) ON CONFLICT (order_id) DO NOTHING RETURNING *`,
          [
            checkout.id,
            checkout.orderId,
            checkout.valueCents,
            checkout.description,
            checkout.name,
            checkout.document,
            checkout.callback,
            checkout.createdAt,
            checkout.documentHash ?? null,
            checkout.replaces ?? null,
          ],
        )
      ).rows[0];
      if (inserted) return { checkout: toCheckout(inserted), created: true };
      const row = (await query<CheckoutRow>('SELECT * FROM checkouts WHERE order_id = $1', [checkout.orderId])).rows[0]!;
      return { checkout: toCheckout(row), created: false };
    },
    async get(id) {
      const row = (await query<CheckoutRow>('SELECT * FROM checkouts WHERE id = $1', [id])).rows[0];
      return row ? toCheckout(row) : null;
    },
    async replacing(id) {
      return (await query<CheckoutRow>('SELECT * FROM checkouts WHERE replaces = $1 ORDER BY created_at, id', [id])).rows.map(toCheckout);
    },
    async payments(checkoutId) {
      return (await query<PaymentRow>('SELECT * FROM payments WHERE checkout_id = $1 ORDER BY created_at, seq', [checkoutId])).rows.map(toPayment);
    },
    async attachPayment(checkoutId, payment, renewalsUsed, expected, paidStatus) {
      const attached = await tx(async (q) => {
        await insertPaymentRow(q, payment);
        // Compare-and-set: under READ COMMITTED a second issuer waits for the first's row lock, then
        // finds the current payment changed and sets nothing. Nor while a payment of the checkout is
        // recorded paid (a late payment of the old code, recorded by another instance, wins).
        const { rowCount } = await q(
          `UPDATE checkouts SET payment_reference = $1, renewals_used = $2 WHERE id = $3 AND payment_reference IS NOT DISTINCT FROM $4
             AND NOT EXISTS (SELECT 1 FROM payments WHERE checkout_id = $3 AND final AND partner_status = $5)`,
          [payment.reference, renewalsUsed, checkoutId, expected, paidStatus ?? null],
        );
        return rowCount === 1;
      });
      cache.remember({ ...payment });
      return attached;
    },
    async addEvent(event, reference, at) {
      return addNewOutcome(query, event, reference, at);
    },
  };
}
