/** Postgres's errors in words an operator can act on (the store's `toError`), naming the deadline or the pool when one ended a statement. */
import type pg from 'pg';
import { StoreError } from '../store.ts';
import { CONNECT_TIMEOUT_MS, type Deadlines } from './deadlines.ts';

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

/** Postgres's answer in words an operator can act on; a query's own error (a constraint) is passed on as it is. */
export function storeError(error: unknown, where: string, deadlines: Deadlines, pool?: pg.Pool): Error {
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
