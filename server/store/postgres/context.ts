/**
 * What every Postgres aggregate (payments/postgres.ts, ...) is built from: the pool's statements and
 * what the instance shares.
 *
 * `query` and `tx` do what the store promises around each statement and transaction: they enter the
 * request's store deadline (deadline.ts; a call made when none is left fails at once), keep the
 * statements within what is left of it (deadlines.ts), and turn the driver's errors into StoreErrors
 * (errors.ts, counted per store). A query added to an aggregate has nothing else to do. Work from
 * memory (the record cache) touches none of this and never waits.
 */
import type pg from 'pg';
import { enterStore } from '../deadline.ts';
import type { StoreErrors } from '../errors.ts';
import type { RecordCache } from '../record-cache.ts';
import { isReadTimeout, requestDeadlines, type Deadlines } from './deadlines.ts';

export type Query = <R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>;

/** One transaction; a serialization failure or deadlock is tried again (the work is pure until COMMIT). */
export type Transaction = <T>(work: (q: Query) => Promise<T>) => Promise<T>;

export interface PostgresContext {
  /** One statement on any pooled connection. */
  query: Query;
  tx: Transaction;
  /** Payment records in front of the database. */
  cache: RecordCache;
  /** How long a claim on a notification or a delivery lasts. */
  claimMs: number;
  /** This instance's name: its claims and leases are held under it. */
  instanceId: string;
  /** Tells the other instances, on commit, that this payment changed (NOTIFY). */
  announce: (q: Query, reference: string) => Promise<unknown>;
}

export interface PostgresStatements {
  query: Query;
  tx: Transaction;
  /** Runs `work` as one operation of the store: for checks that are not statements (a closed store). */
  operation: <T>(work: () => Promise<T>) => Promise<T>;
  /**
   * A statement whose failure is nobody's (the sweep of run-out leases, what an instance gives up as
   * it closes): within the deadlines, its error neither converted nor counted.
   */
  housekeeping: Query;
}

export function postgresStatements(pool: pg.Pool, deadlines: Deadlines, errors: StoreErrors): PostgresStatements {
  const budgeted = requestDeadlines(pool, deadlines);

  /** One statement on a pooled connection, within what is left of the request's store budget, if any. */
  const statement: Query = async (text, values) => {
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

  async function transaction<T>(work: (q: Query) => Promise<T>): Promise<T> {
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

  async function operation<T>(work: () => Promise<T>): Promise<T> {
    try {
      enterStore();
      return await work();
    } catch (error) {
      throw errors.convert(error);
    }
  }

  return {
    query: <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => operation(() => statement<R>(text, values)),
    tx: (work) => operation(() => transaction(work)),
    operation,
    housekeeping: statement,
  };
}
