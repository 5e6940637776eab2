/** The partner's notifications on SQLite, claimed by the one holder of this file. */
import { toWebhookEvent, type WebhookEventRow } from '../rows.ts';
import { HOLDER, type SqliteContext } from '../sqlite/context.ts';
import type { WebhookEventStore } from './types.ts';

export function sqliteWebhookEvents({ db, claimMs }: SqliteContext): WebhookEventStore {
  const sql = {
    add: db.prepare('INSERT INTO webhook_events (raw_body, received_at, claimed_by, claimed_until, original_bytes, authenticated) VALUES (?, ?, ?, ?, ?, ?)'),
    addRejected: db.prepare('INSERT INTO webhook_events (raw_body, received_at, processed_at, result, original_bytes) VALUES (?, ?, ?, ?, ?)'),
    claim: db.prepare(
      `UPDATE webhook_events SET claimed_by = ?1, claimed_until = ?2 + ?3 WHERE id IN (
         SELECT id FROM webhook_events WHERE processed_at IS NULL AND (claimed_by IS NULL OR claimed_by = ?1 OR claimed_until <= ?2)
         ORDER BY received_at, id LIMIT ?4)
       RETURNING id, raw_body, received_at, processed_at, authenticated, original_bytes`,
    ),
    keep: db.prepare(
      `UPDATE webhook_events SET result = 'waiting', authenticated = MAX(authenticated, ?), claimed_by = ?, claimed_until = ? WHERE id = ? AND processed_at IS NULL`,
    ),
    mark: db.prepare('UPDATE webhook_events SET processed_at = ?, result = ? WHERE id = ?'),
    unprocessed: db.prepare(
      'SELECT id, raw_body, received_at, processed_at, original_bytes FROM webhook_events WHERE processed_at IS NULL ORDER BY received_at, id LIMIT ?',
    ),
    countUnprocessed: db.prepare('SELECT count(*) AS n FROM (SELECT 1 FROM webhook_events WHERE processed_at IS NULL LIMIT ?)'),
    expireUnprocessed: db.prepare("UPDATE webhook_events SET processed_at = ?, result = 'expired' WHERE processed_at IS NULL AND received_at < ?"),
  };
  return {
    async add(rawBody, receivedAt, originalBytes, authenticated) {
      return Number(sql.add.run(rawBody, receivedAt, HOLDER, receivedAt + claimMs, originalBytes ?? null, authenticated ? 1 : 0).lastInsertRowid);
    },
    async claimUnprocessed(limit, now) {
      return (sql.claim.all(HOLDER, now, claimMs, limit) as WebhookEventRow[]).map(toWebhookEvent).sort((a, b) => a.receivedAt - b.receivedAt || a.id - b.id);
    },
    async addRejected(rawBody, receivedAt, result, originalBytes) {
      return Number(sql.addRejected.run(rawBody, receivedAt, receivedAt, result, originalBytes ?? null).lastInsertRowid);
    },
    async markProcessed(id, processedAt, result) {
      sql.mark.run(processedAt, result ?? null, id);
    },
    async countUnprocessed(upTo = Number.MAX_SAFE_INTEGER) {
      return (sql.countUnprocessed.get(upTo) as { n: number }).n;
    },
    async expireUnprocessed(receivedBefore, at) {
      return sql.expireUnprocessed.run(at, receivedBefore).changes;
    },
    async keep(id, retryAt, authenticated) {
      sql.keep.run(authenticated ? 1 : 0, HOLDER, retryAt + claimMs, id);
    },
    async listByResult(results, limit) {
      if (results.length === 0) return [];
      // A handful of fixed words: the placeholders are built from their count only.
      const rows = db
        .prepare(
          `SELECT id, raw_body, received_at, processed_at, result, original_bytes FROM webhook_events WHERE result IN (${results.map(() => '?').join(', ')})
           ORDER BY received_at DESC, id DESC LIMIT ?`,
        )
        .all(...results, limit) as WebhookEventRow[];
      return rows.map(toWebhookEvent);
    },
    async unprocessed(limit) {
      return (sql.unprocessed.all(limit) as WebhookEventRow[]).map(toWebhookEvent);
    },
  };
}
