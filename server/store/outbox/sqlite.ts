/** The outbox on SQLite: outcome events written in their status change's transaction, and their deliveries claimed and recorded. */
import { randomBytes } from 'node:crypto';
import type { OutcomeEvent } from '../../../src/shared/contract.ts';
import { toAttempt, toOutbox, type DeliveryAttemptRow, type OutboxRow } from '../rows.ts';
import type { SqliteContext, SqliteDatabase } from '../sqlite/context.ts';
import { newOutboxRow } from './row.ts';
import type { DeliveryAttempt, DeliveryNext, OutboxStore } from './types.ts';

/** Writes outcome events inside the caller's transaction (each aggregate that records an outcome holds one). */
export interface SqliteOutboxWriter {
  /**
   * Writes an event once; `restate`: an event already written is written again as given (more fully
   * told) while it is not delivered, and, once delivered as it was, told again as `relinked` builds it
   * (its own id); answers the event that will be delivered.
   */
  add(event: OutcomeEvent | null, reference: string, at: number, restate?: boolean, relinked?: () => OutcomeEvent | null): OutcomeEvent | null;
  /** Adds it unless its id is there: true when added now. */
  addNew(event: OutcomeEvent, reference: string, at: number): boolean;
}

export function sqliteOutboxWriter(db: SqliteDatabase): SqliteOutboxWriter {
  const insert = db.prepare(
    `INSERT INTO outbox (event_id, type, reference, body, created_at, next_attempt_at)
     VALUES (@eventId, @type, @reference, @body, @createdAt, @nextAttemptAt) ON CONFLICT(event_id) DO NOTHING`,
  );
  // The same event, told more fully (the payout it belongs to, learned after it was written): while it is not delivered.
  const restate = db.prepare(`UPDATE outbox SET body = ?1 WHERE event_id = ?2 AND state <> 'delivered' AND body <> ?1`);
  const written = db.prepare('SELECT state, body FROM outbox WHERE event_id = ?');
  const addNew = (event: OutcomeEvent, reference: string, at: number): boolean => insert.run(newOutboxRow(event, reference, at)).changes === 1;
  return {
    addNew,
    add(event, reference, at, again = false, relinkedOf) {
      if (!event || addNew(event, reference, at) || !again) return event;
      const body = JSON.stringify(event);
      if (restate.run(body, event.id).changes === 1) return event;
      const row = written.get(event.id) as { state: string; body: string } | undefined;
      const relinked = row?.state === 'delivered' && row.body !== body ? (relinkedOf?.() ?? null) : null;
      if (!relinked) return event;
      addNew(relinked, reference, at);
      return relinked;
    },
  };
}

/** A delivery claim's token: each claim its own, so a worker whose claim ran out knows it lost it. */
const newClaim = (): string => randomBytes(12).toString('base64url');

