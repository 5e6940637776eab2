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
import { DEFAULTS } from '../../config/parse.ts';
import type { TokenStore } from '../../partner/token-store.ts';
import { postgresCheckouts } from '../checkouts/postgres.ts';
import { postgresDisputes } from '../disputes/postgres.ts';
import { guarded } from '../guard.ts';
import { postgresIntents } from '../intents/postgres.ts';
import { announcer, postgresCluster } from '../leases/postgres.ts';
import { postgresWebhookEvents } from '../notifications/postgres.ts';
import { postgresOutbox } from '../outbox/postgres.ts';
import { postgresPayments } from '../payments/postgres.ts';
import { postgresPayouts, postgresTransfers } from '../payouts/postgres.ts';
import { postgresPersonalData } from '../personal-data/postgres.ts';
import { budgetSpent, LEAST_STATEMENT_MS, storeTimeLeft } from '../deadline.ts';
import { RecordCache } from '../record-cache.ts';
import { StoreError, type Store } from '../store.ts';
import type { PostgresContext, Query } from './context.ts';
import type { StoreOutage } from '../outage.ts';
import { migrate } from './migrations.ts';
import { postgresConnection, PostgresTlsError, type PostgresConnection } from './tls.ts';
import { postgresReports } from '../reports/postgres.ts';

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
  /** The longest one statement may run (PIX_DATABASE_STATEMENT_TIMEOUT_MS; default DEFAULTS.databaseStatementTimeoutMs). */
  statementTimeoutMs?: number;
  /** With it, a lost connection (the pool's or the listening one) is told to it instead of onProblem (outage.ts). */
  outage?: StoreOutage | undefined;
}

/** The pool's connection deadlines: how long to wait for a free connection, or for a new one. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Deadlines on every pooled connection, sent as session settings at connect, so no query hangs for
 * as long as a table stays locked: `statement_timeout` (the statement), `lock_timeout` (its wait for a
 * lock, sooner, so the log names the lock), `idle_in_transaction_session_timeout` (a transaction
 * left open), and the driver's `query_timeout` a little after the statement's, for a server that does
 * not answer at all. The migrations lift the first two for themselves (they wait for each other).
 */
export function queryDeadlines(statementTimeoutMs = DEFAULTS.databaseStatementTimeoutMs) {
  const { lockTimeoutMs, idleInTransactionMs, answerMarginMs } = DEFAULTS.database;
  return {
    statement_timeout: statementTimeoutMs,
    lock_timeout: Math.min(lockTimeoutMs, statementTimeoutMs),
    idle_in_transaction_session_timeout: idleInTransactionMs,
    query_timeout: statementTimeoutMs + answerMarginMs,
  };
}

type Deadlines = ReturnType<typeof queryDeadlines>;

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

/**
 * Why a statement did not complete, in words that name the real cause, when it is a deadline or the
 * pool: Postgres's codes (57014 a statement timeout or a cancel, 55P03 a lock timeout, 25P03 an idle
 * transaction ended) and the driver's own messages (no answer in time, no free connection).
 */
export function deadlineCause(
  error: Error,
  deadlines: Deadlines,
  pool?: { totalCount: number; options: { max?: number } },
): { code: string; cause: string } | null {
  const code = (error as { code?: unknown }).code;
  // Within a request, the statement had what was left of the request's budget (requestDeadlines).
  const budget = (error as { deadlineMs?: number }).deadlineMs;
  const within = budget === undefined ? '' : ` (the request's store budget left it ${budget} ms)`;
  if (code === '57014') {
    return /statement timeout/i.test(error.message)
      ? {
          code,
          cause: `statement timeout after ${budget === undefined ? deadlines.statement_timeout : Math.min(budget, deadlines.statement_timeout)} ms (statement_timeout)${within}: a slow query, or one waiting on a lock`,
        }
      : { code, cause: `statement canceled by the server (${error.message})` };
  }
  if (code === '55P03')
    return {
      code,
      cause: `lock timeout after ${budget === undefined ? deadlines.lock_timeout : Math.min(budget, deadlines.lock_timeout)} ms (lock_timeout)${within}: another session holds a lock this statement needs`,
    };
  if (code === '25P03')
    return { code, cause: `transaction ended after ${deadlines.idle_in_transaction_session_timeout} ms idle (idle_in_transaction_session_timeout)` };
  if (/Query read timeout/.test(error.message))
    return { code: 'query_timeout', cause: `no answer from the server within ${deadlines.query_timeout} ms (query_timeout)` };
  if (/timeout exceeded when trying to connect/i.test(error.message) && pool && pool.totalCount >= (pool.options.max ?? 10)) {
    return {
      code: 'pool_exhausted',
      cause: `no free connection within ${CONNECT_TIMEOUT_MS} ms: all ${pool.totalCount} of the pool's connections stayed busy (slow statements, locks; PIX_DATABASE_POOL_SIZE)`,
    };
  }
  return null;
}

/** The URL and TLS options for pg (tls.ts); a URL whose TLS parameters cannot be used stops the start with a sentence. */
function connectionOf(url: string): PostgresConnection {
  try {
    return postgresConnection(url);
  } catch (error) {
    if (error instanceof PostgresTlsError) throw new StoreError(error.message, 'tls_settings');
    throw error;
  }
}

