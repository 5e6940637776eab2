/**
 * A few workers taking items off one list in order: at most `concurrency` tasks at once, none
 * started once `stopping()` says so (shutting down). Resolves to how many items were started; the
 * rest were not touched. The reconciler's reads and the merchant deliveries run this way.
 */
export async function runPool<T>(items: readonly T[], concurrency: number, task: (item: T) => Promise<void>, stopping: () => boolean): Promise<number> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && !stopping()) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return next;
}
