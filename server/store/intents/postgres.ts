/** Payment intents on Postgres (types.ts): a table of their own, so a lock on the payments tables does not stop them. */
import type { PostgresContext } from '../postgres/context.ts';
import { toIntent, type IntentRow } from './row.ts';
import type { PaymentIntentStore } from './types.ts';

export function postgresIntents({ query }: PostgresContext): PaymentIntentStore {
  return {
    async add(intent) {
      await query('INSERT INTO payment_intents (transaction_id, checkout_id, value_cents, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [
        intent.transactionId,
        intent.checkoutId,
        intent.valueCents,
        intent.createdAt,
      ]);
    },
    async keepAnswer(record) {
      await query(
        `INSERT INTO payment_intents (transaction_id, checkout_id, value_cents, created_at, reference, answer) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (transaction_id) DO UPDATE SET reference = EXCLUDED.reference, answer = EXCLUDED.answer`,
        [record.transactionId, record.checkoutId, record.valueCents, record.createdAt, record.reference, JSON.stringify(record)],
      );
    },
    async forget(transactionId) {
      await query('DELETE FROM payment_intents WHERE transaction_id = $1', [transactionId]);
    },
    async unrecorded(before, limit) {
      const { rows } = await query<IntentRow>(
        `SELECT i.* FROM payment_intents i WHERE i.created_at < $1
           AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.transaction_id = i.transaction_id)
         ORDER BY i.created_at DESC LIMIT $2`,
        [before, limit],
      );
      return rows.map(toIntent);
    },
    async prune(before) {
      const { rowCount } = await query(
        'DELETE FROM payment_intents i WHERE i.created_at < $1 AND EXISTS (SELECT 1 FROM payments p WHERE p.transaction_id = i.transaction_id)',
        [before],
      );
      return rowCount ?? 0;
    },
  };
}
