/** The outbox on Postgres: outcome events written in their status change's transaction, and due deliveries claimed with SKIP LOCKED. */
import { randomBytes } from 'node:crypto';
import type { OutcomeEvent } from '../../../src/shared/contract.ts';
import type { PostgresContext, Query } from '../postgres/context.ts';
import { toAttempt, toOutbox, type DeliveryAttemptRow, type OutboxRow } from '../rows.ts';
import { newOutboxRow } from './row.ts';
import type { OutboxStore } from './types.ts';

/** Adds an event unless its id is there, in the caller's transaction: true when added now. */
export async function addNewOutcome(q: Query, event: OutcomeEvent, reference: string, at: number): Promise<boolean> {
  const row = newOutboxRow(event, reference, at);
  const { rowCount } = await q(
    'INSERT INTO outbox (event_id, type, reference, body, created_at, next_attempt_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (event_id) DO NOTHING',
    [row.eventId, row.type, row.reference, row.body, row.createdAt, row.nextAttemptAt],
  );
  return rowCount === 1;
}

/**
 * Writes an outcome event once; `restate`: an event already written is written again as given (more
 * fully told) while it is not delivered, and, once delivered as it was, told again as `relinkedOf`
 * builds it (its own id); answers the event that will be delivered.
 */
export async function addOutcome(
  q: Query,
  event: OutcomeEvent | null,
  reference: string,
  at: number,
  restate = false,
  relinkedOf?: () => OutcomeEvent | null,
): Promise<OutcomeEvent | null> {
  if (!event || (await addNewOutcome(q, event, reference, at)) || !restate) return event;
  const body = JSON.stringify(event);
  const { rowCount } = await q(`UPDATE outbox SET body = $1 WHERE event_id = $2 AND state <> 'delivered' AND body <> $1`, [body, event.id]);
  if (rowCount === 1) return event;
  const row = (await q<{ state: string; body: string }>('SELECT state, body FROM outbox WHERE event_id = $1', [event.id])).rows[0];
  const relinked = row?.state === 'delivered' && row.body !== body ? (relinkedOf?.() ?? null) : null;
  if (!relinked) return event;
  await addNewOutcome(q, relinked, reference, at);
  return relinked;
}

export function postgresOutbox({ query, tx, claimMs }: PostgresContext): OutboxStore {
  return {
    async claimDue(now, limit) {
      const { rows } = await query<OutboxRow>(
        `UPDATE outbox o SET next_attempt_at = $1::bigint + $2::bigint, claim = $4
         FROM (SELECT id FROM outbox WHERE state = 'pending' AND next_attempt_at <= $1
               ORDER BY next_attempt_at, id LIMIT $3 FOR UPDATE SKIP LOCKED) pick
         WHERE o.id = pick.id
         RETURNING o.*`,
        [now, claimMs, limit, randomBytes(12).toString('base64url')],
      );
      return rows.map(toOutbox).sort((a, b) => a.id - b.id);
    },
    async renew(id, claim, now) {
      const { rowCount } = await query(`UPDATE outbox SET next_attempt_at = $1::bigint + $2::bigint WHERE id = $3 AND claim = $4 AND state = 'pending'`, [
        now,
        claimMs,
        id,
        claim,
      ]);
      return rowCount === 1;
    },
    async release(ids, now, claim = null) {
      if (ids.length === 0) return;
      await query(`UPDATE outbox SET next_attempt_at = $1, claim = NULL WHERE id = ANY($2) AND state = 'pending' AND ($3::text IS NULL OR claim = $3)`, [
        now,
        [...ids],
        claim,
      ]);
    },
    async recordAttempt(id, a, n, claim = null) {
      return tx(async (q) => {
        await q('INSERT INTO delivery_attempts (delivery_id, at, status, error, duration_ms) VALUES ($1, $2, $3, $4, $5)', [
          id,
          a.at,
          a.status,
          a.error,
          a.durationMs,
        ]);
        // Never undoes a delivery; a failure only under the claim it was sent with, when one is named.
        const { rowCount } = await q(
          `UPDATE outbox SET attempts = attempts + 1, state = $1, next_attempt_at = $2, last_error = $3, delivered_at = $4, claim = NULL
           WHERE id = $5 AND state <> 'delivered' AND ($1 = 'delivered' OR $6::text IS NULL OR claim = $6)`,
          [n.state, n.nextAttemptAt, n.lastError, n.deliveredAt, id, claim],
        );
        return rowCount === 1;
      });
    },
    async list(filter = {}) {
      const limit = filter.limit ?? 1000;
      const { rows } = filter.state
        ? await query<OutboxRow>('SELECT * FROM outbox WHERE state = $1 ORDER BY id LIMIT $2', [filter.state, limit])
        : await query<OutboxRow>('SELECT * FROM outbox ORDER BY id LIMIT $1', [limit]);
      return rows.map(toOutbox);
    },
    async get(id) {
      const row = (await query<OutboxRow>('SELECT * FROM outbox WHERE id = $1', [id])).rows[0];
      return row ? toOutbox(row) : null;
    },
    async attempts(id) {
      return (await query<DeliveryAttemptRow>('SELECT * FROM delivery_attempts WHERE delivery_id = $1 ORDER BY id', [id])).rows.map(toAttempt);
    },
    async backlog() {
      const { rows } = await query<{ pending: string; oldest: string | null }>(
        `SELECT COUNT(*) AS pending, MIN(created_at) AS oldest FROM outbox WHERE state = 'pending'`,
      );
      const row = rows[0];
      return { pending: Number(row?.pending ?? 0), oldestPendingAt: row?.oldest == null ? null : Number(row.oldest) };
    },
    async resume(now) {
      const { rowCount } = await query(`UPDATE outbox SET next_attempt_at = $1, created_at = $1, claim = NULL WHERE state = 'pending'`, [now]);
      return rowCount ?? 0;
    },
    async after(afterId, limit) {
      return (await query<OutboxRow>('SELECT * FROM outbox WHERE id > $1 ORDER BY id LIMIT $2', [afterId, limit])).rows.map(toOutbox);
    },
    async lastId() {
      const { rows } = await query<{ id: string }>('SELECT COALESCE(MAX(id), 0) AS id FROM outbox');
      return Number(rows[0]?.id ?? 0);
    },
    async replay(target, now) {
      // A replay opens a new retry window: created_at is when the current delivery window started.
      const { rowCount } =
        target === 'failed'
          ? await query(`UPDATE outbox SET state = 'pending', next_attempt_at = $1, created_at = $1 WHERE state = 'failed'`, [now])
          : await query(`UPDATE outbox SET state = 'pending', next_attempt_at = $1, created_at = $1 WHERE id = $2 AND body <> ''`, [now, target]);
      return rowCount ?? 0;
    },
  };
}
