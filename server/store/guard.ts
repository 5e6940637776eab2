/**
 * Every method of a store, its groups' included, with the driver's errors turned into StoreErrors
 * (sentences an operator can act on) by the store's own `toError`; whatever it passes on is unchanged.
 */
export function guarded<T extends object>(target: T, toError: (error: unknown) => Error): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(target)) {
    if (typeof value === 'function') {
      const method = value as (...args: unknown[]) => unknown;
      out[key] = (...args: unknown[]) => {
        try {
          const result = method.apply(target, args);
          return result instanceof Promise ? result.catch((error: unknown) => Promise.reject(toError(error))) : result;
        } catch (error) {
          throw toError(error);
        }
      };
    } else out[key] = value !== null && typeof value === 'object' && !Array.isArray(value) ? guarded(value, toError) : value;
  }
  return out as T;
}
