/**
 * Postgres's deadlines: the ones every pooled session gets at connect (`queryDeadlines`), and how a
 * request's statements are kept within its store budget (`requestDeadlines`, store/deadline.ts). The
 * numbers are the caller's (the settings): the store reads no configuration.
 */
import type pg from 'pg';
import { budgetSpent, LEAST_STATEMENT_MS, storeTimeLeft } from '../deadline.ts';

/** What the caller decides (PIX_DATABASE_STATEMENT_TIMEOUT_MS, and config/tunables.ts `database`). */
export interface PostgresDeadlines {
  /** The longest one statement may run outside a request; a request's statements share one deadline of this length. */
  statementTimeoutMs: number;
  /** The longest a statement waits for a lock (`lock_timeout`; never above the statement's). */
  lockTimeoutMs: number;
  /** A session left idle inside a transaction this long is ended by Postgres (`idle_in_transaction_session_timeout`). */
  idleInTransactionMs: number;
  /** How long past a statement's deadline the driver waits for the server's answer (`query_timeout`: the network, not the query). */
  answerMarginMs: number;
}

/** The pool's connection deadlines: how long to wait for a free connection, or for a new one. */
export const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Deadlines on every pooled connection, sent as session settings at connect, so no query hangs for
 * as long as a table stays locked: `statement_timeout` (the statement), `lock_timeout` (its wait for a
 * lock, sooner, so the log names the lock), `idle_in_transaction_session_timeout` (a transaction
 * left open), and the driver's `query_timeout` a little after the statement's, for a server that does
 * not answer at all. The migrations lift the first two for themselves (they wait for each other).
 */
export function queryDeadlines({ statementTimeoutMs, lockTimeoutMs, idleInTransactionMs, answerMarginMs }: PostgresDeadlines) {
  return {
    statement_timeout: statementTimeoutMs,
    lock_timeout: Math.min(lockTimeoutMs, statementTimeoutMs),
    idle_in_transaction_session_timeout: idleInTransactionMs,
    query_timeout: statementTimeoutMs + answerMarginMs,
  };
}

export type Deadlines = ReturnType<typeof queryDeadlines>;

/** pg's own error for an answer that did not come within the query's query_timeout. */
export function isReadTimeout(error: unknown): boolean {
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