/** Postgres's answer in words an operator can act on; a query's own error (a constraint) is passed on as it is. */
function storeError(error: unknown, where: string, deadlines: Deadlines = queryDeadlines(), pool?: pg.Pool): Error {
  if (!(error instanceof Error)) return new Error(String(error));
  if (error instanceof StoreError) return error;
  const deadline = deadlineCause(error, deadlines, pool);
  if (deadline) return new StoreError(`the database at ${where} did not complete a statement: ${deadline.cause}`, deadline.code);
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

/**
 * Connects, brings the schema up to date (once across instances: an advisory lock), starts listening
 * for other instances' changes, and answers the store. Throws a StoreError naming what to do when the
 * database cannot be used.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const where = describeDatabase(options.url);
  const deadlines = queryDeadlines(options.statementTimeoutMs);
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
    const store = opened(pool, options, where);
    await store.listen();
    return guarded(store.store, (error) => storeError(error, where, deadlines, pool));
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw storeError(error, where, deadlines, pool);
  }
}

function opened(pool: pg.Pool, options: PostgresStoreOptions, where: string): { store: Store; listen: () => Promise<void> } {
  const cache = new RecordCache(options.cacheSize ?? 10_000);
  const instanceId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const deadlines = queryDeadlines(options.statementTimeoutMs);
  const budgeted = requestDeadlines(pool, deadlines);

  /** One statement on a pooled connection, within what is left of the request's store budget, if any. */
  const query: Query = async (text, values) => {
    const client = await budgeted.acquire();
    let broken: Error | undefined;
    try {
      await budgeted.fitSession(client);
      return await budgeted.run(client, text, values);
    } catch (error) {
      if (isReadTimeout(error)) broken = error as Error;
      throw error;
    } finally {
      client.release(broken);
    }
  };

  /** One transaction; a serialization failure or deadlock is tried again (the work is pure until COMMIT). */
  async function tx<T>(work: (q: Query) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await budgeted.acquire();
      let broken: Error | undefined;
      try {
        await budgeted.begin(client);
        const result = await work((text, values) => budgeted.run(client, text, values, true));
        await budgeted.run(client, 'COMMIT');
        return result;
      } catch (error) {
        // A connection whose answer never came (a frozen server) is dropped, not rolled back: a
        // ROLLBACK would wait behind the statement still under way. The server ends the transaction
        // when the connection closes, or its statement_timeout when it does not notice.
        if (isReadTimeout(error)) broken = error as Error;
        else await client.query('ROLLBACK').catch((rollback: unknown) => (broken = rollback as Error));
        const code = (error as { code?: string }).code;
        if (attempt < 5 && (code === '40001' || code === '40P01')) continue;
        throw error;
      } finally {
        client.release(broken);
      }
    }
  }

  const context: PostgresContext = { query, tx, cache, claimMs: options.claimMs ?? 30_000, instanceId, announce: announcer(instanceId) };
  const changes = postgresCluster(context, { url: options.url, types, where, cache, onProblem: options.onProblem, outage: options.outage });
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
    async ping() {
      if (closing) throw new StoreError('the store is closed');
      // Real rows, as SQLite's readiness reads: a broken table shows here rather than in a customer's request.
      await query('SELECT reference, partner_status FROM payments ORDER BY seq DESC LIMIT 1');
      await query('SELECT id, state FROM outbox ORDER BY id DESC LIMIT 1');
    },
    async close() {
      if (closing) return;
      closing = true;
      // Graceful: what this instance held (leases, claims) is the others' at once, not when its claims run out.
      await changes.stop();
      await query('UPDATE webhook_events SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = $1 AND processed_at IS NULL', [instanceId]).catch(
        () => undefined,
      );
      await pool.end().catch(() => undefined);
    },
  };
  return { store, listen: changes.listen };
}

/** pg's own error for an answer that did not come within the query's query_timeout. */
function isReadTimeout(error: unknown): boolean {
  return error instanceof Error && (error.message === 'Query read timeout' || (error as { readTimeout?: boolean }).readTimeout === true);
}

/** A pooled connection, and the deadlines its session was last given for a request (none: the pool's own). */
type FittedClient = pg.PoolClient & { [FITTED]?: { statement: number } | undefined; [HEARD]?: boolean };
const FITTED = Symbol('fitted to a request');
const HEARD = Symbol('error heard');

/**
 * How the Postgres store keeps a request's statements within its store budget (store/deadline.ts):
 * the wait for a pooled connection, and each statement's `statement_timeout` and `lock_timeout`,
 * from what is left of it, and the driver's wait for the answer (`query_timeout`) too, for a server
 * that does not answer at all. A session's statement deadline is kept while it fits what is left
 * (at most SLACK_MS above it, at most FIT_MS below it: most statements of most requests cost no extra
 * round trip); otherwise the session is given one that fits (SET, or SET LOCAL within the BEGIN of a
 * transaction), and a connection given one far below its own gets its own back (RESET) before work
 * outside any budget uses it.
 */
