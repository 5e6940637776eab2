/**
 * The Store on Postgres (the `pg` driver, pooled), shared by every proxy instance given the same
 * PIX_DATABASE_URL. What makes N instances behave as one:
 * - every rule that decides money is a row and a constraint, checked in a transaction: one checkout
 *   per order id, one current payment per checkout (compare-and-set), one payout per idempotency key,
 *   refunds of one checkout serialized by a row lock, a final status never changed (`WHERE NOT
 *   final`), one outbox row per event id;
 * - work is claimed: a notification by the instance that received it, a due delivery by the worker
 *   that sends it (`FOR UPDATE SKIP LOCKED`), each for `claimMs`, after which another instance takes
 *   up what a dead one held; `leases` name who polls a payment or reconciles a record now;
 * - a payment's change is announced in its own transaction (NOTIFY, delivered on commit) on one
 *   channel; each instance LISTENs on its own connection, forgets its cached copy and tells its
 *   streams. A lost listening connection forgets the whole cache and is reopened.
 * Times in rows are the proxy's epoch ms, as in SQLite; a lease's expiry is the database's clock.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import type { OutcomeEvent } from '../../../src/shared/contract.ts';
import type { TokenStore } from '../../partner/token-store.ts';
import { guarded } from '../guard.ts';
import { RecordCache } from '../record-cache.ts';
import {
  toCheckout,
  toDispute,
  toOutbox,
  toPayment,
  toPayout,
  toTransfer,
  type CheckoutRow,
  type DisputeRow,
  type OutboxRow,
  type PaymentRow,
  type PayoutRow,
  type TransferRow,
} from '../rows.ts';
import { StoreError, type Cluster, type PayoutLink, type Store, type StoreChange, type TransferOutcomeOf, type WebhookEventRecord } from '../store.ts';
import { migrate } from './migrations.ts';

export interface PostgresStoreOptions {
  /** postgres://user:password@host:port/database[?sslmode=...]: never logged whole. */
  url: string;
  /** Payment records kept in memory in front of the database (default 10,000; 0 for none). */
  cacheSize?: number;
  /** How long a claim on a notification or a delivery lasts (default 30 s). */
  claimMs?: number;
  /** Connections in the pool (default 10), the listening one aside. */
  poolSize?: number;
  /** Told when the listening connection is lost or cannot be reopened. */
  onProblem?: (message: string, error?: unknown) => void;
}

/** The channel every instance announces payment changes on. Payload: `<instance> payment <reference>`. */
export const CHANGES_CHANNEL = 'pix_checkout_changes';

/** BIGINT (epoch ms, ids, counts) and NUMERIC (sums) as numbers: every value here is far below 2^53. */
const INT8 = 20;
const NUMERIC = 1700;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
    oid === INT8 || oid === NUMERIC ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** Where the database is, for messages: host, port and name, never the user or the password. */
export function describeDatabase(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'the database of PIX_DATABASE_URL';
  }
}

/** Postgres's answer in words an operator can act on; a query's own error (a constraint) is passed on as it is. */
function storeError(error: unknown, where: string): Error {
  if (!(error instanceof Error)) return new Error(String(error));
  if (error instanceof StoreError) return error;
  const code = (error as { code?: unknown }).code;
  const text = typeof code === 'string' ? code : '';
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET', 'EPIPE'].includes(text)) {
    return new StoreError(`the database at ${where} cannot be reached (${text}): check PIX_DATABASE_URL and that Postgres is running`, text);
  }
  if (text === '28P01' || text === '28000')
    return new StoreError(`the database at ${where} refused the login: check the user and password in PIX_DATABASE_URL`, text);
  if (text === '3D000') return new StoreError(`the database ${where} does not exist: create it (createdb) or fix PIX_DATABASE_URL`, text);
  if (text === '53300') return new StoreError(`the database at ${where} has no connection left: lower PIX_DATABASE_POOL_SIZE or raise max_connections`, text);
  if (text === '53100') return new StoreError(`the disk of the database at ${where} is full`, text);
  if (text === '25006') return new StoreError(`the database at ${where} is read-only (a standby?): point PIX_DATABASE_URL at the primary`, text);
  if (/^(08|53|57|58|XX)/.test(text)) return new StoreError(`the database at ${where} failed (${text}): ${error.message}`, text);
  // The driver's own words when the connection broke or could not be made in time.
  if (
    /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client was closed|Cannot use a pool after calling end/i.test(
      error.message,
    )
  ) {
    return new StoreError(`the database at ${where} cannot be reached: ${error.message}`, 'connection');
  }
  return error;
}

