/** Personal data on Postgres: the retention purge, sealing documents kept in clear, a data subject's records by document. */
import { PAYOUT_STATES_AWAITING_OUTCOME, PAYOUT_STATE_UNANSWERED } from '../../money/final-state.ts';
import type { PostgresContext } from '../postgres/context.ts';
import { toCheckout, toPayment, toPayout, type CheckoutRow, type PaymentRow, type PayoutRow } from '../rows.ts';
import { sqlWords } from '../sql.ts';
import { ERASED_KEY, SEALED_PREFIX, mayBeDocumentKey, normalized } from './sql.ts';
import type { PersonalDataStore } from './types.ts';

export function postgresPersonalData({ query, tx }: PostgresContext): PersonalDataStore {
  const awaiting = sqlWords(PAYOUT_STATES_AWAITING_OUTCOME);
  return {
    // Each statement takes at most `limit` rows, oldest first, and is idempotent: its outer conditions
    // are checked again on a row another instance changed meanwhile (a lease ran out mid-purge), so
    // two instances purging at once erase each record once.
    async purge(cutoff, at, limit) {
      return tx(async (q) => {
        const checkouts = await q(
          `UPDATE checkouts SET customer_name = NULL, customer_document = NULL, customer_document_hash = NULL, personal_data_erased_at = $2
           WHERE (customer_name IS NOT NULL OR customer_document IS NOT NULL) AND id IN (
             SELECT id FROM checkouts WHERE (customer_name IS NOT NULL OR customer_document IS NOT NULL) AND created_at < $1
               AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.checkout_id = checkouts.id AND (NOT p.final OR p.updated_at >= $1))
               AND NOT EXISTS (SELECT 1 FROM disputes d WHERE d.checkout_id = checkouts.id AND (d.resolved_at IS NULL OR d.resolved_at >= $1))
               AND NOT EXISTS (SELECT 1 FROM payouts o WHERE o.checkout_id = checkouts.id AND o.state IN (${awaiting}))
             ORDER BY created_at LIMIT $3)`,
          [cutoff, at, limit],
        );
        const payouts = await q(
          `UPDATE payouts SET pix_key = '${ERASED_KEY}', customer_document = NULL, personal_data_erased_at = $2
           WHERE personal_data_erased_at IS NULL AND seq IN (
             SELECT seq FROM payouts WHERE personal_data_erased_at IS NULL AND state NOT IN (${awaiting}) AND updated_at < $1 ORDER BY updated_at LIMIT $3)`,
          [cutoff, at, limit],
        );
        const notifications = await q(
          `DELETE FROM webhook_events WHERE id IN (
             SELECT id FROM webhook_events WHERE processed_at IS NOT NULL AND received_at < $1
               AND id NOT IN (SELECT webhook_event_id FROM disputes WHERE resolved_at IS NULL AND webhook_event_id IS NOT NULL)
             ORDER BY received_at LIMIT $2)`,
          [cutoff, limit],
        );
        // The same rows, locked once: their attempts, then their bodies.
        const deliveries = await q(
          `WITH picked AS (
             SELECT id FROM outbox WHERE state = 'delivered' AND delivered_at < $1 AND body <> '' ORDER BY delivered_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
           ), attempts AS (DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM picked))
           UPDATE outbox SET body = '' WHERE id IN (SELECT id FROM picked) AND body <> ''`,
          [cutoff, limit],
        );
        return {
          checkouts: checkouts.rowCount ?? 0,
          payouts: payouts.rowCount ?? 0,
          notifications: notifications.rowCount ?? 0,
          deliveries: deliveries.rowCount ?? 0,
        };
      });
    },
    async unsealed(limit) {
      return (
        await query<{ id: string; name: string | null; document: string | null }>(
          `SELECT id, customer_name AS name, customer_document AS document FROM checkouts
           WHERE customer_document_hash IS NULL AND customer_document IS NOT NULL AND left(customer_document, 3) <> '${SEALED_PREFIX}'
           ORDER BY created_at LIMIT $1`,
          [limit],
        )
      ).rows;
    },
    async seal(id, before, after) {
      const { rowCount } = await query(
        `UPDATE checkouts SET customer_name = $1, customer_document = $2, customer_document_hash = $3
         WHERE id = $4 AND customer_name IS NOT DISTINCT FROM $5 AND customer_document IS NOT DISTINCT FROM $6`,
        [after.name, after.document, after.documentHash, id, before.name, before.document],
      );
      return rowCount === 1;
    },
    async find({ hash, normalized: document }) {
      const checkouts = (
        await query<CheckoutRow>(
          `SELECT * FROM checkouts WHERE ($1::text IS NOT NULL AND customer_document_hash = $1)
             OR (customer_document IS NOT NULL AND left(customer_document, 3) <> '${SEALED_PREFIX}' AND ${normalized('customer_document')} = $2)
           ORDER BY created_at, id`,
          [hash, document],
        )
      ).rows.map(toCheckout);
      const ids = checkouts.map((c) => c.id);
      const payments = (await query<PaymentRow>('SELECT * FROM payments WHERE checkout_id = ANY($1::text[]) ORDER BY created_at, seq', [ids])).rows.map(
        toPayment,
      );
      const payouts = (
        await query<PayoutRow>(
          `SELECT * FROM payouts WHERE (${mayBeDocumentKey} AND ${normalized('pix_key')} = $1)
             OR (customer_document IS NOT NULL AND ${normalized('customer_document')} = $1)
             OR checkout_id = ANY($2::text[])
           ORDER BY seq`,
          [document, ids],
        )
      ).rows.map(toPayout);
      return { checkouts, payments, payouts: payouts.map(({ seq: _, ...payout }) => payout) };
    },
    async erase(checkoutIds, payoutIds, at) {
      return tx(async (q) => {
        const checkouts = await q(
          'UPDATE checkouts SET customer_name = NULL, customer_document = NULL, customer_document_hash = NULL, personal_data_erased_at = $1 WHERE id = ANY($2::text[])',
          [at, checkoutIds],
        );
        const payouts = await q(
          `UPDATE payouts SET pix_key = '${ERASED_KEY}', customer_document = NULL, personal_data_erased_at = $1 WHERE id = ANY($2::text[]) AND state <> '${PAYOUT_STATE_UNANSWERED}'`,
          [at, payoutIds],
        );
        return { checkouts: checkouts.rowCount ?? 0, payouts: payouts.rowCount ?? 0 };
      });
    },
  };
}
