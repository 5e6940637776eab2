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
import type { TokenStore } from '../../partner/token-store.ts';
import { postgresCheckouts } from '../checkouts/postgres.ts';
import { postgresDisputes } from '../disputes/postgres.ts';
import { countingErrors, storeErrors, type StoreErrors } from '../errors.ts';
import { postgresIntents } from '../intents/postgres.ts';
import { announcer, postgresCluster } from '../leases/postgres.ts';
import { postgresWebhookEvents } from '../notifications/postgres.ts';
import { postgresOutbox } from '../outbox/postgres.ts';
import { postgresPayments } from '../payments/postgres.ts';
import { postgresPayouts, postgresTransfers } from '../payouts/postgres.ts';
import { postgresPersonalData } from '../personal-data/postgres.ts';
import { RecordCache } from '../record-cache.ts';
import { StoreError, type Store } from '../store.ts';
import { postgresStatements, type PostgresContext } from './context.ts';
import { CONNECT_TIMEOUT_MS, queryDeadlines, type Deadlines, type PostgresDeadlines } from './deadlines.ts';
import { describeDatabase, storeError } from './errors.ts';
import type { StoreOutage } from '../outage.ts';
import { migrate } from './migrations.ts';
import { postgresConnection, PostgresTlsError, type PostgresConnection } from './tls.ts';
import { postgresReports } from '../reports/postgres.ts';
import { postgresWidgetFiles } from '../widget-files/postgres.ts';

export { CHANGES_CHANNEL } from '../leases/postgres.ts';

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
  /** Postgres's deadlines (the caller's settings: PIX_DATABASE_STATEMENT_TIMEOUT_MS and the tunables beside it). */
  deadlines: PostgresDeadlines;
  /** With it, a lost connection (the pool's or the listening one) is told to it instead of onProblem (outage.ts). */
  outage?: StoreOutage | undefined;
}

/** BIGINT (epoch ms, ids, counts) and NUMERIC (sums) as numbers: every value here is far below 2^53. */
const INT8 = 20;
const NUMERIC = 1700;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
    oid === INT8 || oid === NUMERIC ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** The URL and TLS options for pg (tls.ts); a URL whose TLS parameters cannot be used stops the start with a sentence. */
function connectionOf(url: string): PostgresConnection {
  try {
    return postgresConnection(url);
  } catch (error) {
    if (error instanceof PostgresTlsError) throw new StoreError(error.message, 'tls_settings');
    throw error;
  }
}

/**
 * Connects, brings the schema up to date (once across instances: an advisory lock), starts listening
 * for other instances' changes, and answers the store. Throws a StoreError naming what to do when the
 * database cannot be used.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const where = describeDatabase(options.url);
  const deadlines = queryDeadlines(options.deadlines);
  const pool = new pg.Pool({ ...connectionOf(options.url), max: options.poolSize ?? 10, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, types, ...deadlines });
  // An idle connection that breaks is dropped by the pool; the next query opens another.
  pool.on('error', (error) => (options.outage ? options.outage.failed('pool', error) : options.onProblem?.(`a database connection broke (${where})`, error)));
  try {
    // On a connection of its own, without the pool's deadlines (the server's and the driver's
    // query_timeout): instances wait for each other's migration (an advisory lock), and building an
    // index on a large table may take minutes.
    const client = new pg.Client({ ...connectionOf(options.url), connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    client.on('error', () => undefined); // a break mid-migration rejects the query in flight
    await client.connect();
    try {
      await client.query('SET statement_timeout = 0; SET lock_timeout = 0');
      await migrate(client);
    } finally {
      await client.end().catch(() => undefined);
    }
    const errors = storeErrors((error) => storeError(error, where, deadlines, pool));
    const store = opened(pool, options, where, deadlines, errors);
    await store.listen();
    return countingErrors(store.store, errors);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw storeError(error, where, deadlines, pool);
  }
}

function opened(
  pool: pg.Pool,
  options: PostgresStoreOptions,
  where: string,
  deadlines: Deadlines,
  errors: StoreErrors,
): { store: Store; listen: () => Promise<void> } {
  const cache = new RecordCache(options.cacheSize ?? 10_000);
  const instanceId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const { query, tx, operation, housekeeping } = postgresStatements(pool, deadlines, errors);

  const context: PostgresContext = { query, tx, cache, claimMs: options.claimMs ?? 30_000, instanceId, announce: announcer(instanceId) };
  const changes = postgresCluster(context, { url: options.url, types, where, cache, housekeeping, onProblem: options.onProblem, outage: options.outage });
  let closing = false;

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
    cluster: changes.cluster,
    payments: postgresPayments(context),
    checkouts: postgresCheckouts(context),
    tokens,
    webhookEvents: postgresWebhookEvents(context),
    disputes: postgresDisputes(context),
    intents: postgresIntents(context),
    transfers: postgresTransfers(context),
    payouts: postgresPayouts(context),
    outbox: postgresOutbox(context),
    personalData: postgresPersonalData(context),
    reports: postgresReports(context),
    widgetFiles: postgresWidgetFiles(context),
    async ping() {
      await operation(async () => {
        if (closing) throw new StoreError('the store is closed');
        // Real rows, as SQLite's readiness reads: a broken table shows here rather than in a customer's request.
        await query('SELECT reference, partner_status FROM payments ORDER BY seq DESC LIMIT 1');
        await query('SELECT id, state FROM outbox ORDER BY id DESC LIMIT 1');
      });
    },
    async close() {
      if (closing) return;
      closing = true;
      // Graceful: what this instance held (leases, claims) is the others' at once, not when its claims run out.
      await changes.stop();
      await housekeeping('UPDATE webhook_events SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = $1 AND processed_at IS NULL', [
        instanceId,
      ]).catch(() => undefined);
      await pool.end().catch(() => undefined);
    },
  };
  return { store, listen: changes.listen };
}
