/**
 * One kind of event, told to whoever subscribed: how a service built earlier tells one built later
 * (the webhooks' health tells the watches its pace changed; a read tells the watches a payment became
 * final), so services that need each other are built in order, with no variable assigned late.
 */
export class Signal<T = void> {
  private readonly listeners = new Set<(value: T) => unknown>();

  /**
   * Tells every listener now, in the order they subscribed (a listener's throw reaches the caller);
   * the promise settles once those that answered a promise have.
   */
  emit(value: T): Promise<void> {
    const pending: unknown[] = [];
    for (const listener of this.listeners) pending.push(listener(value));
    return Promise.all(pending).then(() => undefined);
  }

  /** Adds a listener; the returned function removes it. */
  subscribe(listener: (value: T) => unknown): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
