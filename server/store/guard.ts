/**
 * Every method of a store, its groups' included, with the driver's errors turned into StoreErrors
 * (sentences an operator can act on) by the store's own `toError`; whatever it passes on is unchanged.
 * The StoreErrors it makes are counted per store (`storeErrorCount`, the proxy's metrics). Inside a
 * request, each call's time counts against the request's store budget (deadline.ts), and a call
 * made when none is left fails at once with a StoreError.
 */
import { enterStore } from './deadline.ts';
import { StoreError } from './store.ts';

/** Methods answered from memory (PaymentStore.peekPayment). */
const IN_MEMORY = new Set(['peek']);

/** StoreErrors made per guarded store, by the store (its top-level object). */
const counts = new WeakMap<object, { errors: number }>();

/** How many StoreErrors the store's operations have failed with so far; undefined for a store not made by `guarded`. */
export function storeErrorCount(store: object): number | undefined {
  return counts.get(store)?.errors;
}

export function guarded<T extends object>(target: T, toError: (error: unknown) => Error, count: { errors: number } = { errors: 0 }): T {
  const out: Record<string, unknown> = {};
  const converted = (error: unknown): Error => {
    const made = toError(error);
    if (made instanceof StoreError) count.errors++;
    return made;
  };
  for (const [key, value] of Object.entries(target)) {
    if (typeof value === 'function') {
      const method = value as (...args: unknown[]) => unknown;
      out[key] = (...args: unknown[]) => {
        if (!IN_MEMORY.has(key)) {
          // Every other method answers a promise: a spent deadline rejects it, never throws. A read from
          // memory never waits: it is answered whatever the deadline.
          try {
            enterStore();
          } catch (error) {
            return Promise.reject(converted(error));
          }
        }
        try {
          const result = method.apply(target, args);
          return result instanceof Promise ? result.catch((error: unknown) => Promise.reject(converted(error))) : result;
        } catch (error) {
          throw converted(error);
        }
      };
    } else out[key] = value !== null && typeof value === 'object' && !Array.isArray(value) ? guarded(value, toError, count) : value;
  }
  counts.set(out, count);
  return out as T;
}
