/**
 * One deadline per request for the store: a request's statements, lock waits and waits for a
 * pooled connection end by PIX_DATABASE_STATEMENT_TIMEOUT_MS (5 s) after it began, all together, not
 * each on its own; several 3 s lock waits in a row made one request wait 13 s.
 *
 * The HTTP stack opens a budget per request (`withStoreBudget`); each dialect's context refuses a
 * statement or transaction once it is spent (`enterStore`; sqlite/context.ts, postgres/context.ts) and
 * derives its deadlines from what is left (`storeTimeLeft`):
 * Postgres sends `statement_timeout` and `lock_timeout` per statement and stops waiting for an answer (a
 * frozen server) at the same time, SQLite waits for a lock (`busy_timeout`) no longer. After each
 * partner answer the store gets at least a second (`allowStoreAtLeast`, services.ts): a slow partner
 * must not leave a payment it created without the time to record it.
 *
 * Work outside a request (the loops, the command line) has no budget: each statement keeps the store's
 * own deadlines. Nor does work a request leaves running after its answer (a status stream, what the
 * intake processes after storing): the budget closes with the answer.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { StoreError } from './store.ts';

interface Budget {
  /** The whole budget, ms. */
  readonly totalMs: number;
  /** When it ends (performance.now()); pushed later only by `allowStoreAtLeast`. */
  endsAt: number;
  /** False once the request has been answered. */
  open: boolean;
}

const budgets = new AsyncLocalStorage<Budget>();

/** The least time worth sending a statement with: below it the budget counts as spent. */
export const LEAST_STATEMENT_MS = 20;

/** Runs `work` (a request's handling) with `totalMs` for its store operations; the budget closes when it settles. */
export async function withStoreBudget<T>(totalMs: number, work: () => Promise<T>): Promise<T> {
  const budget: Budget = { totalMs, endsAt: performance.now() + totalMs, open: true };
  try {
    return await budgets.run(budget, work);
  } finally {
    budget.open = false;
  }
}

/** Runs `work` outside any request's budget (detached work a request starts: it must not inherit the request's deadline). */
export function withoutStoreBudget<T>(work: () => T): T {
  return budgets.exit(work);
}

function current(): Budget | undefined {
  const budget = budgets.getStore();
  return budget?.open ? budget : undefined;
}

/** What is left of the current request's store budget, ms; undefined outside a request (the store's own deadlines apply). */
export function storeTimeLeft(): number | undefined {
  const budget = current();
  return budget ? budget.endsAt - performance.now() : undefined;
}

/**
 * After the partner answered (a payment it created, a status it confirmed): the store gets at least
 * `ms` to record it, whatever the partner's wait took of the budget. A slow partner must not leave
 * what it did unrecorded for want of time; a store that cannot record it within `ms` is failing.
 */
export function allowStoreAtLeast(ms: number): void {
  const budget = current();
  if (budget) budget.endsAt = Math.max(budget.endsAt, performance.now() + ms);
}

/** The error of a request whose store budget ran out: the store did not answer in time (503 store_unavailable). */
export function budgetSpent(): StoreError {
  const budget = budgets.getStore();
  return new StoreError(
    `the store did not complete this request's statements within its ${budget?.totalMs ?? '?'} ms (PIX_DATABASE_STATEMENT_TIMEOUT_MS: one deadline for all its statements and waits): a lock, a slow or unresponsive database`,
    'request_deadline',
  );
}

/** Before a store operation of the current request, if any: throws `budgetSpent()` when nothing is left. */
export function enterStore(): void {
  const left = storeTimeLeft();
  if (left !== undefined && left < LEAST_STATEMENT_MS) throw budgetSpent();
}
