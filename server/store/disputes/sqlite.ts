/** Disputes on SQLite: opened with their event in one transaction, one open per payment. */
import { mayDispute } from '../../money/final-state.ts';
import type { SqliteOutboxWriter } from '../outbox/sqlite.ts';
import { sqlitePaymentWithOrder } from '../payments/sqlite.ts';
import { toDispute, toPayment, type DisputeRow } from '../rows.ts';
import type { SqliteContext } from '../sqlite/context.ts';
import type { DisputeInput, DisputeOutcomeOf, DisputeStore } from './types.ts';

export function sqliteDisputes({ db }: SqliteContext, outbox: SqliteOutboxWriter): DisputeStore {
  const withOrder = sqlitePaymentWithOrder(db);
  const sql = {
    openOf: db.prepare('SELECT * FROM disputes WHERE reference = ? AND resolved_at IS NULL'),
    insert: db.prepare(
      'INSERT INTO disputes (reference, checkout_id, recorded_status, notified, webhook_event_id, opened_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *',
    ),
    countOf: db.prepare('SELECT count(*) AS n FROM disputes WHERE reference = ?'),
    listOpen: db.prepare('SELECT * FROM disputes WHERE resolved_at IS NULL ORDER BY opened_at, id LIMIT ?'),
    openOfCheckout: db.prepare('SELECT * FROM disputes WHERE checkout_id = ? AND resolved_at IS NULL ORDER BY opened_at, id'),
    resolve: db.prepare('UPDATE disputes SET resolved_at = ?, resolution = ? WHERE reference = ? AND resolved_at IS NULL RETURNING *'),
  };
  // The dispute and its event, in one transaction: one open dispute per payment, one event per dispute.
  const open = db.transaction((input: DisputeInput, outcomeOf: DisputeOutcomeOf) => {
    const row = withOrder(input.reference);
    const payment = row ? toPayment(row) : null;
    if (!row || !payment || !mayDispute(payment)) return null;
    const existing = sql.openOf.get(input.reference) as DisputeRow | undefined;
    if (existing) return { dispute: toDispute(existing), opened: false, outcome: null };
    const dispute = toDispute(
      sql.insert.get(input.reference, row.checkout_id, row.partner_status, input.notified, input.webhookEventId, input.at) as DisputeRow,
    );
    const ordinal = (sql.countOf.get(input.reference) as { n: number }).n;
    const outcome = outcomeOf(dispute, payment, row.order_id, ordinal);
    outbox.add(outcome, input.reference, input.at);
    return { dispute, opened: true, outcome };
  });
  return {
    async open(input, outcomeOf) {
      return open.immediate(input, outcomeOf);
    },
    async listOpen(limit) {
      return (sql.listOpen.all(limit) as DisputeRow[]).map(toDispute);
    },
    async openOfCheckout(checkoutId) {
      return (sql.openOfCheckout.all(checkoutId) as DisputeRow[]).map(toDispute);
    },
    async resolve(reference, note, at) {
      const row = sql.resolve.get(at, note, reference) as DisputeRow | undefined;
      return row ? toDispute(row) : null;
    },
  };
}
