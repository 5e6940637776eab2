/** Disputes on Postgres: opened with their event in one transaction, one open per payment (the payment's row lock). */
import { mayDispute } from '../../money/final-state.ts';
import { addOutcome } from '../outbox/postgres.ts';
import type { PostgresContext } from '../postgres/context.ts';
import { toDispute, toPayment, type DisputeRow, type PaymentRow, type WithOrder } from '../rows.ts';
import type { DisputeStore } from './types.ts';

export function postgresDisputes({ query, tx }: PostgresContext): DisputeStore {
  return {
    async open(input, outcomeOf) {
      return tx(async (q) => {
        // The payment's row lock: disputes of one payment (from any instance) are opened one at a time.
        const row = (
          await q<WithOrder<PaymentRow>>(
            'SELECT p.*, c.order_id AS order_id FROM payments p LEFT JOIN checkouts c ON c.id = p.checkout_id WHERE p.reference = $1 FOR UPDATE OF p',
            [input.reference],
          )
        ).rows[0];
        const payment = row ? toPayment(row) : null;
        if (!row || !payment || !mayDispute(payment)) return null;
        const existing = (await q<DisputeRow>('SELECT * FROM disputes WHERE reference = $1 AND resolved_at IS NULL', [input.reference])).rows[0];
        if (existing) return { dispute: toDispute(existing), opened: false, outcome: null };
        const inserted = (
          await q<DisputeRow>(
            'INSERT INTO disputes (reference, checkout_id, recorded_status, notified, webhook_event_id, opened_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *',
            [input.reference, row.checkout_id, row.partner_status, input.notified, input.webhookEventId, input.at],
          )
        ).rows[0]!;
        const ordinal = (await q<{ n: number }>('SELECT count(*) AS n FROM disputes WHERE reference = $1', [input.reference])).rows[0]!.n;
        const dispute = toDispute(inserted);
        const outcome = outcomeOf(dispute, payment, row.order_id, ordinal);
        await addOutcome(q, outcome, input.reference, input.at);
        return { dispute, opened: true, outcome };
      });
    },
    async listOpen(limit) {
      return (await query<DisputeRow>('SELECT * FROM disputes WHERE resolved_at IS NULL ORDER BY opened_at, id LIMIT $1', [limit])).rows.map(toDispute);
    },
    async openOfCheckout(checkoutId) {
      return (await query<DisputeRow>('SELECT * FROM disputes WHERE checkout_id = $1 AND resolved_at IS NULL ORDER BY opened_at, id', [checkoutId])).rows.map(
        toDispute,
      );
    },
    async resolve(reference, note, at) {
      const row = (
        await query<DisputeRow>('UPDATE disputes SET resolved_at = $1, resolution = $2 WHERE reference = $3 AND resolved_at IS NULL RETURNING *', [
          at,
          note,
          reference,
        ])
      ).rows[0];
      return row ? toDispute(row) : null;
    },
  };
}
