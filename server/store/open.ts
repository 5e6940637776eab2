/**
 * Which store the proxy and the command line open: the one place a store is chosen. With a
 * `databaseUrl` (PIX_DATABASE_URL, postgres://...), Postgres, shared by every instance given the same
 * URL; without one, SQLite in `dataDir` (PIX_DATA_DIR), for one instance.
 */
import type { StoreOutage } from './outage.ts';
import type { PostgresDeadlines } from './postgres/deadlines.ts';
import { openSqliteStore } from './sqlite/sqlite-store.ts';
import type { Store } from './store.ts';

export type StoreOptions = CommonStoreOptions &
  (
    | { databaseUrl?: undefined }
    | {
        /** postgres:// or postgresql://: the shared store of several instances. */
        databaseUrl: string | undefined;
        /**
         * Postgres's deadlines, from the settings (the store reads none): the longest one statement may
         * run outside a request (PIX_DATABASE_STATEMENT_TIMEOUT_MS), a request's statements sharing one
         * deadline of that length (deadline.ts), and the lock, idle and answer deadlines beside it.
         * SQLite waits for a lock 5 s (busy_timeout), within a request no longer than its deadline leaves.
         */
        deadlines: PostgresDeadlines;
      }
  );

interface CommonStoreOptions {
  /** The directory of the SQLite file (created if missing), or `:memory:`; unused with a databaseUrl. */
  dataDir: string;
  /** Records kept in memory in front of the store (0 for none: a short-lived command). */
  cacheSize?: number;
  /**
   * How long a claim on a notification or a delivery lasts before another instance may take it up
   * (default DEFAULT_CLAIM_MS): longer than the work it covers (one partner call, one delivery).
   */
  claimMs?: number;
  /** Connections in the Postgres pool (default 10). */
  poolSize?: number;
  /** Where the Postgres store logs a lost listening connection (default: nowhere). */
  onProblem?: (message: string, error?: unknown) => void;
  /** Where the Postgres store reports lost connections instead, one line per outage (outage.ts). */
  outage?: StoreOutage | undefined;
}

/** Claims last 30 s unless told: three times the default partner and delivery timeouts (10 s). */
export const DEFAULT_CLAIM_MS = 30_000;

export async function openStore(options: StoreOptions): Promise<Store> {
  if (options.databaseUrl) {
    if (!('deadlines' in options)) throw new TypeError('openStore: a databaseUrl needs its deadlines');
    const { openPostgresStore } = await import('./postgres/postgres-store.ts');
    return openPostgresStore({ ...options, url: options.databaseUrl });
  }
  return openSqliteStore(options);
}
