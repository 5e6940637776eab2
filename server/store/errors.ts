/**
 * The StoreErrors a store fails with, counted per store (the proxy's pix_checkout_store_errors_total;
 * readiness checks again after one). Each dialect's context converts a driver's error where the
 * database is touched (sqlite/context.ts, postgres/context.ts) and counts it here, so a query added
 * to an aggregate is converted and counted with nothing else to do.
 */
import { StoreError } from './store.ts';

export interface StoreErrors {
  /**
   * The error as the store answers it: the dialect's `toError` (a driver's code becomes a sentence an
   * operator can act on; any other error passes unchanged). A StoreError is counted once, however
   * many layers (a statement, its transaction) it passes through.
   */
  convert(error: unknown): Error;
  /** How many StoreErrors so far. */
  readonly count: number;
}

export function storeErrors(toError: (error: unknown) => Error): StoreErrors {
  const counted = new WeakSet<Error>();
  let count = 0;
  return {
    convert(error) {
      if (error instanceof Error && counted.has(error)) return error;
      const made = toError(error);
      if (made instanceof StoreError && !counted.has(made)) {
        counted.add(made);
        count++;
      }
      return made;
    },
    get count() {
      return count;
    },
  };
}

const counts = new WeakMap<object, StoreErrors>();

/** Names `errors` as the count of `store` (what storeErrorCount answers for it); answers the store. */
export function countingErrors<T extends object>(store: T, errors: StoreErrors): T {
  counts.set(store, errors);
  return store;
}

/** How many StoreErrors the store's operations have failed with so far; undefined for a store that does not count them. */
export function storeErrorCount(store: object): number | undefined {
  return counts.get(store)?.count;
}
