/** What every SQLite aggregate (payments/sqlite.ts, ...) is built from: one connection and what its store object shares. */
import type Database from 'libsql';
import type { RecordCache } from '../record-cache.ts';

export interface SqliteContext {
  db: Database.Database;
  /** Payment records in front of the file. */
  cache: RecordCache;
  /** How long a claim on a notification or a delivery lasts. */
  claimMs: number;
  /** Forgets the cache when another connection wrote to the file (sqlite-store.ts). */
  noticeOtherWriters: () => void;
}

/**
 * The one holder of every claim: one process serves a SQLite file, so the claims a killed process
 * left are this process's own after a restart, and taken up at once.
 */
export const HOLDER = 'local';

/** A flag as SQLite keeps it. */
export const flag = (value: boolean): 0 | 1 => (value ? 1 : 0);
