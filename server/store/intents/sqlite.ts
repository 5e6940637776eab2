/** Payment intents on SQLite (types.ts). */
import type { SqliteContext } from '../sqlite/context.ts';
import { toIntent, type IntentRow } from './row.ts';
import type { PaymentIntentStore } from './types.ts';

export function sqliteIntents({ db }: SqliteContext): PaymentIntentStore {
  const sql = {
    add: db.prepare('INSERT INTO payment_intents (transaction_id, checkout_id, value_cents, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING'),
    keep: db.prepare(
      `INSERT INTO payment_intents (transaction_id, checkout_id, value_cents, created_at, reference, answer) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (transaction_id) DO UPDATE SET reference = excluded.reference, answer = excluded.answer`,
    ),
    forget: db.prepare('DELETE FROM payment_intents WHERE transaction_id = ?'),
    unrecorded: db.prepare(
      `SELECT i.* FROM payment_intents i WHERE i.created_at < ?
         AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.transaction_id = i.transaction_id)
       ORDER BY i.created_at DESC LIMIT ?`,
    ),
    prune: db.prepare(
      'DELETE FROM payment_intents WHERE created_at < ? AND EXISTS (SELECT 1 FROM payments p WHERE p.transaction_id = payment_intents.transaction_id)',
    ),
  };
  return {
    async add(intent) {
      sql.add.run(intent.transactionId, intent.checkoutId, intent.valueCents, intent.createdAt);
    },
    async keepAnswer(record) {
      sql.keep.run(record.transactionId, record.checkoutId, record.valueCents, record.createdAt, record.reference, JSON.stringify(record));
    },
    async forget(transactionId) {
      sql.forget.run(transactionId);
    },
    async unrecorded(before, limit) {
      return (sql.unrecorded.all(before, limit) as IntentRow[]).map(toIntent);
    },
    async prune(before) {
      return Number(sql.prune.run(before).changes);
    },
  };
}
