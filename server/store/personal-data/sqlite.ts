/** Personal data on SQLite: the retention purge, sealing documents kept in clear, a data subject's records by document. */
import { PAYOUT_STATES_AWAITING_OUTCOME, PAYOUT_STATE_UNANSWERED } from '../../money/final-state.ts';
import { toCheckout, toPayment, toPayout, type CheckoutRow, type PaymentRow, type PayoutRow } from '../rows.ts';
import { sqlWords } from '../sql.ts';
import type { SqliteContext } from '../sqlite/context.ts';
import { ERASED_KEY, SEALED_PREFIX, mayBeDocumentKey, normalized } from './sql.ts';
import type { PersonalDataStore } from './types.ts';

const withoutSeq = ({ seq: _, ...payout }: ReturnType<typeof toPayout>) => payout;

export function sqlitePersonalData({ db }: SqliteContext): PersonalDataStore {
  const awaiting = sqlWords(PAYOUT_STATES_AWAITING_OUTCOME);
  const sql = {
    // Each statement takes at most ?3 rows, oldest first (purge's batch): the write lock is held briefly.
    purgeCheckouts: db.prepare(
      `UPDATE checkouts SET customer_name = NULL, customer_document = NULL, customer_document_hash = NULL, personal_data_erased_at = ?2
       WHERE id IN (SELECT id FROM checkouts WHERE (customer_name IS NOT NULL OR customer_document IS NOT NULL) AND created_at < ?1
         AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.checkout_id = checkouts.id AND (p.final = 0 OR p.updated_at >= ?1))
         AND NOT EXISTS (SELECT 1 FROM disputes d WHERE d.checkout_id = checkouts.id AND (d.resolved_at IS NULL OR d.resolved_at >= ?1))
         AND NOT EXISTS (SELECT 1 FROM payouts o WHERE o.checkout_id = checkouts.id AND o.state IN (${awaiting}))
         ORDER BY created_at LIMIT ?3)`,
    ),
    purgePayouts: db.prepare(
      `UPDATE payouts SET pix_key = '${ERASED_KEY}', customer_document = NULL, personal_data_erased_at = ?2
       WHERE seq IN (SELECT seq FROM payouts WHERE personal_data_erased_at IS NULL AND state NOT IN (${awaiting}) AND updated_at < ?1 ORDER BY updated_at LIMIT ?3)`,
    ),
    purgeNotifications: db.prepare(
      `DELETE FROM webhook_events WHERE id IN (SELECT id FROM webhook_events WHERE processed_at IS NOT NULL AND received_at < ?1
         AND id NOT IN (SELECT webhook_event_id FROM disputes WHERE resolved_at IS NULL AND webhook_event_id IS NOT NULL)
         ORDER BY received_at LIMIT ?2)`,
    ),
    // The same rows (one transaction, one writer): their attempts, then their bodies.
    purgeAttempts: db.prepare(
      `DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM outbox WHERE state = 'delivered' AND delivered_at < ?1 AND body <> '' ORDER BY delivered_at, id LIMIT ?2)`,
    ),
    purgeDeliveries: db.prepare(
      `UPDATE outbox SET body = '' WHERE id IN (SELECT id FROM outbox WHERE state = 'delivered' AND delivered_at < ?1 AND body <> '' ORDER BY delivered_at, id LIMIT ?2)`,
    ),
    unsealed: db.prepare(
      `SELECT id, customer_name AS name, customer_document AS document FROM checkouts
       WHERE customer_document_hash IS NULL AND customer_document IS NOT NULL AND substr(customer_document, 1, 3) <> '${SEALED_PREFIX}'
       ORDER BY created_at LIMIT ?`,
    ),
    seal: db.prepare(
      `UPDATE checkouts SET customer_name = ?, customer_document = ?, customer_document_hash = ?
       WHERE id = ? AND customer_name IS ? AND customer_document IS ?`,
    ),
    checkouts: db.prepare(
      `SELECT * FROM checkouts WHERE (?1 IS NOT NULL AND customer_document_hash = ?1)
         OR (customer_document IS NOT NULL AND substr(customer_document, 1, 3) <> '${SEALED_PREFIX}' AND ${normalized('customer_document')} = ?2)
       ORDER BY created_at, rowid`,
    ),
    payments: db.prepare('SELECT * FROM payments WHERE checkout_id = ? ORDER BY created_at, rowid'),
    payouts: db.prepare(
      `SELECT * FROM payouts WHERE (${mayBeDocumentKey} AND ${normalized('pix_key')} = ?1)
         OR (customer_document IS NOT NULL AND ${normalized('customer_document')} = ?1)
       ORDER BY seq`,
    ),
    refunds: db.prepare('SELECT * FROM payouts WHERE checkout_id = ? ORDER BY seq'),
    eraseCheckout: db.prepare(
      'UPDATE checkouts SET customer_name = NULL, customer_document = NULL, customer_document_hash = NULL, personal_data_erased_at = ? WHERE id = ?',
    ),
    erasePayout: db.prepare(
      `UPDATE payouts SET pix_key = '${ERASED_KEY}', customer_document = NULL, personal_data_erased_at = ? WHERE id = ? AND state <> '${PAYOUT_STATE_UNANSWERED}'`,
    ),
  };
  const purge = db.transaction((cutoff: number, at: number, limit: number) => {
    const checkouts = sql.purgeCheckouts.run(cutoff, at, limit).changes;
    const payouts = sql.purgePayouts.run(cutoff, at, limit).changes;
    const notifications = sql.purgeNotifications.run(cutoff, limit).changes;
    sql.purgeAttempts.run(cutoff, limit);
    const deliveries = sql.purgeDeliveries.run(cutoff, limit).changes;
    return { checkouts, payouts, notifications, deliveries };
  });
  const erase = db.transaction((checkoutIds: readonly string[], payoutIds: readonly string[], at: number) => ({
    checkouts: checkoutIds.reduce((n, id) => n + sql.eraseCheckout.run(at, id).changes, 0),
    payouts: payoutIds.reduce((n, id) => n + sql.erasePayout.run(at, id).changes, 0),
  }));
  return {
    async purge(cutoff, at, limit) {
      return purge.immediate(cutoff, at, limit);
    },
    async unsealed(limit) {
      return sql.unsealed.all(limit) as { id: string; name: string | null; document: string | null }[];
    },
    async seal(id, before, after) {
      return sql.seal.run(after.name, after.document, after.documentHash, id, before.name, before.document).changes === 1;
    },
    async find({ hash, normalized: document }) {
      const checkouts = (sql.checkouts.all(hash, document) as CheckoutRow[]).map(toCheckout);
      const payments = checkouts.flatMap((c) => (sql.payments.all(c.id) as PaymentRow[]).map(toPayment));
      // A payout to the document and a refund of one of its checkouts may be the same row: once each, oldest first.
      const payouts = new Map<number, PayoutRow>();
      for (const row of sql.payouts.all(document) as PayoutRow[]) payouts.set(row.seq, row);
      for (const c of checkouts) for (const row of sql.refunds.all(c.id) as PayoutRow[]) payouts.set(row.seq, row);
      const rows = [...payouts.values()].sort((a, b) => a.seq - b.seq);
      return { checkouts, payments, payouts: rows.map((row) => withoutSeq(toPayout(row))) };
    },
    async erase(checkoutIds, payoutIds, at) {
      return erase.immediate(checkoutIds, payoutIds, at);
    },
  };
}