export function requestDeadlines(pool: pg.Pool, deadlines: Deadlines) {
  /** A SET is not worth a round trip for less than this. */
  const SLACK_MS = 100;
  /** A session's deadline this much below what is left still serves (a statement cut this much early at worst). */
  const FIT_MS = 1000;
  const sessionStatement = (client: FittedClient) => client[FITTED]?.statement ?? deadlines.statement_timeout;
  /** Whether the session's own deadline is too far below the pool's for work outside a request. */
  const tooShortForLoops = (client: FittedClient) => sessionStatement(client) < deadlines.statement_timeout - FIT_MS;
  /** The driver waits this long past a statement's own deadline for the server's answer (the cancel's). */
  const ANSWER_MS = 250;
  const setting = (local: boolean, left: number) => {
    const statement = Math.max(1, Math.floor(left));
    // The lock wait ends a little first, so the error names the lock rather than the statement.
    const lock = Math.max(1, Math.min(deadlines.lock_timeout, statement - Math.min(50, Math.floor(statement / 10))));
    const scope = local ? 'SET LOCAL' : 'SET';
    return { text: `${scope} statement_timeout = ${statement}; ${scope} lock_timeout = ${lock}`, statement, lock };
  };
  /** Statement and lock deadlines set for the transaction under way on each connection. */
  const inTx = new WeakMap<pg.PoolClient, { statement: number; at: number }>();

  /**
   * A connection that breaks while checked out between two statements (the server stopped) emits
   * 'error' with no pool listener on it: the next statement fails with the cause, and the process
   * must not die of the event. Heard once per connection.
   */
  const heard = (client: FittedClient): FittedClient => {
    if (!client[HEARD]) {
      client[HEARD] = true;
      client.on('error', () => undefined);
    }
    return client;
  };

  /** What is left of the budget, or the error saying it is spent. */
  const leftNow = (): number | undefined => {
    const left = storeTimeLeft();
    if (left !== undefined && left < LEAST_STATEMENT_MS) throw budgetSpent();
    return left;
  };

  /** One statement whose answer is waited for no longer than `left` (and the cancel's margin). */
  async function send<R extends pg.QueryResultRow>(client: pg.PoolClient, text: string, left: number, values?: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await client.query<R>({ text, values, query_timeout: Math.max(1, Math.floor(left + ANSWER_MS)) } as pg.QueryConfig);
    } catch (error) {
      // The request's budget, not the pool's deadlines, ended it: the message says so.
      if (isReadTimeout(error)) throw Object.assign(budgetSpent(), { readTimeout: true });
      if (error instanceof Error) Object.assign(error, { deadlineMs: Math.floor(left) });
      throw error;
    }
  }

  return {
    /** A pooled connection, waited for no longer than what is left. */
    async acquire(): Promise<FittedClient> {
      const left = leftNow();
      if (left === undefined) return heard(await pool.connect());
      const pending = pool.connect().then(heard);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(budgetSpent()), left);
      });
      try {
        return await Promise.race([pending, late]);
      } catch (error) {
        // Given back as soon as it comes.
        pending.then(
          (client) => client.release(),
          () => undefined,
        );
        throw error;
      } finally {
        clearTimeout(timer);
      }
    },
    /** Before one statement outside a transaction: the session's deadlines fit what is left. */
    async fitSession(client: FittedClient): Promise<void> {
      const left = leftNow();
      if (left === undefined) {
        if (tooShortForLoops(client)) {
          await client.query('RESET statement_timeout; RESET lock_timeout');
          client[FITTED] = undefined;
        }
        return;
      }
      const session = sessionStatement(client);
      if (session <= left + SLACK_MS && session >= left - FIT_MS) return;
      const set = setting(false, left);
      await send(client, set.text, left);
      client[FITTED] = { statement: set.statement };
    },
    /** BEGIN, with deadlines that fit what is left (one round trip, as a bare BEGIN). */
    async begin(client: FittedClient): Promise<void> {
      const left = leftNow();
      if (left === undefined) {
        inTx.delete(client);
        const reset = tooShortForLoops(client);
        await client.query(reset ? 'RESET statement_timeout; RESET lock_timeout; BEGIN' : 'BEGIN');
        if (reset) client[FITTED] = undefined;
        return;
      }
      const set = setting(true, left);
      await send(client, `BEGIN; ${set.text}`, left);
      inTx.set(client, { statement: set.statement, at: performance.now() });
    },
    /** One statement within what is left; inside a transaction, its deadlines shortened when what is left has. */
    async run<R extends pg.QueryResultRow>(client: FittedClient, text: string, values?: unknown[], transaction = false): Promise<pg.QueryResult<R>> {
      const left = leftNow();
      if (left === undefined) return client.query<R>(text, values);
      if (transaction) {
        const given = inTx.get(client);
        if (given && given.statement - (performance.now() - given.at) > left + SLACK_MS) {
          const set = setting(true, left);
          await send(client, set.text, left);
          inTx.set(client, { statement: set.statement, at: performance.now() });
        }
      }
      return send<R>(client, text, leftNow()!, values);
    },
  };
}
