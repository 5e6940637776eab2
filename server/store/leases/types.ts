/** What a store shared by several proxy instances adds: leases, and the changes other instances make. */

/** A record another instance changed, heard through the shared store. `resync`: changes may have been missed (the listener reconnected): re-read what matters. */
export type StoreChange = { kind: 'payment'; reference: string } | { kind: 'resync' };

/**
 * What a store shared by several proxy instances adds. Absent on a one-instance store (SQLite), where
 * every lease is this process's and every change is made here.
 */
export interface Cluster {
  /** This process's name in the cluster: leases and claims are held under it. */
  readonly instanceId: string;
  /**
   * Takes the named lease for `ttlMs` of the database's clock (the instances' clocks may differ), or
   * renews it when this instance holds it; false while another instance holds it.
   */
  lease(name: string, ttlMs: number): Promise<boolean>;
  /** Gives a lease up before it runs out. */
  release(name: string): Promise<void>;
  /** Calls `listener` for each payment another instance changed (LISTEN/NOTIFY); answers the unsubscribe. */
  onChange(listener: (change: StoreChange) => void): () => void;
  /** Whether other instances' changes are heard now (the listening connection is up). */
  listening(): boolean;
}
