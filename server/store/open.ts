/**
 * Which store the proxy and the command line open: the one place a new store is chosen (SQLite in
 * PIX_DATA_DIR today; another implementation of store.ts goes beside sqlite/ and is picked here).
 */
import { openSqliteStore } from './sqlite/sqlite-store.ts';
import type { Store } from './store.ts';

export interface StoreOptions {
  /** The directory of the data (created if missing), or `:memory:`. */
  dataDir: string;
  /** Records kept in memory in front of the store (0 for none: a short-lived command). */
  cacheSize?: number;
}

export function openStore(options: StoreOptions): Store {
  return openSqliteStore(options);
}
