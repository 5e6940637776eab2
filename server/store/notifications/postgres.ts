/** The partner's notifications on Postgres, claimed per instance (FOR UPDATE SKIP LOCKED). */
import type { PostgresContext } from '../postgres/context.ts';
import { toWebhookEvent, type WebhookEventRow } from '../rows.ts';
import type { WebhookEventStore } from './types.ts';

export function postgresWebhookEvents({ query, claimMs, instanceId }: PostgresContext): WebhookEventStore {
  return {
    async add(rawBody, receivedAt, originalBytes, authenticated) {
      const { rows } = await query<{ id: number }>(
        'INSERT INTO webhook_events (raw_body, received_at, claimed_by, claimed_until, original_bytes, authenticated) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id',
        [rawBody, receivedAt, instanceId, receivedAt + claimMs, originalBytes ?? null, authenticated === true],
      );
      return rows[0]!.id;
    },
    async addRejected(rawBody, receivedAt, result, originalBytes) {
      const { rows } = await query<{ id: number }>(
        'INSERT INTO webhook_events (raw_body, received_at, processed_at, result, original_bytes) VALUES ($1, $2, $2, $3, $4) RETURNING id',
        [rawBody, receivedAt, result, originalBytes ?? null],
      );
      return rows[0]!.id;
    },
    async markProcessed(id, processedAt, result) {
      await query('UPDATE webhook_events SET processed_at = $1, result = $2 WHERE id = $3', [processedAt, result ?? null, id]);
    },
    async unprocessed(limit) {
      const { rows } = await query<WebhookEventRow>(
        'SELECT id, raw_body, received_at, processed_at, original_bytes FROM webhook_events WHERE processed_at IS NULL ORDER BY received_at, id LIMIT $1',
        [limit],
      );
      return rows.map(toWebhookEvent);
    },
    async claimUnprocessed(limit, now) {
      const { rows } = await query<WebhookEventRow>(
        `UPDATE webhook_events w SET claimed_by = $1, claimed_until = $2::bigint + $3::bigint
         FROM (SELECT id FROM webhook_events
               WHERE processed_at IS NULL AND (claimed_by IS NULL OR claimed_by = $1 OR claimed_until <= $2)
               ORDER BY received_at, id LIMIT $4 FOR UPDATE SKIP LOCKED) pick
         WHERE w.id = pick.id
         RETURNING w.id, w.raw_body, w.received_at, w.processed_at, w.authenticated, w.original_bytes`,
        [instanceId, now, claimMs, limit],
      );
      return rows.map(toWebhookEvent).sort((a, b) => a.receivedAt - b.receivedAt || a.id - b.id);
    },
    async countUnprocessed(upTo = Number.MAX_SAFE_INTEGER) {
      const { rows } = await query<{ n: number }>('SELECT count(*) AS n FROM (SELECT 1 FROM webhook_events WHERE processed_at IS NULL LIMIT $1) t', [
        Math.min(upTo, Number.MAX_SAFE_INTEGER),
      ]);
      return rows[0]!.n;
    },
    async listByResult(results, limit) {
      if (results.length === 0) return [];
      const { rows } = await query<WebhookEventRow>(
        'SELECT id, raw_body, received_at, processed_at, result, original_bytes FROM webhook_events WHERE result = ANY($1) ORDER BY received_at DESC, id DESC LIMIT $2',
        [[...results], limit],
      );
      return rows.map(toWebhookEvent);
    },
    async expireUnprocessed(receivedBefore, at) {
      const { rowCount } = await query("UPDATE webhook_events SET processed_at = $1, result = 'expired' WHERE processed_at IS NULL AND received_at < $2", [
        at,
        receivedBefore,
      ]);
      return rowCount ?? 0;
    },
    async keep(id, retryAt, authenticated) {
      await query(
        `UPDATE webhook_events SET result = 'waiting', authenticated = authenticated OR $2, claimed_by = $3, claimed_until = $4::bigint + $5::bigint
         WHERE id = $1 AND processed_at IS NULL`,
        [id, authenticated, instanceId, retryAt, claimMs],
      );
    },
  };
}
