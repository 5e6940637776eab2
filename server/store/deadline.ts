/**
 * One store budget per request (issue 40): the time a request may spend waiting on the store, all its
 * statements, lock waits and waits for a pooled connection together (PIX_DATABASE_STATEMENT_TIMEOUT_MS,
 * 5 s), not each statement on its own; several 3 s lock waits in a row made one request wait 13 s.
 *
 * The HTTP stack opens a budget per request (`withStoreBudget`); the guarded store (guard.ts) counts the
 * time its operations take against it (the union of their intervals: reads run side by side are counted
 * once); each store derives its deadlines from what is left (`storeTimeLeft`): Postgres sends
 * `statement_timeout` and `lock_timeout` per statement and stops waiting for an answer (a frozen server)
 * at the same time, SQLite waits for a lock (`busy_timeout`) no longer. The partner's time is not
 * counted: a slow partner must not leave a payment it created without the time to record it.
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
  /** Time spent in store operations that have ended, ms. */
  spentMs: number;
  /** Store operations under way now, and since when (performance.now()) at least one has been. */
  active: number;
  activeSince: number;
  /** False once the request has been answered. */
  open: boolean;
}

const budgets = new AsyncLocalStorage<Budget>();

/** The least time worth sending a statement with: below it the budget counts as spent. */
export const LEAST_STATEMENT_MS = 20;

/** Runs `work` (a request's handling) with `totalMs` for its store operations; the budget closes when it settles. */
export async function withStoreBudget<T>(totalMs: number, work: () => Promise<T>): Promise<T> {
  const budget: Budget = { totalMs, spentMs: 0, active: 0, activeSince: 0, open: true };
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
  if (!budget) return undefined;
  const running = budget.active > 0 ? performance.now() - budget.activeSince : 0;
  return budget.totalMs - budget.spentMs - running;
}

/** The error of a request whose store budget ran out: the store did not answer in time (503 store_unavailable). */
export function budgetSpent(): StoreError {
  const budget = budgets.getStore();
  return new StoreError(
    `the store did not complete this request's statements within ${budget?.totalMs ?? '?'} ms (PIX_DATABASE_STATEMENT_TIMEOUT_MS, all its statements and waits together): a lock, a slow or unresponsive database`,
    'request_deadline',
  );
}

/**
 * Counts a store operation against the current budget, if any: call `enter()` when it starts and the
 * returned function when it ends. Throws `budgetSpent()` when nothing is left before it starts.
 */
export function enterStore(): (() => void) | null {
  const budget = current();
  if (!budget) return null;
  const now = performance.now();
  const left = budget.totalMs - budget.spentMs - (budget.active > 0 ? now - budget.activeSince : 0);
  if (left < LEAST_STATEMENT_MS) throw budgetSpent();
  if (budget.active++ === 0) budget.activeSince = now;
  let done = false;
  return () => {
    if (done) return;
    done = true;
    if (--budget.active === 0) budget.spentMs += performance.now() - budget.activeSince;
  };
}