type Query = <R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>;

/** The database's clock in epoch ms, for leases (the instances' own clocks may differ). */
const DB_NOW = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/**
 * Connects, brings the schema up to date (once across instances: an advisory lock), starts listening
 * for other instances' changes, and answers the store. Throws a StoreError naming what to do when the
 * database cannot be used.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const where = describeDatabase(options.url);
  const pool = new pg.Pool({ connectionString: options.url, max: options.poolSize ?? 10, connectionTimeoutMillis: 10_000, types });
  // An idle connection that breaks is dropped by the pool; the next query opens another.
  pool.on('error', (error) => options.onProblem?.(`a database connection broke (${where})`, error));
  try {
    const client = await pool.connect();
    try {
      await migrate(client);
    } finally {
      client.release();
    }
    const store = opened(pool, options, where);
    await store.listen();
    return guarded(store.store, (error) => storeError(error, where));
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw storeError(error, where);
  }
}

function opened(pool: pg.Pool, options: PostgresStoreOptions, where: string): { store: Store; listen: () => Promise<void> } {
  const claimMs = options.claimMs ?? 30_000;
  const cache = new RecordCache(options.cacheSize ?? 10_000);
  const instanceId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const query: Query = (text, values) => pool.query(text, values);

  /** One transaction; a serialization failure or deadlock is tried again (the work is pure until COMMIT). */
  async function tx<T>(work: (q: Query) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await work((text, values) => client.query(text, values));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch((rollback: unknown) => (broken = rollback as Error));
        const code = (error as { code?: string }).code;
        if (attempt < 5 && (code === '40001' || code === '40P01')) continue;
        throw error;
      } finally {
        client.release(broken);
      }
    }
  }

  const announce = (q: Query, reference: string) => q('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, `${instanceId} payment ${reference}`]);

  // Listening: one connection of its own, reopened when lost.
  const listeners = new Set<(change: StoreChange) => void>();
  let listener: pg.Client | null = null;
  let listening = false;
  let closing = false;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let retryDelay = 250;
  const emit = (change: StoreChange) => {
    for (const l of listeners) {
      try {
        l(change);
      } catch (error) {
        options.onProblem?.('a store change listener failed', error);
      }
    }
  };
  async function listen(): Promise<void> {
    const client = new pg.Client({ connectionString: options.url, types });
    client.on('notification', (message) => {
      const [from, kind, reference] = (message.payload ?? '').split(' ');
      if (from === instanceId || kind !== 'payment' || !reference) return;
      cache.forget(reference);
      emit({ kind: 'payment', reference });
    });
    const lost = (error?: unknown) => {
      if (listener !== client) return;
      listener = null;
      listening = false;
      // Changes may be missed from now on: nothing cached is trusted until listening again.
      cache.clear();
      client.end().catch(() => undefined);
      if (closing) return;
      options.onProblem?.(`lost the database connection that hears other instances' changes (${where}); reconnecting`, error);
      reconnect();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    await client.connect();
    await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    listener = client;
    listening = true;
    retryDelay = 250;
    // What changed while not listening is not known: read everything again.
    cache.clear();
    emit({ kind: 'resync' });
  }
  function reconnect(): void {
    clearTimeout(retry);
    retry = setTimeout(() => {
      listen().catch((error: unknown) => {
        options.onProblem?.(`cannot listen for other instances' changes (${where}); trying again`, error);
        retryDelay = Math.min(retryDelay * 2, 5000);
        if (!closing) reconnect();
      });
    }, retryDelay);
    retry.unref?.();
  }

  // Run-out leases are swept now and then: one row per payment polled would otherwise stay.
  const sweeper = setInterval(() => {
    query(`DELETE FROM leases WHERE expires_at < ${DB_NOW} - 60000`).catch(() => undefined);
  }, 60_000);
  sweeper.unref?.();

  const cluster: Cluster = {
    instanceId,
    async lease(name, ttlMs) {
      const { rowCount } = await query(
        `INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, ${DB_NOW} + $3)
         ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
         WHERE leases.expires_at <= ${DB_NOW} OR leases.holder = EXCLUDED.holder
         RETURNING 1`,
        [name, instanceId, Math.max(1, Math.round(ttlMs))],
      );
      return rowCount === 1;
    },
    async release(name) {
      await query('DELETE FROM leases WHERE name = $1 AND holder = $2', [name, instanceId]);
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    listening: () => listening,
  };

  /** Writes an outcome event once; `restate`: an event already written is written again as given (more fully told) while it is not delivered. */
  const addToOutbox = async (q: Query, event: OutcomeEvent | null, reference: string, at: number, restate = false): Promise<OutcomeEvent | null> => {
    if (event) {
      const body = JSON.stringify(event);
      const { rowCount } = await q(
        'INSERT INTO outbox (event_id, type, reference, body, created_at, next_attempt_at) VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (event_id) DO NOTHING',
        [event.id, event.type, reference, body, at],
      );
      if (rowCount === 0 && restate) await q(`UPDATE outbox SET body = $1 WHERE event_id = $2 AND state <> 'delivered' AND body <> $1`, [body, event.id]);
    }
    return event;
  };
  /**
   * A final transfer's outcome, with the payout it belongs to (if the proxy started it: by the
   * partner's reference, or, before its create's answer gave it one, by our transaction_id), which
   * takes the outcome too. `restate`: as addToOutbox's (the payout was just linked).
   */
  const transferOutcome = async (q: Query, reference: string, at: number, outcomeOf: TransferOutcomeOf, restate = false): Promise<OutcomeEvent | null> => {
    const transfer = toTransfer((await q<TransferRow>('SELECT * FROM transfers WHERE reference = $1', [reference])).rows[0]!);
    const payout = (
      await q<PayoutRow & { order_id: string | null }>(
        `SELECT p.*, c.order_id AS order_id FROM payouts p LEFT JOIN checkouts c ON c.id = p.checkout_id
         WHERE p.reference = $1 OR ($2::text IS NOT NULL AND p.transaction_id = $2 AND p.reference IS NULL) ORDER BY p.reference IS NULL LIMIT 1`,
        [reference, transfer.transactionId ?? null],
      )
    ).rows[0];
    const link: PayoutLink | null = payout
      ? { transferId: payout.id, merchantReference: payout.merchant_reference, checkoutId: payout.checkout_id, orderId: payout.order_id }
      : null;
    const outcome = await addToOutbox(q, outcomeOf(transfer, link), reference, at, restate);
    const state = outcome?.data.status;
    if (payout && (state === 'approved' || state === 'canceled')) {
      // Whatever its answer did (a lost one: `unknown`); its reference, when the outcome came first.
      await q(
        `UPDATE payouts SET state = $1, updated_at = $2, reference = COALESCE(reference, $4), customer_document = NULL
         WHERE id = $3 AND state IN ('sending', 'pending', 'unknown')`,
        [state, at, payout.id, reference],
      );
    }
    return outcome;
  };
  // Known transfers keep what they have; a transaction_id read later is added.
  const trackTransfer = (
    q: Query,
    t: {
      reference: string;
      partnerStatus: number;
      final: boolean;
      valueCents: number | null;
      createdAt: number;
      updatedAt: number;
      transactionId?: string | null | undefined;
    },
  ) =>
    q(
      `INSERT INTO transfers (reference, partner_status, final, value_cents, created_at, updated_at, transaction_id) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (reference) DO UPDATE SET transaction_id = EXCLUDED.transaction_id WHERE transfers.transaction_id IS NULL AND EXCLUDED.transaction_id IS NOT NULL`,
      [t.reference, t.partnerStatus, t.final, t.valueCents, t.createdAt, t.updatedAt, t.transactionId ?? null],
    );
  const payoutById = async (q: Query, id: string) => (await q<PayoutRow>('SELECT * FROM payouts WHERE id = $1', [id])).rows[0];
  const insertPayment = (q: Query, p: Parameters<Store['insertPayment']>[0]) =>
    q(
      `INSERT INTO payments (reference, checkout_id, value_cents, description, partner_status, brcode, qr_code_url, checkout_url, created_at, expires_at, transaction_id, updated_at, final, favoured)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      [
        p.reference,
        p.checkoutId,
        p.valueCents,
        p.description,
        p.partnerStatus,
        p.brcode,
        p.qrCodeUrl,
        p.checkoutUrl,
        p.createdAt,
        p.expiresAt,
        p.transactionId,
        p.updatedAt,
        p.final,
        p.favoured ?? null,
      ],
    );
  const eventRecord = (r: {
    id: number;
    raw_body: string;
    received_at: number;
    processed_at: number | null;
    result?: string | null;
    authenticated?: boolean;
  }): WebhookEventRecord => ({
    id: r.id,
    rawBody: r.raw_body,
    receivedAt: r.received_at,
    processedAt: r.processed_at,
    ...(r.result !== undefined ? { result: r.result } : {}),
    ...(r.authenticated ? { authenticated: true } : {}),
  });

  const tokens: TokenStore = {
    load: async (key) => (await query<{ token: string }>('SELECT token FROM partner_tokens WHERE key = $1', [key])).rows[0]?.token ?? null,
    save: async (key, token) =>
      void (await query(
        'INSERT INTO partner_tokens (key, token, saved_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO UPDATE SET token = EXCLUDED.token, saved_at = EXCLUDED.saved_at',
        [key, token, Date.now()],
      )),
    clear: async (key) => void (await query('DELETE FROM partner_tokens WHERE key = $1', [key])),
  };

  const store: Store = {
    kind: 'postgres',
    cluster,
    async insertPayment(payment) {
      await insertPayment(query, payment);
      cache.remember({ ...payment });
    },
    peekPayment(reference) {
      return cache.get(reference);
    },
    async getPayment(reference) {
      const cached = cache.get(reference);
      if (cached) return cached;
      const mark = cache.mark();
      const row = (await query<PaymentRow>('SELECT * FROM payments WHERE reference = $1', [reference])).rows[0];
      return row ? cache.rememberRead(mark, toPayment(row)) : null;
    },
    async updatePaymentStatus(reference, partnerStatus, final, updatedAt, outcomeOf) {
      const result = await tx(async (q) => {
        const row = (
          await q<PaymentRow>('UPDATE payments SET partner_status = $2, final = $3, updated_at = $4 WHERE reference = $1 AND NOT final RETURNING *', [
            reference,
            partnerStatus,
            final,
            updatedAt,
          ])
        ).rows[0];
        if (!row) return { row: null, outcome: null };
        await announce(q, reference);
        if (!final) return { row, outcome: null };
        const orderId = row.checkout_id
          ? ((await q<{ order_id: string }>('SELECT order_id FROM checkouts WHERE id = $1', [row.checkout_id])).rows[0]?.order_id ?? null)
          : null;
        return { row, outcome: await addToOutbox(q, outcomeOf(toPayment(row), orderId), reference, updatedAt) };
      });
      // Unchanged: another instance made it final meanwhile, or it is unknown; read it anew next time.
      if (!result.row) {
        cache.forget(reference);
        return { changed: false, outcome: null };
      }
      cache.remember(toPayment(result.row));
      return { changed: true, outcome: result.outcome };
    },
    async setPaymentFavoured(reference, favoured) {
      const row = await tx(async (q) => {
        const updated = (await q<PaymentRow>('UPDATE payments SET favoured = $2 WHERE reference = $1 RETURNING *', [reference, favoured])).rows[0];
        if (updated) await announce(q, reference);
        return updated;
      });
      if (row) cache.remember(toPayment(row));
    },
    async nonFinalPayments(limit) {
      return (await query<PaymentRow>('SELECT * FROM payments WHERE NOT final ORDER BY created_at LIMIT $1', [limit])).rows.map(toPayment);
    },
    async duePayments(now, limit, schedule) {
      // Reconciler.dueAt in SQL: the last read, plus the interval the payment's place in time asks for.
      const { rows } = await query<PaymentRow>(
        `SELECT * FROM (
           SELECT p.*, GREATEST(p.updated_at, COALESCE(p.checked_at, 0)) + CASE
               WHEN p.expires_at + $2::bigint < $1::bigint THEN $3::bigint
               WHEN abs($1::bigint - p.expires_at) <= $4::bigint OR abs($1::bigint - (p.expires_at + $5::bigint)) <= $4::bigint THEN LEAST($6::bigint, $7::bigint)
               ELSE $7::bigint END AS due_at
           FROM payments p WHERE NOT p.final) due
         WHERE due_at <= $1::bigint ORDER BY due_at, created_at, reference LIMIT $8`,
        [now, schedule.parkAfterMs, schedule.parkedEveryMs, schedule.nearWindowMs, schedule.cancelAfterMs, schedule.nearMs, schedule.everyMs, limit],
      );
      return rows.map(toPayment);
    },
    async markPaymentsChecked(references, at) {
      if (references.length === 0) return;
      await query('UPDATE payments SET checked_at = $1 WHERE reference = ANY($2) AND NOT final', [at, [...references]]);
    },
    async countOpenPaymentsExpiredBefore(expiredBefore) {
      const { rows } = await query<{ n: number }>('SELECT count(*) AS n FROM payments WHERE NOT final AND expires_at < $1', [expiredBefore]);
      return rows[0]!.n;
    },
    async createCheckout(checkout) {
      const inserted = (
        await query<CheckoutRow>(
          `INSERT INTO checkouts (id, order_id, value_cents, description, customer_name, customer_document, callback, payment_reference, renewals_used, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, 0, $8) ON CONFLICT (order_id) DO NOTHING RETURNING *`,
          [checkout.id, checkout.orderId, checkout.valueCents, checkout.description, checkout.name, checkout.document, checkout.callback, checkout.createdAt],
        )
      ).rows[0];
      if (inserted) return { checkout: toCheckout(inserted), created: true };
      const row = (await query<CheckoutRow>('SELECT * FROM checkouts WHERE order_id = $1', [checkout.orderId])).rows[0]!;
      return { checkout: toCheckout(row), created: false };
    },
    async getCheckout(id) {
      const row = (await query<CheckoutRow>('SELECT * FROM checkouts WHERE id = $1', [id])).rows[0];
      return row ? toCheckout(row) : null;
    },
    async checkoutPayments(checkoutId) {
      return (await query<PaymentRow>('SELECT * FROM payments WHERE checkout_id = $1 ORDER BY created_at, seq', [checkoutId])).rows.map(toPayment);
    },
    async attachPayment(checkoutId, payment, renewalsUsed, expected, paidStatus) {
      const attached = await tx(async (q) => {
        await insertPayment(q, payment);
        // Compare-and-set: under READ COMMITTED a second issuer waits for the first's row lock, then
        // finds the current payment changed and sets nothing. Nor while a payment of the checkout is
        // recorded paid (a late payment of the old code, recorded by another instance, wins).
        const { rowCount } = await q(
          `UPDATE checkouts SET payment_reference = $1, renewals_used = $2 WHERE id = $3 AND payment_reference IS NOT DISTINCT FROM $4
             AND NOT EXISTS (SELECT 1 FROM payments WHERE checkout_id = $3 AND final AND partner_status = $5)`,
          [payment.reference, renewalsUsed, checkoutId, expected, paidStatus ?? null],
        );
        return rowCount === 1;
      });
      cache.remember({ ...payment });
      return attached;
    },
    async flagAmountMismatch(reference, reportedCents, at, outcomeOf) {
      const result = await tx(async (q) => {
        const row = (
          await q<PaymentRow>(
            'UPDATE payments SET reported_value_cents = $2 WHERE reference = $1 AND NOT final AND reported_value_cents IS DISTINCT FROM $2 RETURNING *',
            [reference, reportedCents],
          )
        ).rows[0];
        if (!row) return { row: null, outcome: null };
        await announce(q, reference);
        const orderId = row.checkout_id
          ? ((await q<{ order_id: string }>('SELECT order_id FROM checkouts WHERE id = $1', [row.checkout_id])).rows[0]?.order_id ?? null)
          : null;
        return { row, outcome: await addToOutbox(q, outcomeOf(toPayment(row), orderId), reference, at) };
      });
      if (!result.row) return { changed: false, outcome: null };
      cache.remember(toPayment(result.row));
      return { changed: true, outcome: result.outcome };
    },
    async addCheckoutEvent(event, reference, at) {
      const { rowCount } = await query(
        'INSERT INTO outbox (event_id, type, reference, body, created_at, next_attempt_at) VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (event_id) DO NOTHING',
        [event.id, event.type, reference, JSON.stringify(event), at],
      );
      return rowCount === 1;
    },
    tokens,
    webhookEvents: {
      async add(rawBody, receivedAt) {
        const { rows } = await query<{ id: number }>(
          'INSERT INTO webhook_events (raw_body, received_at, claimed_by, claimed_until) VALUES ($1, $2, $3, $4) RETURNING id',
          [rawBody, receivedAt, instanceId, receivedAt + claimMs],
        );
        return rows[0]!.id;
      },
      async addRejected(rawBody, receivedAt, result) {
        const { rows } = await query<{ id: number }>(
          'INSERT INTO webhook_events (raw_body, received_at, processed_at, result) VALUES ($1, $2, $2, $3) RETURNING id',
          [rawBody, receivedAt, result],
        );
        return rows[0]!.id;
      },
      async markProcessed(id, processedAt, result) {
        await query('UPDATE webhook_events SET processed_at = $1, result = $2 WHERE id = $3', [processedAt, result ?? null, id]);
      },
      async unprocessed(limit) {
        const { rows } = await query<{ id: number; raw_body: string; received_at: number; processed_at: number | null }>(
          'SELECT id, raw_body, received_at, processed_at FROM webhook_events WHERE processed_at IS NULL ORDER BY received_at, id LIMIT $1',
          [limit],
        );
        return rows.map(eventRecord);
      },
      async claimUnprocessed(limit, now) {
        const { rows } = await query<{ id: number; raw_body: string; received_at: number; processed_at: number | null }>(
          `UPDATE webhook_events w SET claimed_by = $1, claimed_until = $2::bigint + $3::bigint
           FROM (SELECT id FROM webhook_events
                 WHERE processed_at IS NULL AND (claimed_by IS NULL OR claimed_by = $1 OR claimed_until <= $2)
                 ORDER BY received_at, id LIMIT $4 FOR UPDATE SKIP LOCKED) pick
           WHERE w.id = pick.id
           RETURNING w.id, w.raw_body, w.received_at, w.processed_at, w.authenticated`,
          [instanceId, now, claimMs, limit],
        );
        return rows.map(eventRecord).sort((a, b) => a.receivedAt - b.receivedAt || a.id - b.id);
      },
      async countUnprocessed(upTo = Number.MAX_SAFE_INTEGER) {
        const { rows } = await query<{ n: number }>('SELECT count(*) AS n FROM (SELECT 1 FROM webhook_events WHERE processed_at IS NULL LIMIT $1) t', [
          Math.min(upTo, Number.MAX_SAFE_INTEGER),
        ]);
        return rows[0]!.n;
      },
      async listByResult(results, limit) {
        if (results.length === 0) return [];
        const { rows } = await query<{ id: number; raw_body: string; received_at: number; processed_at: number | null; result: string | null }>(
          'SELECT id, raw_body, received_at, processed_at, result FROM webhook_events WHERE result = ANY($1) ORDER BY received_at DESC, id DESC LIMIT $2',
          [[...results], limit],
        );
        return rows.map(eventRecord);
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
    },
    disputes: {
      async open(input, outcomeOf) {
        return tx(async (q) => {
          // The payment's row lock: disputes of one payment (from any instance) are opened one at a time.
          const row = (
            await q<PaymentRow & { order_id: string | null }>(
              'SELECT p.*, c.order_id AS order_id FROM payments p LEFT JOIN checkouts c ON c.id = p.checkout_id WHERE p.reference = $1 FOR UPDATE OF p',
              [input.reference],
            )
          ).rows[0];
          if (!row || !row.final) return null;
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
          const outcome = outcomeOf(dispute, toPayment(row), row.order_id, ordinal);
          await addToOutbox(q, outcome, input.reference, input.at);
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
    },
    transfers: {
      async track(transfer) {
        await trackTransfer(query, transfer);
        return toTransfer((await query<TransferRow>('SELECT * FROM transfers WHERE reference = $1', [transfer.reference])).rows[0]!);
      },
      async get(reference) {
        const row = (await query<TransferRow>('SELECT * FROM transfers WHERE reference = $1', [reference])).rows[0];
        return row ? toTransfer(row) : null;
      },
      async updateStatus(reference, partnerStatus, final, updatedAt, outcomeOf) {
        return tx(async (q) => {
          const { rowCount } = await q('UPDATE transfers SET partner_status = $2, final = $3, updated_at = $4 WHERE reference = $1 AND NOT final', [
            reference,
            partnerStatus,
            final,
            updatedAt,
          ]);
          if (rowCount !== 1 || !final) return { changed: rowCount === 1, outcome: null };
          return { changed: true, outcome: await transferOutcome(q, reference, updatedAt, outcomeOf) };
        });
      },
      async nonFinal(limit) {
        return (await query<TransferRow>('SELECT * FROM transfers WHERE NOT final ORDER BY created_at LIMIT $1', [limit])).rows.map(toTransfer);
      },
      async due(now, limit, everyMs) {
        const { rows } = await query<TransferRow>(
          `SELECT * FROM (SELECT t.*, GREATEST(t.updated_at, COALESCE(t.checked_at, 0)) + $3::bigint AS due_at FROM transfers t WHERE NOT t.final) due
           WHERE due_at <= $1::bigint ORDER BY due_at, created_at, reference LIMIT $2`,
          [now, limit, everyMs],
        );
        return rows.map(toTransfer);
      },
      async markChecked(references, at) {
        if (references.length === 0) return;
        await query('UPDATE transfers SET checked_at = $1 WHERE reference = ANY($2) AND NOT final', [at, [...references]]);
      },
    },
    payouts: {
      async create(payout, paidStatus) {
        return tx(async (q) => {
          const byKey = async () => (await q<PayoutRow>('SELECT * FROM payouts WHERE idempotency_key = $1', [payout.idempotencyKey])).rows[0];
          const existing = await byKey();
          if (existing) return { payout: toPayout(existing), created: false };
          let valueCents = payout.valueCents;
          if (payout.checkoutId !== null) {
            // The checkout's row lock: refunds of one checkout (from any instance) are decided one at a time.
            await q('SELECT id FROM checkouts WHERE id = $1 FOR UPDATE', [payout.checkoutId]);
            const again = await byKey();
            if (again) return { payout: toPayout(again), created: false };
            const paid = (
              await q<{ cents: number }>(
                'SELECT COALESCE(SUM(value_cents), 0) AS cents FROM payments WHERE checkout_id = $1 AND final AND partner_status = $2',
                [payout.checkoutId, paidStatus],
              )
            ).rows[0]!.cents;
            if (paid === 0) return { problem: 'not_paid' as const, refundableCents: 0 };
            // Every refund that took, or may have taken, money: all but those refused and canceled.
            const refunded = (
              await q<{ cents: number }>(
                `SELECT COALESCE(SUM(value_cents), 0) AS cents FROM payouts WHERE checkout_id = $1 AND state NOT IN ('refused', 'canceled')`,
                [payout.checkoutId],
              )
            ).rows[0]!.cents;
            const left = paid - refunded;
            if (valueCents === 0) valueCents = left;
            if (valueCents <= 0 || valueCents > left) return { problem: 'exceeds' as const, refundableCents: Math.max(0, left) };
          }
          const inserted = (
            await q<PayoutRow>(
              `INSERT INTO payouts (id, idempotency_key, request_hash, kind, checkout_id, value_cents, pix_key, pix_key_type, customer_document, merchant_reference, transaction_id, state, created_at, updated_at)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (idempotency_key) DO NOTHING RETURNING *`,
              [
                payout.id,
                payout.idempotencyKey,
                payout.requestHash,
                payout.kind,
                payout.checkoutId,
                valueCents,
                payout.pixKey,
                payout.pixKeyType,
                payout.customerDocument,
                payout.merchantReference,
                payout.transactionId,
                payout.state,
                payout.createdAt,
                payout.updatedAt,
              ],
            )
          ).rows[0];
          // Another instance stored the same key meanwhile: its payout is the one.
          if (!inserted) return { payout: toPayout((await byKey())!), created: false };
          return { payout: toPayout(inserted), created: true };
        });
      },
      async get(id) {
        const row = await payoutById(query, id);
        return row ? toPayout(row) : null;
      },
      async markSent(id, transfer, outcomeOf) {
        return tx(async (q) => {
          const { reference, updatedAt: at } = transfer;
          await q(`UPDATE payouts SET state = 'pending', reference = $1, customer_document = NULL, updated_at = $2 WHERE id = $3 AND state = 'sending'`, [
            reference,
            at,
            id,
          ]);
          const transactionId = (await payoutById(q, id))?.transaction_id ?? transfer.transactionId ?? null;
          await trackTransfer(q, { ...transfer, updatedAt: at, transactionId });
          // Locked: a webhook making it final now (another transaction) is waited for and seen.
          const followed = (await q<TransferRow>('SELECT * FROM transfers WHERE reference = $1 FOR UPDATE', [reference])).rows[0]!;
          // Its webhook came before its answer: the outcome is already known (its event is not written twice, but
          // written again naming this payout when it was written without it and is not delivered yet).
          const outcome = followed.final ? await transferOutcome(q, reference, at, outcomeOf, true) : null;
          return { payout: toPayout((await payoutById(q, id))!), outcome };
        });
      },
      async markRefused(id, reason, message, at, outcomeOf) {
        return tx(async (q) => {
          await q(
            `UPDATE payouts SET state = 'refused', reason = $1, reason_message = $2, customer_document = NULL, updated_at = $3 WHERE id = $4 AND state = 'sending'`,
            [reason, message, at, id],
          );
          const row = (
            await q<PayoutRow & { order_id: string | null }>(
              'SELECT p.*, c.order_id AS order_id FROM payouts p LEFT JOIN checkouts c ON c.id = p.checkout_id WHERE p.id = $1',
              [id],
            )
          ).rows[0]!;
          const outcome = outcomeOf(toPayout(row), row.order_id);
          await addToOutbox(q, outcome, row.id, at);
          return { payout: toPayout(row), outcome };
        });
      },
      async markUnknown(id, at) {
        await query(
          `UPDATE payouts SET state = 'unknown', reason = 'answer_lost', customer_document = NULL, updated_at = $1 WHERE id = $2 AND state = 'sending'`,
          [at, id],
        );
        return toPayout((await payoutById(query, id))!);
      },
      async discard(id) {
        await query(`DELETE FROM payouts WHERE id = $1 AND state = 'sending'`, [id]);
      },
      async list({ states, before, limit }) {
        const where: string[] = [];
        const args: unknown[] = [];
        if (states && states.length > 0) {
          args.push([...states]);
          where.push(`state = ANY($${args.length})`);
        }
        if (before !== undefined) {
          args.push(before);
          where.push(`seq < $${args.length}`);
        }
        args.push(limit);
        const { rows } = await query<PayoutRow>(
          `SELECT * FROM payouts ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT $${args.length}`,
          args,
        );
        return { payouts: rows.map(toPayout) };
      },
      async ofCheckout(checkoutId) {
        return (await query<PayoutRow>('SELECT * FROM payouts WHERE checkout_id = $1 ORDER BY seq', [checkoutId])).rows.map(toPayout);
      },
      async expireSending(before, at) {
        // Each row goes to one instance: the UPDATE's row locks decide who reports it.
        const { rows } = await query<PayoutRow>(
          `UPDATE payouts SET state = 'unknown', reason = 'answer_lost', customer_document = NULL, updated_at = $2
           WHERE state = 'sending' AND created_at < $1 RETURNING *`,
          [before, at],
        );
        return rows.map(toPayout).sort((a, b) => a.seq - b.seq);
      },
    },
    outbox: {
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
        const { rows } = await query<{ delivery_id: number; at: number; status: number | null; error: string | null; duration_ms: number }>(
          'SELECT * FROM delivery_attempts WHERE delivery_id = $1 ORDER BY id',
          [id],
        );
        return rows.map((r) => ({ deliveryId: r.delivery_id, at: r.at, status: r.status, error: r.error, durationMs: r.duration_ms }));
      },
      async replay(target, now) {
        // A replay opens a new retry window: created_at is when the current delivery window started.
        const { rowCount } =
          target === 'failed'
            ? await query(`UPDATE outbox SET state = 'pending', next_attempt_at = $1, created_at = $1 WHERE state = 'failed'`, [now])
            : await query(`UPDATE outbox SET state = 'pending', next_attempt_at = $1, created_at = $1 WHERE id = $2`, [now, target]);
        return rowCount ?? 0;
      },
    },
    async ping() {
      if (closing) throw new StoreError('the store is closed');
      // Real rows, as SQLite's readiness reads: a broken table shows here rather than in a customer's request.
      await query('SELECT reference, partner_status FROM payments ORDER BY seq DESC LIMIT 1');
      await query('SELECT id, state FROM outbox ORDER BY id DESC LIMIT 1');
    },
    async close() {
      if (closing) return;
      closing = true;
      clearTimeout(retry);
      clearInterval(sweeper);
      // Graceful: what this instance held is the others' at once, not when its claims run out.
      await query('DELETE FROM leases WHERE holder = $1', [instanceId]).catch(() => undefined);
      await query('UPDATE webhook_events SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = $1 AND processed_at IS NULL', [instanceId]).catch(
        () => undefined,
      );
      const client = listener;
      listener = null;
      listening = false;
      await client?.end().catch(() => undefined);
      await pool.end().catch(() => undefined);
    },
  };
  return { store, listen };
}