export function sqliteOutbox({ db, claimMs }: SqliteContext): OutboxStore {
  const sql = {
    // The claim puts the next attempt off by the claim time; recording the attempt sets the real one.
    claim: db.prepare(
      `UPDATE outbox SET next_attempt_at = ?1 + ?2, claim = ?4 WHERE id IN (
         SELECT id FROM outbox WHERE state = 'pending' AND next_attempt_at <= ?1 ORDER BY next_attempt_at, id LIMIT ?3)
       RETURNING *`,
    ),
    renew: db.prepare(`UPDATE outbox SET next_attempt_at = ?1 + ?2 WHERE id = ?3 AND claim = ?4 AND state = 'pending'`),
    release: db.prepare(`UPDATE outbox SET next_attempt_at = ?1, claim = NULL WHERE id = ?2 AND state = 'pending' AND (?3 IS NULL OR claim = ?3)`),
    get: db.prepare('SELECT * FROM outbox WHERE id = ?'),
    list: db.prepare('SELECT * FROM outbox ORDER BY id LIMIT ?'),
    listByState: db.prepare('SELECT * FROM outbox WHERE state = ? ORDER BY id LIMIT ?'),
    addAttempt: db.prepare('INSERT INTO delivery_attempts (delivery_id, at, status, error, duration_ms) VALUES (?, ?, ?, ?, ?)'),
    // Never undoes a delivery; a failure only under the claim it was sent with, when one is named.
    update: db.prepare(
      `UPDATE outbox SET attempts = attempts + 1, state = ?1, next_attempt_at = ?2, last_error = ?3, delivered_at = ?4, claim = NULL
       WHERE id = ?5 AND state <> 'delivered' AND (?1 = 'delivered' OR ?6 IS NULL OR claim = ?6)`,
    ),
    backlog: db.prepare(`SELECT COUNT(*) AS pending, MIN(created_at) AS oldest FROM outbox WHERE state = 'pending'`),
    attemptsOf: db.prepare('SELECT * FROM delivery_attempts WHERE delivery_id = ? ORDER BY id'),
    // A replay opens a new retry window: created_at is when the current delivery window started.
    replayOne: db.prepare(`UPDATE outbox SET state = 'pending', next_attempt_at = ?1, created_at = ?1 WHERE id = ?2 AND body <> ''`),
    resume: db.prepare(`UPDATE outbox SET next_attempt_at = ?1, created_at = ?1, claim = NULL WHERE state = 'pending'`),
    after: db.prepare('SELECT * FROM outbox WHERE id > ? ORDER BY id LIMIT ?'),
    lastId: db.prepare('SELECT COALESCE(MAX(id), 0) AS id FROM outbox'),
    replayFailed: db.prepare(`UPDATE outbox SET state = 'pending', next_attempt_at = ?1, created_at = ?1 WHERE state = 'failed'`),
  };
  const recordAttempt = db.transaction((id: number, a: DeliveryAttempt, n: DeliveryNext, claim: string | null): boolean => {
    sql.addAttempt.run(id, a.at, a.status, a.error, a.durationMs);
    return sql.update.run(n.state, n.nextAttemptAt, n.lastError, n.deliveredAt, id, claim).changes === 1;
  });
  return {
    async claimDue(now, limit) {
      // RETURNING's order is not the query's: oldest first again, by id (ids grow with time).
      return (sql.claim.all(now, claimMs, limit, newClaim()) as OutboxRow[]).map(toOutbox).sort((a, b) => a.id - b.id);
    },
    async renew(id, claim, now) {
      return sql.renew.run(now, claimMs, id, claim).changes === 1;
    },
    async release(ids, now, claim = null) {
      for (const id of ids) sql.release.run(now, id, claim);
    },
    async recordAttempt(id, attempt, next, claim = null) {
      return recordAttempt(id, attempt, next, claim);
    },
    async list(filter = {}) {
      const limit = filter.limit ?? 1000;
      const rows = filter.state ? sql.listByState.all(filter.state, limit) : sql.list.all(limit);
      return (rows as OutboxRow[]).map(toOutbox);
    },
    async get(id) {
      const row = sql.get.get(id) as OutboxRow | undefined;
      return row ? toOutbox(row) : null;
    },
    async attempts(id) {
      return (sql.attemptsOf.all(id) as DeliveryAttemptRow[]).map(toAttempt);
    },
    async backlog() {
      const row = sql.backlog.get() as { pending: number; oldest: number | null };
      return { pending: Number(row.pending), oldestPendingAt: row.oldest === null ? null : Number(row.oldest) };
    },
    async resume(now) {
      return sql.resume.run(now).changes;
    },
    async after(afterId, limit) {
      return (sql.after.all(afterId, limit) as OutboxRow[]).map(toOutbox);
    },
    async lastId() {
      return Number((sql.lastId.get() as { id: number }).id);
    },
    async replay(target, now) {
      return target === 'failed' ? sql.replayFailed.run(now).changes : sql.replayOne.run(now, target).changes;
    },
  };
}
