/**
 * What every SQLite aggregate (payments/sqlite.ts, ...) is built from: the database as the store
 * touches it, and what its store object shares.
 *
 * Every statement and transaction goes through `sqliteDatabase`, which does what the store promises
 * around each of them: it enters the request's store deadline (deadline.ts; a call made when none is
 * left fails at once), fits SQLite's lock wait to what is left, turns the driver's errors into
 * StoreErrors (counted, errors.ts), and counts the writes other store objects on the file look for
 * (sqlite-store.ts). A statement counts as a write unless it only reads: the statement says it (it
 * answers rows and has no RETURNING), not a list of method names, so a new read is never taken for a
 * write. Work from memory (the record cache) touches none of this and never waits.
 */
import type Database from 'libsql';
import { enterStore } from '../deadline.ts';
import type { StoreErrors } from '../errors.ts';
import type { RecordCache } from '../record-cache.ts';

/** A prepared statement: libsql's run, get and all, guarded. */
export interface SqliteStatement {
  run(...params: unknown[]): Database.RunResult;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

/** A transaction: called as is (BEGIN), or `immediate` (BEGIN IMMEDIATE: the write lock at once). */
export interface SqliteTransaction<A extends unknown[], R> {
  (...args: A): R;
  immediate(...args: A): R;
}

/** The database as the aggregates see it. */
export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  transaction<A extends unknown[], R>(work: (...args: A) => R): SqliteTransaction<A, R>;
  /** Runs `work` as one operation of the store (the statements it runs are part of it): for checks that are not statements (a closed store). */
  operation<T>(work: () => T): T;
}

export interface SqliteContext {
  db: SqliteDatabase;
  /** Payment records in front of the file. */
  cache: RecordCache;
  /** How long a claim on a notification or a delivery lasts. */
  claimMs: number;
  /** Forgets the cache when another connection wrote to the file (sqlite-store.ts). */
  noticeOtherWriters: () => void;
}

/** A statement that only reads: it answers rows, and not as an INSERT, UPDATE or DELETE ... RETURNING does. */
export function onlyReads(statement: { reader: boolean }, sql: string): boolean {
  return statement.reader && !/\bRETURNING\b/i.test(sql);
}

export interface SqliteGuard {
  /** The dialect's error conversion and the store's count (errors.ts). */
  errors: StoreErrors;
  /** Writes made on the file through this process's store objects. */
  writes: { count: number };
  /** Before each operation outside a transaction: fits the lock wait (busy_timeout) to the request's deadline. */
  before: () => void;
}

export function sqliteDatabase(db: Database.Database, { errors, writes, before }: SqliteGuard): SqliteDatabase {
  // The driver is synchronous: an operation runs to its end before another starts, so one depth
  // tells a transaction's statements (guarded by their transaction) from the others.
  let depth = 0;
  const operation = <T>(work: () => T): T => {
    if (depth > 0) return work();
    depth++;
    try {
      enterStore();
      before();
      return work();
    } catch (error) {
      throw errors.convert(error);
    } finally {
      depth--;
    }
  };
  return {
    operation,
    prepare(sql) {
      let statement: Database.Statement<unknown[]>;
      try {
        statement = db.prepare<unknown[]>(sql);
      } catch (error) {
        throw errors.convert(error);
      }
      // A write is counted once the statement ran (a spent deadline stops it before).
      const run = onlyReads(statement, sql)
        ? operation
        : <T>(work: () => T): T =>
            operation(() => {
              try {
                return work();
              } finally {
                writes.count++;
              }
            });
      return {
        run: (...params) => run(() => statement.run(...params)),
        get: (...params) => run(() => statement.get(...params)),
        all: (...params) => run(() => statement.all(...params)),
      };
    },
    transaction<A extends unknown[], R>(work: (...args: A) => R): SqliteTransaction<A, R> {
      const transaction = db.transaction(work);
      const guarded = (...args: A): R => operation(() => transaction(...args));
      return Object.assign(guarded, { immediate: (...args: A): R => operation(() => transaction.immediate(...args)) });
    },
  };
}

/**
 * The one holder of every claim: one process serves a SQLite file, so the claims a killed process
 * left are this process's own after a restart, and taken up at once.
 */
export const HOLDER = 'local';

/** A flag as SQLite keeps it. */
export const flag = (value: boolean): 0 | 1 => (value ? 1 : 0);
